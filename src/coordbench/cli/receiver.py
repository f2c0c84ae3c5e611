"""``coordbench receiver``: the trace backend on its own (OTLP/HTTP, OTLP/gRPC, read API)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console

from coordbench.cli.output import fail
from coordbench.cli.serve import BACKEND_OPTIONS, SettingOption, serve, with_setting_options
from coordbench.errors import ConfigurationError
from coordbench.settings import Settings, auth_note

__all__ = ["receiver"]

RECEIVER_OPTIONS = (SettingOption("host"), SettingOption("port"), SettingOption("grpc_port"), *BACKEND_OPTIONS)
"""The receiver's settings on its command line (the rest are read from ``COORDBENCH_*`` only)."""


@with_setting_options(Settings, RECEIVER_OPTIONS)
def receiver(
    no_grpc: Annotated[bool, typer.Option("--no-grpc", help="Do not serve OTLP/gRPC.")] = False, **given: Any
) -> None:
    """Serve the trace backend: POST /v1/traces (OTLP/HTTP), OTLP/gRPC, GET /v1/traces[/{id}], GET /v1/stats, /metrics.

    With --evaluate, every trace with A2A calls is evaluated once complete (GET /v1/evaluations).
    """
    from coordbench.server.app import create_app
    from coordbench.settings import load_settings

    console = Console(stderr=True)
    try:
        settings = load_settings(**given)
        if no_grpc:
            settings = settings.model_copy(update={"grpc_port": None})
    except ConfigurationError as exc:
        fail(exc.message, console=console)
    serve(console, settings, lambda: create_app(settings), banner=lambda: _banner(settings))


def _banner(settings: Settings) -> str:
    grpc = "off" if settings.grpc_port is None else str(settings.grpc_port)
    storage = f"durable in {settings.data_dir}" if settings.data_dir else "in memory"
    if settings.store is not None:
        from coordbench.clickhouse import parse_store_url

        storage = f"in ClickHouse at {parse_store_url(settings.store).shown}"
    online = ", online evaluation on (GET /v1/evaluations)" if settings.evaluate else ""
    return (
        f"coordbench receiver: http://{settings.host}:{settings.port}/v1/traces, OTLP/gRPC port {grpc}, "
        f"spans {storage}{online}, live UI at http://{settings.host}:{settings.port}/ui/, {auth_note(settings)}"
    )
