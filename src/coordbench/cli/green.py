"""``coordbench green``: serve the assessor (A2A, OTLP receiver, Step reports, peers) on one port."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from coordbench.cli.output import fail
from coordbench.cli.serve import BACKEND_OPTIONS, SettingOption, serve, with_setting_options
from coordbench.errors import ConfigurationError
from coordbench.green.settings import GreenSettings

__all__ = ["green"]

GREEN_OPTIONS = (
    SettingOption("host"),
    SettingOption("port"),
    SettingOption("card_url"),
    SettingOption("name"),
    SettingOption("output_dir"),
    SettingOption("grpc_port"),
    *BACKEND_OPTIONS,
)
"""The green's settings on its command line (the rest are read from ``COORDBENCH_*`` only)."""


@with_setting_options(GreenSettings, GREEN_OPTIONS)
def green(**given: Any) -> None:
    """Serve the green assessor: send it {"participants": {role: url}, "config": {...}} over A2A."""
    from coordbench.green import create_green_app, load_green_settings
    from coordbench.settings import auth_note

    console = Console(stderr=True)
    try:
        settings = load_green_settings(**given)
    except ConfigurationError as exc:
        fail(exc.message, console=console)
    base = settings.card_url or f"http://{settings.host}:{settings.port}/"
    serve(
        console,
        settings,
        lambda: create_green_app(settings),
        banner=lambda: (
            f"coordbench green '{settings.name}': A2A at {base}, OTLP/HTTP at {base.rstrip('/')}/v1/traces, "
            f"results in {settings.output_dir or '(not written)'}, live UI at {base.rstrip('/')}/ui/, "
            f"{auth_note(settings)}"
        ),
        timeout_keep_alive=300,
    )
