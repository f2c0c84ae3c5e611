"""The main job on embedded defaults: a green, one purple team per shape, a real assessment of each.

Everything runs on loopback as separate OS processes: the green (``coordbench green``), every
member of every team (``coordbench purple``), and with ``collector="rotel"`` the rotel collector
between the agents and the green. Each team is assessed over A2A through the green, the path
AgentBeats takes; its spans reach the green over OTLP. The results, each team's
``results.json`` and HTML report, and a page comparing the teams are written to the output
directory. Every process started is stopped on success, on failure and on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import httpx

from coordbench.a2a import AgentCallError, Messenger
from coordbench.datafiles import collector_file
from coordbench.errors import CoordbenchError
from coordbench.processes import Child, ChildStartError, wait_until
from coordbench.purple.launcher import Fleet, TeamStartError
from coordbench.purple.team import SHAPES, Team, team_for_shape
from coordbench.report import render_comparison
from coordbench.results.document import ResultRow, ResultsDocument

__all__ = [
    "DEMO_CONFIG",
    "DemoError",
    "DemoRun",
    "TeamResult",
    "free_port",
    "rotel_settings",
    "run_demo",
    "shaped_teams",
]

DEMO_CONFIG: dict[str, Any] = {"trace_quiet": 0.5, "trace_timeout": 10, "timeout": 120}
"""The assessment config the demo sends (the bundled live scenarios, quick trace waits)."""


class DemoError(CoordbenchError):
    """The demo could not run (a process did not start); the message says which and why."""

    default_message = "the demo could not run"


@dataclass
class TeamResult:
    """One team's assessment."""

    shape: str
    state: str = "not run"
    row: dict[str, Any] = field(default_factory=dict[str, Any])
    """The result row as the artifact's DataPart carried it (empty when there was none)."""
    error: str | None = None
    report: Path | None = None

    @property
    def result(self) -> ResultRow | None:
        """The result row, read through the results contract."""
        return ResultRow.read(self.row) if self.row else None

    @property
    def ok(self) -> bool:
        """The assessment completed and every scenario was evaluated."""
        scenarios = self.result.detail.scenarios if self.result is not None else []
        return self.state == "completed" and bool(scenarios) and all(s.status != "failed" for s in scenarios)


@dataclass
class DemoRun:
    """What a demo run did."""

    green_url: str
    output_dir: Path
    teams: list[TeamResult]
    seconds: float
    index: Path | None = None

    @property
    def ok(self) -> bool:
        """Every team was assessed."""
        return bool(self.teams) and all(t.ok for t in self.teams)


def _silent(_shape: str, _line: str) -> None:
    return None


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    return check


def rotel_settings(*, http_port: int, grpc_port: int, green: str, folder: Path) -> dict[str, str]:
    """The rotel collector's variables (``collector/rotel.env``) for these ports, this green and this folder."""
    values = {"http_port": http_port, "grpc_port": grpc_port, "green": green, "folder": folder}
    settings: dict[str, str] = {}
    for line in collector_file("rotel.env").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip().format(**values)
    return settings


@contextmanager
def _rotel(green: str, folder: Path) -> Generator[str]:
    """The rotel collector (PyPI ``rotel``) relaying OTLP/HTTP to the green; yields its endpoint."""
    try:
        import rotel  # pyright: ignore[reportMissingTypeStubs, reportMissingImports, reportUnusedImport]
    except ImportError as exc:
        raise DemoError("--collector rotel needs the rotel package: pip install 'coordbench[collector]'") from exc
    agent = Path(cast("Any", rotel).__file__).parent / "rotel-agent"
    http = free_port()
    env = {**os.environ, **rotel_settings(http_port=http, grpc_port=free_port(), green=green, folder=folder)}

    def listening() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", http), timeout=1):
                return True
        except OSError:
            return False

    with Child("the rotel collector", [str(agent), "start"], folder / "rotel.out", env=env) as collector:
        try:
            wait_until(listening, collector, what=f"it listened on port {http}")
        except ChildStartError as exc:
            raise DemoError(str(exc)) from exc
        yield f"http://127.0.0.1:{http}"


async def _assess(
    green: str, shape: str, participants: dict[str, str], config: dict[str, Any], on_status: Callable[[str, str], None]
) -> TeamResult:
    result = TeamResult(shape=shape)
    request = {"participants": participants, "config": config}
    try:
        # the green answers once every scenario is done: wait as long as the config lets a scenario take
        waited = max(600.0, float(config.get("timeout") or 0) * max(1, len(config.get("scenarios") or [1, 1])) + 120)
        async with Messenger(timeout=waited) as messenger:
            reply = await messenger.send(green, json.dumps(request), new_conversation=True, on_status=on_status)
    except AgentCallError as exc:
        result.state, result.error = "error", exc.message
        return result
    result.state = reply.state
    if reply.state != "completed" or not reply.data:
        result.error = reply.text
        return result
    result.row = json.loads(json.dumps(reply.data[0]))
    return result


