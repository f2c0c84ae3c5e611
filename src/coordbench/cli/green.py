"""``coordbench green``: serve the assessor (A2A, OTLP receiver, Step reports, peers) on one port."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from coordbench.cli.serve import EvaluateOption, EvaluationsStoreOption, PeerOption, StoreOption, serve
from coordbench.errors import ConfigurationError

__all__ = ["green"]


def green(
    host: Annotated[
        str | None, typer.Option(help="Interface to bind [env COORDBENCH_HOST, default 127.0.0.1].")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port for everything [env COORDBENCH_PORT, default 9009].")] = None,
    card_url: Annotated[
        str | None, typer.Option(help="URL the agent card advertises [default http://HOST:PORT/].")
    ] = None,
    name: Annotated[str | None, typer.Option(help="The assessor's agent name [default coordbench-green].")] = None,
    output_dir: Annotated[
        Path | None, typer.Option(help="Where results.json is written [env COORDBENCH_OUTPUT_DIR, default output].")
    ] = None,
    grpc_port: Annotated[int | None, typer.Option(help="Also serve OTLP/gRPC on this port [default: off].")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Keep spans durably here (SQLite) [default: memory].")] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help="Require 'Authorization: Bearer TOKEN' on the trace, registry, report and metrics routes "
            "[env COORDBENCH_TOKEN]. Visible in the process list: prefer --token-file or the variable.",
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
    """Serve the green assessor: send it {"participants": {role: url}, "config": {...}} over A2A."""
    from coordbench.green import create_green_app, load_green_settings
    from coordbench.server.app import tune_gc_for_ingest
    from coordbench.settings import auth_note

    console = Console(stderr=True)
    try:
        settings = load_green_settings(
            host=host,
            port=port,
            card_url=card_url,
            name=name,
            output_dir=output_dir,
            grpc_port=grpc_port,
            data_dir=data_dir,
            token=token,
            token_file=token_file,
            evaluate=evaluate,
            store=store,
            peers=peer or None,
            evaluations_store=evaluations_store,
        )
    except ConfigurationError as exc:
        console.print(f"[red]error:[/red] {exc.message}")
        raise typer.Exit(2) from exc
    tune_gc_for_ingest()
    base = settings.card_url or f"http://{settings.host}:{settings.port}/"
    serve(
        console,
        lambda: create_green_app(settings),
        host=settings.host,
        port=settings.port,
        other_ports=[] if settings.grpc_port is None else [("OTLP/gRPC", settings.grpc_port)],
        banner=f"coordbench green '{settings.name}': A2A at {base}, OTLP/HTTP at {base.rstrip('/')}/v1/traces, "
        f"results in {settings.output_dir or '(not written)'}, {auth_note(settings)}",
        timeout_keep_alive=300,
    )
