"""The green assessor's settings: the trace backend's plus its own, read without importing the server.

The command line builds its options from these fields; keeping them apart from the A2A and
FastAPI machinery lets every ``coordbench`` command start without loading the assessor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr

from coordbench.settings import Settings, load_settings

__all__ = ["DEFAULT_NAME", "GreenSettings", "load_green_settings"]

DEFAULT_NAME = "coordbench-green"


class GreenSettings(Settings):
    """Assessor settings (``COORDBENCH_*``); the trace backend's settings plus these."""

    port: int = Field(9009, ge=0, le=65535, description="Port for A2A, OTLP/HTTP and the other routes.")
    token: SecretStr | None = Field(
        None,
        description=(
            "Require 'Authorization: Bearer <token>' on every route but the A2A ones (the agent card, and "
            "JSON-RPC and REST messages: the AgentBeats client sends no token) and /healthz. An empty value is "
            "refused: leave it unset to run without authentication."
        ),
    )
    grpc_port: int | None = Field(None, ge=0, le=65535, description="OTLP/gRPC port (default: off).")
    name: str = Field(DEFAULT_NAME, min_length=1, max_length=200, description="The assessor's agent name.")
    card_url: str | None = Field(None, description="URL the agent card advertises (default http://host:port/).")
    output_dir: Path | None = Field(Path("output"), description="Where results.json is written.")
    heartbeat: float = Field(20.0, gt=0, le=30, description="Seconds between 'working' updates at most.")
    capture_content: bool = Field(True, description="Record the assessor's own messages on its spans.")
    trace_self: bool = Field(True, description="Instrument A2A in this process and keep the assessor's spans.")
    export_self: bool = Field(
        True,
        description=(
            "Also export the assessor's own spans where the OTEL_* variables say (Jaeger, a collector); never "
            "to this assessor itself, which keeps them already."
        ),
    )


def load_green_settings(**overrides: Any) -> GreenSettings:
    """Settings from ``COORDBENCH_*`` and explicit ``overrides`` (``None`` ignored).

    Raises:
        ConfigurationError: If a value is invalid (the message names the variable).
    """
    return load_settings(GreenSettings, **overrides)