def shaped_teams(
    shapes: Sequence[str] = SHAPES, size: int = 3, *, select: Literal["order", "model"] = "order"
) -> list[tuple[str, Team, list[str]]]:
    """``(label, team, how members find it)`` for each shape, what :func:`run_demo` takes.

    ``select="model"``: the framework shapes' deciding members let the model choose whom to ask next.
    """
    return [
        (shape, team_for_shape(shape, size, select=select), ["--shape", shape, "--size", str(size)]) for shape in shapes
    ]


def run_demo(
    output_dir: Path,
    *,
    teams: Sequence[tuple[str, Team, list[str]]] | None = None,
    collector: str = "direct",
    config: dict[str, Any] | None = None,
    progress: Callable[[str, str], None] | None = None,
    serve_port: int | None = None,
    hold: Callable[[DemoRun], None] | None = None,
) -> DemoRun:
    """Run the demo; see the module docstring.

    Args:
        output_dir: Where results and reports go (created).
        teams: The teams to assess, as :func:`shaped_teams` gives them (default: every shape, 3 workers).
        collector: ``direct`` (agents export to the green) or ``rotel``.
        config: The assessment config (default :data:`DEMO_CONFIG`: the bundled live scenarios).
        progress: Called with ``(team label, line)`` as each team's assessment advances.
        serve_port: Serve the green on this port, with online evaluation on, so its runs are in
            its live UI (``/ui/``); default: a free port, no online evaluation.
        hold: Called with the finished run while the green and the teams are still up (the
            ``--serve`` command waits there until interrupted); everything stops when it returns.

    Raises:
        DemoError: If the green, the collector or a team could not start.
        ValueError: For an unknown collector.
    """
    if collector not in ("direct", "rotel"):
        raise ValueError(f"unknown collector {collector!r}: direct or rotel")
    chosen = list(teams) if teams is not None else shaped_teams()
    shapes = [label for label, _, _ in chosen]
    say: Callable[[str, str], None] = progress or _silent
    started = time.monotonic()
    output_dir.mkdir(parents=True, exist_ok=True)
    logs = output_dir / "logs"
    logs.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with contextlib.ExitStack() as stack:
        for shape in shapes:
            say(shape, "starting its members")
        fleet = Fleet([(label, team) for label, team, _ in chosen], env=env, log_dir=logs)
        try:
            green = _start_green(stack, output_dir, logs, env, port=serve_port)
            endpoint = stack.enter_context(_rotel(green, logs)) if collector == "rotel" else green
            fleet.endpoint = endpoint
            stack.callback(fleet.stop)
            urls = fleet.start()
        except (ChildStartError, TeamStartError) as exc:
            raise DemoError(str(exc)) from exc

        async def assess_all() -> list[TeamResult]:
            def status(shape: str) -> Callable[[str, str], None]:
                return lambda _state, text: say(shape, text.splitlines()[0] if text else _state)

            body = config or DEMO_CONFIG
            return list(
                await asyncio.gather(*(_assess(green, s, urls[s], {**body, "team": s}, status(s)) for s in shapes))
            )

        results = asyncio.run(assess_all())
        for result in results:
            _write(result, output_dir, green)
            say(result.shape, "done" if result.ok else f"failed: {result.error or result.state}")
        run = DemoRun(green_url=green, output_dir=output_dir, teams=results, seconds=time.monotonic() - started)
        items = [(r.shape, ResultsDocument.of([r.result]), f"{r.shape}/report.html") for r in results if r.result]
        if items:
            run.index = output_dir / "index.html"
            run.index.write_text(render_comparison(items), encoding="utf-8")
        if hold is not None:
            hold(run)
    return run


def _start_green(
    stack: contextlib.ExitStack, output_dir: Path, logs: Path, env: dict[str, str], *, port: int | None = None
) -> str:
    """Start the green on a free loopback port (another, if another process took it first); returns its URL.

    A free port is only free until someone binds it: on a busy machine another process may take
    it between our check and the green's bind, so the green is started again on a new port.
    Given a ``port``, the green serves there with online evaluation on (``--serve``), or the demo
    stops saying why.
    """
    for attempt in range(3):
        chosen = port or free_port()
        command = [sys.executable, "-m", "coordbench", "green", "--port", str(chosen),
                   "--output-dir", str(output_dir / "green"), *(["--evaluate"] if port else [])]  # fmt: skip
        child = Child("the green", command, logs / "green.log", env=env)
        try:
            wait_until(_healthy(f"http://127.0.0.1:{chosen}"), child, what="it answered /healthz")
        except ChildStartError as exc:
            child.stop()
            if port is not None or "address already in use" not in str(exc) or attempt == 2:
                raise
            continue
        stack.enter_context(child)
        return f"http://127.0.0.1:{chosen}"
    raise AssertionError("unreachable")  # pragma: no cover


def _write(result: TeamResult, output_dir: Path, green: str) -> None:
    folder = output_dir / result.shape
    folder.mkdir(parents=True, exist_ok=True)
    row = result.result
    if row is None:
        return
    (folder / "results.json").write_text(ResultsDocument.of([row]).text(), encoding="utf-8")
    response = httpx.get(f"{green}/reports/{row.assessment_id}", timeout=30)
    if response.status_code == 200:
        result.report = folder / "report.html"
        result.report.write_text(response.text, encoding="utf-8")
