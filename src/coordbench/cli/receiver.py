"""``coordbench receiver``: the trace backend on its own (OTLP/HTTP, OTLP/gRPC, read API)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from coordbench.cli.serve import EvaluateOption, EvaluationsStoreOption, PeerOption, StoreOption, serve
from coordbench.errors import ConfigurationError

__all__ = ["receiver"]


def receiver(
    host: Annotated[
        str | None, typer.Option(help="Interface to bind [env COORDBENCH_HOST, default 127.0.0.1].")
    ] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port [env COORDBENCH_PORT, default 4318].")] = None,
    grpc_port: Annotated[
        int | None, typer.Option(help="OTLP/gRPC port, 0 for any free port [env COORDBENCH_GRPC_PORT, default 4317].")
    ] = None,
    no_grpc: Annotated[bool, typer.Option("--no-grpc", help="Do not serve OTLP/gRPC.")] = False,
    data_dir: Annotated[
        Path | None, typer.Option(help="Keep spans durably here (SQLite) [env COORDBENCH_DATA_DIR; default: memory].")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help="Require 'Authorization: Bearer TOKEN' on every route but /healthz [env COORDBENCH_TOKEN]. "
            "Visible in the process list: prefer --token-file or the variable.",
            show_default=False,
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            help="Read the token from this file's first line [env COORDBENCH_TOKEN_FILE].", show_default=False
        ),
    ] = None,
    evaluate: EvaluateOption = None,
    store: StoreOption = None,
    peer: PeerOption = None,
    evaluations_store: EvaluationsStoreOption = None,
) -> None:
    """Serve the trace backend: POST /v1/traces (OTLP/HTTP), OTLP/gRPC, GET /v1/traces[/{id}], GET /v1/stats, /metrics.

    With --evaluate, every trace with A2A calls is evaluated once complete (GET /v1/evaluations).
    """
    from coordbench.server.app import create_app, tune_gc_for_ingest
    from coordbench.settings import auth_note, load_settings

    console = Console(stderr=True)
    try:
        settings = load_settings(
            host=host,
            port=port,
            grpc_port=grpc_port,
            data_dir=data_dir,
            token=token,
            token_file=token_file,
            evaluate=evaluate,
            store=store,
            peers=peer or None,
            evaluations_store=evaluations_store,
        )
        if no_grpc:
            settings = settings.model_copy(update={"grpc_port": None})
    except ConfigurationError as exc:
        console.print(f"[red]error:[/red] {exc.message}")
        raise typer.Exit(2) from exc
    tune_gc_for_ingest()
    grpc = "off" if settings.grpc_port is None else str(settings.grpc_port)
    storage = f"durable in {settings.data_dir}" if settings.data_dir else "in memory"
    if settings.store is not None:
        from coordbench.clickhouse import parse_store_url

        storage = f"in ClickHouse at {parse_store_url(settings.store).shown}"
    online = ", online evaluation on (GET /v1/evaluations)" if settings.evaluate else ""
    serve(
        console,
        lambda: create_app(settings),
        host=settings.host,
        port=settings.port,
        other_ports=[] if settings.grpc_port is None else [("OTLP/gRPC", settings.grpc_port)],
        banner=f"coordbench receiver: http://{settings.host}:{settings.port}/v1/traces, OTLP/gRPC port {grpc}, "
        f"spans {storage}{online}, {auth_note(settings)}",
    )
