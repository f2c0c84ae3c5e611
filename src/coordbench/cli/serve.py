"""Starting a server command: ports checked up front, startup errors as one clear line."""

from __future__ import annotations

import errno
import functools
import inspect
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import typer
from pydantic import SecretStr
from rich.console import Console

from coordbench.cli.output import fail
from coordbench.errors import CoordbenchError
from coordbench.settings import Settings

__all__ = [
    "BACKEND_OPTIONS",
    "SHUTDOWN_GRACE",
    "ReceiverOption",
    "SettingOption",
    "TraceStoreOption",
    "port_problem",
    "serve",
    "setting_options",
    "with_setting_options",
]


@dataclass(frozen=True)
class SettingOption:
    """A setting a server command takes on its command line, its option made from the settings field.

    Attributes:
        field: The settings field (``peers``).
        flag: The option (default: ``--`` and the field with dashes; ``--peer`` for a list given by repeating).
        metavar: How the help names its value.
        note: Said after the field's description (``Visible in the process list...``).
    """

    field: str
    flag: str | None = None
    metavar: str | None = None
    note: str = ""

    @property
    def param(self) -> str:
        """The command's parameter name for the option (``peer`` for ``--peer``)."""
        return (self.flag or self.field).removeprefix("--").replace("-", "_")


def _option_type(annotation: Any) -> Any:
    """The option's type for a settings field's: optional (unset leaves the environment's), secrets as text."""
    kinds = (
        [k for k in get_args(annotation) if k is not type(None)]
        if get_origin(annotation) in (Union, UnionType)
        else [annotation]
    )
    kind = str if kinds == [SecretStr] else kinds[0]
    return kind | None


def setting_options(settings_class: type[Settings], options: Sequence[SettingOption]) -> list[inspect.Parameter]:
    """The command-line parameters of ``options``: each one's type, flag and help come from its settings field.

    The help says the field's description, its environment variable and its default, so a
    setting reads the same on every command that takes it and in ``Settings``' own docs.
    """
    prefix = str(settings_class.model_config.get("env_prefix") or "")
    parameters: list[inspect.Parameter] = []
    for option in options:
        info = settings_class.model_fields[option.field]
        default = info.get_default(call_default_factory=True)
        env = f"{prefix}{option.field.upper()}" + (", a JSON list" if isinstance(default, list) else "")
        if isinstance(default, bool):
            env += ", default on" if default else ", default off"
        elif default not in (None, [], ""):
            env += f", default {default}"
        help_text = f"{info.description} [env {env}]"
        if option.note:
            help_text += " " + option.note
        kind = _option_type(info.annotation)
        flag = option.flag or "--" + option.field.replace("_", "-")
        if kind == bool | None:
            flag = f"{flag}/--no-{flag.removeprefix('--')}"
        typed = typer.Option(flag, help=help_text, metavar=option.metavar, show_default=False)
        parameters.append(
            inspect.Parameter(
                option.param, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, typed]
            )
        )
    return parameters


def with_setting_options(
    settings_class: type[Settings], options: Sequence[SettingOption]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command, besides its own parameters, an option per setting (:func:`setting_options`).

    The command takes them as ``**given``: each by its field's name (``peers``), ``None`` when not
    given, ready for :func:`~coordbench.settings.load_settings`.
    """
    names = {o.param: o.field for o in options}

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
        added = setting_options(settings_class, options)

        @functools.wraps(command)
        def run(**values: Any) -> None:
            given = {names[k]: values.pop(k) for k in list(values) if k in names}
            command(**values, **{k: (v or None) if isinstance(v, list) else v for k, v in given.items()})

        run.__signature__ = inspect.Signature([*own, *added])  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in (*own, *added)}
        return run

    return decorate


ReceiverOption = Annotated[
    list[str] | None,
    typer.Option(
        "--receiver",
        metavar="URL",
        help="A receiver (or green) holding the traces; repeat it for receivers behind a load balancer: each trace "
        "is taken from the one that holds it [default: http://127.0.0.1:4318].",
        show_default=False,
    ),
]
"""The ``--receiver`` option of the commands that read stored traces (evaluate, report)."""

TraceStoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL",
        help="Read the traces from ClickHouse instead of receivers: clickhouse://HOST:8123/otel (password in "
        "CLICKHOUSE_PASSWORD) or chdb:///DIR.",
        show_default=False,
    ),
]
"""The ``--store`` option of the commands that read stored traces (evaluate, report)."""

_VISIBLE = "Visible in the process list: prefer --token-file or the variable."

BACKEND_OPTIONS = (
    SettingOption("data_dir"),
    SettingOption("token", note=_VISIBLE),
    SettingOption("token_file"),
    SettingOption("evaluate"),
    SettingOption("store", metavar="URL"),
    SettingOption("peers", flag="--peer", metavar="URL"),
    SettingOption("evaluations_store", metavar="URL"),
)
"""The settings every server command holding a trace backend takes (receiver, green)."""

SHUTDOWN_GRACE = 10.0
"""Seconds a server waits, after SIGTERM or Ctrl-C, for requests in flight: an assessment can run for
minutes, and a stop must not wait for it (its trace and results stay wherever they were written)."""


def port_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on right now, or ``None`` if it can.

    Binds a throwaway socket the way uvicorn and gRPC do (``SO_REUSEADDR``), so a port held by
    another process is reported before anything starts. Port 0 (any free port) always can.
    """
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot resolve host {host!r}: {exc.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            reason = "address already in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
            return f"cannot listen on {host}:{port}: {reason}"
    return None


def serve(
    console: Console,
    settings: Settings,
    build_app: Callable[[], Any],
    *,
    banner: Callable[[], str],
    **uvicorn_options: Any,
) -> None:
    """Check the ports the settings name, build the app, print the banner and run uvicorn until interrupted.

    Args:
        console: Where errors and the banner go (stderr).
        settings: The server's settings: its host, HTTP port and OTLP/gRPC port (if any).
        build_app: Builds the ASGI app; a :class:`~coordbench.errors.CoordbenchError` it raises
            (an unusable data directory, say) is printed and exits with status 2.
        banner: One line saying what is being served (made once the app is built).
        **uvicorn_options: Passed to ``uvicorn.run``.

    Raises:
        typer.Exit: 2 if a port is taken or the app cannot be built.
    """
    from coordbench.gcpolicy import tune_gc

    host, port = settings.host, settings.port
    other_ports = [] if settings.grpc_port is None else [("OTLP/gRPC", settings.grpc_port)]
    for label, number in (("HTTP", port), *other_ports):
        problem = port_problem(host, number)
        if problem is not None:
            fail(f"{label}: {problem}", console=console)  # as every command answers a --port it cannot use
    try:
        app = build_app()
    except CoordbenchError as exc:
        fail(exc.message, console=console)
    tune_gc()
    console.print(banner(), soft_wrap=True)  # one line: a URL in it stays whole for copy and paste
    import uvicorn

    options: dict[str, Any] = {"timeout_graceful_shutdown": SHUTDOWN_GRACE, **uvicorn_options}
    uvicorn.run(app, host=host, port=port, log_level="warning", **options)
