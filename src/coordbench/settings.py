"""One ``Settings`` object for the trace backend, read from ``COORDBENCH_*`` variables.

Bad values fail at start-up with a :class:`~coordbench.errors.ConfigurationError` that names
the variable, rather than surfacing later as a confusing runtime error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar, cast, overload

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from coordbench.errors import ConfigurationError
from coordbench.redaction import register_secret

__all__ = ["ENV_PREFIX", "Settings", "auth_note", "load_settings", "read_token_file"]


def read_token_file(path: Path) -> str:
    """The token a file holds: its first line, stripped.

    A token in a file stays out of the process list (``--token``) and the environment.

    Raises:
        ValueError: If the file cannot be read or holds no token (the message says which).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the token file {str(path)!r}: {exc}") from None
    token = text.splitlines()[0].strip() if text.strip() else ""
    if not token:
        raise ValueError(f"the token file {str(path)!r} is empty")
    return token


ENV_PREFIX = "COORDBENCH_"


class Settings(BaseSettings):
    """Trace backend settings (environment variables ``COORDBENCH_<FIELD>``)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    host: str = Field("127.0.0.1", description="Interface the HTTP (and gRPC) receivers bind to.")
    port: int = Field(4318, ge=0, le=65535, description="HTTP port: OTLP/HTTP and the read API.")
    grpc_port: int | None = Field(
        4317, ge=0, le=65535, description="OTLP/gRPC port; unset (None) to disable, 0 for any free port."
    )
    data_dir: Path | None = Field(None, description="Keep spans durably in this directory (default: memory only).")
    store: str | None = Field(
        None,
        description=(
            "Keep spans in ClickHouse, in the OpenTelemetry Collector exporter's tables: clickhouse://host:8123/otel "
            "(a server; password in CLICKHOUSE_PASSWORD) or chdb:///path (the engine in this process). "
            "Options: ?table=otel_traces&create=true&shard=0/2 (default: memory, or --data-dir)."
        ),
    )
    fsync: bool = Field(False, description="Durable mode also survives power loss (fsync per batch).")
    token: SecretStr | None = Field(
        None,
        description=(
            "Require 'Authorization: Bearer <token>' on every endpoint but /healthz. An empty value is refused: "
            "leave it unset to run without authentication."
        ),
    )
    token_file: Path | None = Field(
        None,
        description="Read the token from this file's first line (kept out of the process list and the environment).",
    )
    max_body_bytes: int = Field(
        64 * 1024 * 1024, ge=1024, description="Largest export request, before and after decompression."
    )
    max_request_bytes: int = Field(
        4 * 1024 * 1024,
        ge=1024,
        description=(
            "Largest request body on every route but the OTLP export (A2A messages, registrations, Step "
            "reports): bytes are counted as they arrive and the request gets 413 past the cap."
        ),
    )
    max_spans: int = Field(1_000_000, ge=1, description="Most spans held in memory.")
    max_traces: int = Field(100_000, ge=1, description="Most traces held in memory.")
    max_bytes: int = Field(
        1 << 30,
        ge=1024 * 1024,
        description="Most memory the held spans may take, approximately (large spans reach it before max_spans).",
    )
    evict_after: float = Field(60.0, ge=0, description="Seconds without growth after which a trace may be evicted.")
    decode_in_thread_bytes: int = Field(
        1024 * 1024,
        ge=0,
        description=(
            "Bodies weighing more than this are decoded on a worker thread, off the event loop (a "
            "compressed byte and a JSON byte count 4, a protobuf byte for the native scanner a quarter: "
            "coordbench.otlp.weight.decode_weight)."
        ),
    )
    max_inflight: int = Field(64, ge=1, description="Export requests decoded at once; more get 429.")
    retry_after: float = Field(2.0, gt=0, description="Retry-After (seconds) sent with 429 answers.")
    body_timeout: float = Field(
        30.0, gt=0, description="Seconds a client has to send an export's body; a slower one gets 408."
    )
    evaluate: bool = Field(False, description="Evaluate every trace with A2A calls once it is complete (online).")
    evaluate_quiet: float = Field(
        2.0, gt=0, le=3600, description="Online evaluation: seconds without new spans before a trace is looked at."
    )
    evaluate_settle: float = Field(
        30.0,
        gt=0,
        le=86400,
        description="Online evaluation: seconds without new spans after which an incomplete trace is evaluated anyway.",
    )
    evaluate_queue: int = Field(
        1000, ge=1, le=1_000_000, description="Online evaluation: traces waiting at most; more are skipped and counted."
    )
    evaluate_workers: int = Field(1, ge=1, le=64, description="Online evaluation: worker processes.")
    evaluate_nice: int = Field(
        10,
        ge=0,
        le=19,
        description="Online evaluation: how much lower the workers' CPU priority is than the receiver's "
        "(Unix nice increment; 0: the same). When cores are short, ingest goes first.",
    )
    evaluate_timeout: float = Field(
        300.0,
        gt=0,
        le=86400,
        description="Online evaluation: seconds one evaluation may take before its worker is killed.",
    )
    max_evaluations: int = Field(
        100_000, ge=1, description="Online evaluation: evaluations kept for reading (the oldest go first)."
    )
    judge_sample: float = Field(
        0.1, ge=0, le=1, description="Online evaluation: share of traces the LLM judge sees, when one is configured."
    )
    judge_per_minute: float = Field(6.0, ge=0, description="Online evaluation: most LLM judgements a minute.")
    evaluations_store: str | None = Field(
        None,
        description=(
            "Online evaluation: also write each evaluation to this ClickHouse's coordbench_evaluations table "
            "(clickhouse://host:8123/otel), beside the spans the Collector's exporter writes there. "
            "A ClickHouse --store writes them there already."
        ),
    )
    peers: list[str] = Field(
        default_factory=list[str],
        max_length=64,
        description="Other receivers behind the same load balancer: a trace this one does not hold is asked of them.",
    )
    team_attribute: str = Field(
        "service.namespace",
        min_length=1,
        max_length=255,
        description="The root span's resource attribute that names a trace's team (else its service name).",
    )

    @model_validator(mode="before")
    @classmethod
    def _token_from_file(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        values = cast("dict[str, Any]", data)
        path = values.get("token_file")
        if path is None or path == "":
            return values
        if values.get("token") not in (None, ""):
            raise ValueError("give the token or a token file, not both")
        return {**values, "token": read_token_file(Path(path))}

    @field_validator("store", "evaluations_store")
    @classmethod
    def _store_url(cls, store: str | None) -> str | None:
        if store is None or store == "":
            return None
        from coordbench.clickhouse.url import parse_store_url

        parse_store_url(store)  # a bad URL is refused at start, with what is wrong
        return store

    @model_validator(mode="after")
    def _one_store(self) -> Settings:
        if self.store is not None and self.data_dir is not None:
            raise ValueError("give --store or --data-dir, not both (a ClickHouse store keeps the spans itself)")
        if self.store is not None and self.evaluations_store is not None:
            raise ValueError(
                "give --evaluations-store only with spans kept here: a ClickHouse --store gets them already"
            )
        return self

    @field_validator("peers")
    @classmethod
    def _peer_urls(cls, peers: list[str]) -> list[str]:
        for peer in peers:
            if not peer.startswith(("http://", "https://")) or len(peer) > 2048:
                raise ValueError(f"a peer is a receiver's http(s):// URL, got {peer[:80]!r}")
        return [p.rstrip("/") for p in peers]

    @field_validator("token")
    @classmethod
    def _token_not_empty(cls, token: SecretStr | None) -> SecretStr | None:
        if token is None:
            return None
        value = token.get_secret_value().strip()
        if not value:
            raise ValueError("is empty: leave it unset to run without authentication, or give a token")
        register_secret(value)
        return SecretStr(value)


def auth_note(settings: Settings) -> str:
    """What a server's banner says of its authentication: required, or open to whoever reaches it."""
    if settings.token is not None:
        return "bearer token required (the live UI asks for it once)"
    return f"no token: open to anyone who can reach {settings.host} (set COORDBENCH_TOKEN_FILE to require one)"


