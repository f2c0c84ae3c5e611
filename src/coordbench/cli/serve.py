"""Starting a server command: ports checked up front, startup errors as one clear line."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console

from coordbench.errors import CoordbenchError

__all__ = [
    "SHUTDOWN_GRACE",
    "EvaluateOption",
    "EvaluationsStoreOption",
    "PeerOption",
    "ReceiverOption",
    "StoreOption",
    "TraceStoreOption",
    "port_problem",
    "serve",
]

EvaluateOption = Annotated[
    bool | None,
    typer.Option(
        "--evaluate/--no-evaluate",
        help="Evaluate every completed trace with A2A calls as it completes: GET /v1/evaluations, /metrics "
        "[env COORDBENCH_EVALUATE; default off].",
        show_default=False,
    ),
]
"""The ``--evaluate`` option of the server commands that hold a trace backend (receiver, green)."""

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="URL",
        help="Keep spans in ClickHouse, in the Collector exporter's tables: clickhouse://HOST:8123/otel (password "
        "in CLICKHOUSE_PASSWORD) or chdb:///DIR (embedded); ?create=true makes the tables, ?shard=I/N splits "
        "online evaluation among receivers [env COORDBENCH_STORE; default: memory].",
        show_default=False,
    ),
]
"""The ``--store`` option of the server commands that hold a trace backend (receiver, green)."""

EvaluationsStoreOption = Annotated[
    str | None,
    typer.Option(
        "--evaluations-store",
        metavar="URL",
        help="With --evaluate: also write each evaluation to this ClickHouse's coordbench_evaluations table "
        "(clickhouse://HOST:8123/otel), beside the spans the Collector's exporter writes there "
        "[env COORDBENCH_EVALUATIONS_STORE].",
        show_default=False,
    ),
]
"""The ``--evaluations-store`` option of the server commands that evaluate online (receiver, green)."""

PeerOption = Annotated[
    list[str] | None,
    typer.Option(
        "--peer",
        metavar="URL",
        help="Another receiver behind the same load balancer (repeat): a trace or evaluation this one does not "
        "hold is asked of them [env COORDBENCH_PEERS, a JSON list].",
        show_default=False,
    ),
]
"""The ``--peer`` option of the server commands that hold a trace backend (receiver, green)."""

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
    build_app: Callable[[], Any],
    *,
    host: str,
    port: int,
    other_ports: Sequence[tuple[str, int]] = (),
    banner: str,
    **uvicorn_options: Any,
) -> None:
    """Check the ports, build the app, print ``banner`` and run uvicorn until interrupted.

    Args:
        console: Where errors and the banner go (stderr).
        build_app: Builds the ASGI app; a :class:`~coordbench.errors.CoordbenchError` it raises
            (an unusable data directory, say) is printed and exits with status 2.
        host: Interface to bind.
        port: The HTTP port.
        other_ports: ``(label, port)`` of other listeners the app opens on ``host`` (OTLP/gRPC).
        banner: One line saying what is being served.
        **uvicorn_options: Passed to ``uvicorn.run``.

    Raises:
        typer.Exit: 2 if a port is taken or the app cannot be built.
    """
    for label, number in (("HTTP", port), *other_ports):
        problem = port_problem(host, number)
        if problem is not None:
            console.print(f"[red]error:[/red] {label}: {problem}", soft_wrap=True)
            raise typer.Exit(2)  # as every command answers a --port it cannot use
    try:
        app = build_app()
    except CoordbenchError as exc:
        console.print(f"[red]error:[/red] {exc.message}", soft_wrap=True)
        raise typer.Exit(2) from exc
    console.print(banner, soft_wrap=True)  # one line: a URL in it stays whole for copy and paste
    import uvicorn

    options: dict[str, Any] = {"timeout_graceful_shutdown": SHUTDOWN_GRACE, **uvicorn_options}
    uvicorn.run(app, host=host, port=port, log_level="warning", **options)
