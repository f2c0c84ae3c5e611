"""``coordbench demo``: the main job on embedded defaults, with progress and one summary table."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from coordbench.cli.output import fail
from coordbench.purple.shapes import ALL_SHAPES

if TYPE_CHECKING:
    from rich.progress import Progress

    from coordbench.demo import DemoRun

__all__ = ["demo", "summary_table"]


def _fmt(value: Any, digits: int = 2) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:.{digits}f}"
    return "-" if value is None else str(value)


def summary_table(run: DemoRun) -> Table:
    """One row per team: shape, class, score (answer and coordination quality), the PRD's flags, p95, completeness.

    ``flagged`` lists the agents the PRD's rule flags as bottlenecks (high betweenness): a
    description of the shape, not a judgement (the report shows density, centralisation and the
    rest).
    """
    teams = f"{len(run.teams)} team{'s' if len(run.teams) != 1 else ''}"
    table = Table(title=f"coordbench demo: {teams} assessed in {run.seconds:.1f} s")
    for column in ("team", "topology", "class", "score", "answer", "coordination", "passed", "flagged",
                   "isolated", "p95 ms", "complete"):  # fmt: skip
        table.add_column(column, justify="right" if column not in ("team", "topology", "class") else "left")
    for team in run.teams:
        row = team.result
        if row is None:
            table.add_row(team.shape, *(["-"] * 9), team.error or team.state)
            continue
        graph, latency = row.detail.graph(), row.detail.latency()
        detections = graph.detections if graph is not None else None
        completeness = row.detail.trace_completeness
        table.add_row(
            team.shape,
            graph.topology if graph is not None else "-",
            graph.classification if graph is not None else "-",
            f"{row.score:.1f}",
            _fmt(row.task_rewards.answer_quality),
            _fmt(row.task_rewards.coordination_quality),
            f"{row.scenarios_passed}/{row.scenarios}",
            ", ".join(detections.bottleneck_agents if detections else []) or "-",
            ", ".join(detections.isolated_agents if detections else []) or "-",
            _fmt(latency.calls.p95_ms if latency is not None else None, 0),
            f"{completeness.complete_scenarios}/{completeness.live_scenarios}",
        )
    return table


def demo(
    output_dir: Annotated[Path, typer.Option(help="Where results and reports go.")] = Path("output/demo"),
    shape: Annotated[
        list[str] | None,
        typer.Option("--shape", help=f"Teams to assess (repeat) [default: all: {', '.join(ALL_SHAPES)}]."),
    ] = None,
    size: Annotated[int, typer.Option(help="Workers per team (2 to 16).")] = 3,
    collector: Annotated[
        str, typer.Option(help="direct (agents export to the green) or rotel (the rotel collector in between).")
    ] = "direct",
    llm: Annotated[
        str,
        typer.Option(
            help="none (the members work by rule) or local (they think through a small model served on loopback, "
            "installed once from PyPI; every team one after another: the model has one slot)."
        ),
    ] = "none",
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="Keep the green up afterwards, its runs evaluated online and shown in its live UI "
            "(http://127.0.0.1:PORT/ui/), until interrupted.",
        ),
    ] = False,
    port: Annotated[int, typer.Option(help="With --serve: the green's port.")] = 4318,
) -> None:
    """Run the main job: a green and one purple team per shape on loopback, each team assessed over A2A.

    No Docker, no API key, no internet. Exits 1 if any team could not be assessed. With
    --serve the green stays up with its runs in its live UI until Ctrl-C.
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from coordbench.demo import DemoError, run_demo, shaped_teams
    from coordbench.localmodel import LocalModelError

    console = Console(stderr=True)
    shapes = tuple(shape or ALL_SHAPES)
    unknown = [s for s in shapes if s not in ALL_SHAPES]
    if unknown or not 2 <= size <= 16 or collector not in ("direct", "rotel") or llm not in ("none", "local"):
        problem = (
            f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(ALL_SHAPES)}"
            if unknown
            else f"--size must be 2 to 16, got {size}"
            if not 2 <= size <= 16
            else f"--collector must be direct or rotel, got {collector!r}"
            if collector not in ("direct", "rotel")
            else f"--llm must be none or local, got {llm!r}"
        )
        fail(problem, console=console)
    if serve and not 1 <= port <= 65535:
        fail(f"--port must be 1 to 65535, got {port}", console=console)
    received: list[int] = []
    served: list[bool] = []

    def hold(run: DemoRun) -> None:
        """Show the outcome, then keep the green and the teams up until interrupted (``--serve``)."""
        progress.stop()
        _show(run, output_dir, console)
        console.print(
            f"[bold]live UI: http://127.0.0.1:{port}/ui/[/bold] (the green, evaluating every run online; "
            "Ctrl-C stops it and the teams)",
            soft_wrap=True,
        )
        served.append(True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:  # the end of serving, not an interruption: stop everything, once
            received.clear()
            for sig in previous:  # a terminal's Ctrl-C reaches us twice (directly and forwarded by `uv run`)
                signal.signal(sig, signal.SIG_IGN)

    def interrupted(signum: int, _frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt  # unwinds run_demo, which stops every process it started

    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True
        ) as progress:
            tasks = {s: progress.add_task(f"{s}: waiting", total=None) for s in shapes}

            def update(shape: str, line: str) -> None:
                progress.update(tasks[shape], description=f"{shape}: {line[:90]}")

            serving: dict[str, Any] = {"serve_port": port, "hold": hold} if serve else {}
            if llm == "local":
                run = _with_local_model(output_dir, shapes, size, collector, update, progress, **serving)
            else:
                run = run_demo(
                    output_dir, teams=shaped_teams(shapes, size), collector=collector, progress=update, **serving
                )
    except (DemoError, LocalModelError) as exc:
        fail(exc.message, 1, console=console)
    except KeyboardInterrupt:
        signum = received[0] if received else signal.SIGINT
        console.print(
            f"[yellow]interrupted ({signal.Signals(signum).name}): every process the demo started is stopped[/yellow]"
        )
        raise typer.Exit(128 + signum) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if served:
        console.print("[yellow]stopped: the green and every team the demo started[/yellow]")
    else:
        _show(run, output_dir, console)
    if not run.ok:
        raise typer.Exit(1)


def _show(run: DemoRun, output_dir: Path, console: Console) -> None:
    """The summary table, then where each team's report is."""
    Console(width=max(150, Console().width)).print(summary_table(run))
    for team in run.teams:
        where = team.report or output_dir / team.shape / "results.json"
        console.print(f"{team.shape}: {where}" + ("" if team.ok else f"  [red]{team.error or team.state}[/red]"))
    if run.index is not None:
        console.print(f"teams compared: {run.index}")


def _with_local_model(
    output_dir: Path, shapes: tuple[str, ...], size: int, collector: str, update: Callable[[str, str], None],
    progress: Progress, **serving: Any,
) -> DemoRun:  # fmt: skip
    """The demo with every member thinking through the local model (installed on first use).

    The model has one slot: the teams' model calls queue at it, so every wait is long; each part
    is at most 160 tokens unless ``PURPLE_LLM_MAX_TOKENS`` says otherwise (a 0.5B model writes about
    18 tokens a second on one core).
    """
    from coordbench.demo import DEMO_CONFIG, run_demo, shaped_teams
    from coordbench.localmodel import MODEL_NAME, local_model

    output_dir.mkdir(parents=True, exist_ok=True)
    task = progress.add_task("local model: installing (first use) and loading", total=None)
    with local_model(log=output_dir / "local-model.log") as url:
        progress.update(task, description=f"local model: {MODEL_NAME} at {url}")
        saved = {k: os.environ.get(k) for k in _LLM_ENV}
        os.environ.update({"PURPLE_LLM_BASE_URL": url, "PURPLE_LLM_API_KEY": "local", "PURPLE_LLM_MODEL": MODEL_NAME,
                           "PURPLE_LLM_TIMEOUT": "3600", "PURPLE_CALL_TIMEOUT": "3600",
                           "PURPLE_LLM_MAX_TOKENS": saved["PURPLE_LLM_MAX_TOKENS"] or "160"})  # fmt: skip
        try:
            return run_demo(output_dir, teams=shaped_teams(shapes, size, select="model"), collector=collector,
                            config={**DEMO_CONFIG, "timeout": 7200, "trace_timeout": 60}, progress=update,
                            **serving)  # fmt: skip
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            progress.remove_task(task)


_LLM_ENV = (
    "PURPLE_LLM_BASE_URL",
    "PURPLE_LLM_API_KEY",
    "PURPLE_LLM_MODEL",
    "PURPLE_LLM_TIMEOUT",
    "PURPLE_CALL_TIMEOUT",
    "PURPLE_LLM_MAX_TOKENS",
)
