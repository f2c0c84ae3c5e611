"""``coordbench purple`` (serve one member) and ``coordbench team up`` (start a whole team).

Kept apart from :mod:`coordbench.cli` so that ``python -m coordbench.purple`` (what the team
launcher runs, once per member) imports the purple agent's stack only, not the assessor's.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from coordbench.cli.output import fail
from coordbench.purple.shapes import ALL_SHAPES
from coordbench.telemetry import otlp_endpoint

if TYPE_CHECKING:
    from coordbench.purple.launcher import TeamProcesses
    from coordbench.purple.server import PurpleSettings
    from coordbench.purple.team import Team

__all__ = ["purple", "team_app"]

logger = logging.getLogger(__name__)

TeamOption = Annotated[
    Path | None, typer.Option("--team", help="A team file (TOML, see data/teams/) [env PURPLE_TEAM].")
]
ShapeOption = Annotated[
    str | None,
    typer.Option(
        "--shape", help=f"Build the team of a shape: {', '.join(ALL_SHAPES)} [env PURPLE_SHAPE, default star]."
    ),
]
SizeOption = Annotated[
    int | None, typer.Option("--size", help="Workers in a shaped team, 2 to 16 [env PURPLE_SIZE, default 3].")
]


def _settings(console: Console, **given: object) -> PurpleSettings:
    """The purple settings: what the command line gave, then ``PURPLE_*``, then the defaults."""
    from coordbench.errors import ConfigurationError
    from coordbench.purple.server import PurpleSettings
    from coordbench.settings import load_settings

    try:
        return load_settings(PurpleSettings, **given)
    except ConfigurationError as exc:
        fail(exc.message, console=console)


def _team(console: Console, settings: PurpleSettings, team: Path | None, shape: str | None) -> Team:
    """The team the command line names (``team``, ``shape``), else the one the environment names."""
    from coordbench.purple.team import TeamFileError, load_team, team_for_shape

    if team is not None and shape is not None:
        fail("give --team FILE or --shape NAME, not both", console=console)
    if team is None and shape is None:  # neither on the command line: PURPLE_TEAM wins over PURPLE_SHAPE
        team, shape = settings.team, settings.shape
    try:
        if team is not None:
            return load_team(team)
        return team_for_shape(shape or "star", settings.size)
    except (TeamFileError, ValueError) as exc:
        fail(str(exc), console=console)


def purple(
    role: Annotated[
        str | None, typer.Option("--role", help="Which member of the team to serve [env PURPLE_ROLE].")
    ] = None,
    team: TeamOption = None,
    shape: ShapeOption = None,
    size: SizeOption = None,
    host: Annotated[str | None, typer.Option(help="Interface [env PURPLE_HOST, default 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option(help="Port, 0 for any [env PURPLE_PORT, default 9009].")] = None,
    card_url: Annotated[str | None, typer.Option(help="URL the card advertises [default http://HOST:PORT/].")] = None,
    peers_file: Annotated[Path | None, typer.Option(help="JSON {name: url} of the other members.")] = None,
    registry: Annotated[str | None, typer.Option(help="An assessor to register with [env PURPLE_REGISTRY].")] = None,
    pace: Annotated[float | None, typer.Option(help="Seconds per unit of simulated work [default 0.05].")] = None,
) -> None:
    """Serve one purple agent: a member of a team, over A2A, traced, exporting to $OTEL_EXPORTER_OTLP_ENDPOINT.

    Prints 'READY <url>' on standard output once it serves.
    """
    from coordbench.purple.server import serve_member

    console = Console(stderr=True)
    settings = _settings(console, role=role, size=size, host=host, port=port, card_url=card_url, registry=registry,
                         pace=pace)  # fmt: skip
    chosen = _team(console, settings, team, shape)
    if settings.role is None:
        fail("give --role NAME (or PURPLE_ROLE): which member of the team to serve", console=console)
    try:
        member = chosen.member(settings.role)
    except KeyError:
        names = ", ".join(m.name for m in chosen.members)
        fail(f"--role {settings.role!r} is not a member of team {chosen.name!r} ({names})", console=console)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        fail(f"cannot bind {settings.host}:{settings.port}: {exc.strerror or exc}", console=console)

    def announce(url: str) -> None:
        print(f"READY {url}", flush=True)

    serve_member(chosen, member.name, sock, settings=settings, peers_file=peers_file, announce=announce)
    sys.exit(0)


team_app = typer.Typer(help="Start a purple team: one process per member.", no_args_is_help=True)


@team_app.command("up")
def team_up(
    team_file: Annotated[Path | None, typer.Argument(help="A team file (TOML).")] = None,
    shape: ShapeOption = None,
    size: SizeOption = None,
    endpoint: Annotated[
        str | None, typer.Option(help="Where members export OTLP [default: $OTEL_EXPORTER_OTLP_ENDPOINT].")
    ] = None,
    registry: Annotated[str | None, typer.Option(help="An assessor to register every member with.")] = None,
    pace: Annotated[float | None, typer.Option(help="Seconds per unit of simulated work.")] = None,
) -> None:
    """Start a team, print its participants JSON (what 'coordbench assess' takes), run until Ctrl-C; stop every member.

    Members that die are reported as they die; the command exits (status 1) once none is left.
    """
    from coordbench.purple.launcher import TeamProcesses, TeamStartError

    console = Console(stderr=True)
    chosen = _team(console, _settings(console, size=size), team_file, shape)
    target = endpoint or otlp_endpoint("traces")
    if not target:
        console.print(
            "[yellow]warning:[/yellow] no OTLP endpoint (--endpoint or OTEL_EXPORTER_OTLP_ENDPOINT): the members "
            "export their spans nowhere, and an assessment will see none of their work. Point them at the "
            "green: --endpoint http://127.0.0.1:9009",
            soft_wrap=True,
        )
    processes = TeamProcesses(chosen, endpoint=endpoint, registry=registry, pace=pace)
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    status = 0
    try:
        with console.status(f"starting team {chosen.name} ({len(chosen.members)} members)..."):
            urls = processes.start()[chosen.name]
        print(json.dumps(urls, indent=2, sort_keys=True), flush=True)
        flags = " ".join(f"-p {name}={url}" for name, url in urls.items())
        green = f" --green {registry}" if registry else " --green http://127.0.0.1:9009/"
        console.print(f"team {chosen.name} is up (entry: {chosen.entry}); assess it with:", soft_wrap=True)
        console.print(f"  coordbench assess{green} {flags}", soft_wrap=True, highlight=False)
        status = _watch(console, processes, stop)
    except TeamStartError as exc:
        fail(exc.message, 1, console=console)
    except KeyboardInterrupt:
        pass
    finally:
        processes.stop()
        signal.signal(signal.SIGTERM, previous)
        console.print(f"team {chosen.name} stopped")
    if status:
        raise typer.Exit(status)


def _watch(console: Console, processes: TeamProcesses, stop: threading.Event) -> int:
    """Report members as they die until stopped; 1 once every member is gone, else 0."""
    reported: set[str] = set()
    while not stop.wait(0.5):
        for member in processes.exited():
            if member.name not in reported:
                reported.add(member.name)
                console.print(
                    f"[red]member {member.name} exited (status {member.exit_status})[/red]; the team is not whole: "
                    f"{member.tail(5) or 'it wrote nothing'}",
                    soft_wrap=True,
                )
        if len(reported) == len(processes.team.members):
            console.print("[red]every member has exited[/red]")
            return 1
    return 0