SettingsT = TypeVar("SettingsT", bound=BaseSettings)


@overload
def load_settings(settings_class: None = None, /, **overrides: Any) -> Settings: ...
@overload
def load_settings(settings_class: type[SettingsT], /, **overrides: Any) -> SettingsT: ...
def load_settings(settings_class: type[BaseSettings] | None = None, /, **overrides: Any) -> BaseSettings:
    """Settings from the environment, with explicit ``overrides`` (``None`` values are ignored).

    The one way coordbench's commands read their settings: the receiver's and the green's
    (:class:`Settings`), a purple agent's (``PurpleSettings``), any ``BaseSettings``.

    Args:
        settings_class: The settings class to load (default: ``Settings``).
        overrides: Values that win over the environment (the command line's).

    Raises:
        ConfigurationError: If a value is invalid; the message names the option given, or the
            environment variable (``<env_prefix><NAME>``) the value came from.
    """
    given = {k: v for k, v in overrides.items() if v is not None}
    chosen = settings_class or Settings
    prefix = str(chosen.model_config.get("env_prefix") or "")
    try:
        return chosen(**given)
    except ValidationError as exc:
        problems: list[str] = []
        for error in exc.errors():
            message = str(error["msg"]).removeprefix("Value error, ")
            if not error["loc"]:
                problems.append(message)
                continue
            name = str(error["loc"][0])
            source = name if name in given else f"{prefix}{name.upper()}"
            problems.append(f"{source}: {message}")
        raise ConfigurationError("invalid settings: " + "; ".join(problems)) from exc
