"""``coordbench demo``: the main job on embedded defaults, with progress and one summary table."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from coordbench.cli.output import fail
from coordbench.purple.shapes import SHAPES

if TYPE_CHECKING:
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
        list[str] | None, typer.Option("--shape", help=f"Teams to assess (repeat) [default: all: {', '.join(SHAPES)}].")
    ] = None,
    size: Annotated[int, typer.Option(help="Workers per team (2 to 16).")] = 3,
    collector: Annotated[
        str, typer.Option(help="direct (agents export to the green) or rotel (the rotel collector in between).")
    ] = "direct",
) -> None:
    """Run the main job: a green and one purple team per shape on loopback, each team assessed over A2A.

    No Docker, no API key, no internet. Exits 1 if any team could not be assessed.
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from coordbench.demo import DemoError, run_demo, shaped_teams

    console = Console(stderr=True)
    shapes = tuple(shape or SHAPES)
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or not 2 <= size <= 16 or collector not in ("direct", "rotel"):
        problem = (
            f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}"
            if unknown
            else f"--size must be 2 to 16, got {size}"
            if not 2 <= size <= 16
            else f"--collector must be direct or rotel, got {collector!r}"
        )
        fail(problem, console=console)
    received: list[int] = []

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

            run = run_demo(output_dir, teams=shaped_teams(shapes, size), collector=collector, progress=update)
    except DemoError as exc:
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
    Console(width=max(150, Console().width)).print(summary_table(run))
    for team in run.teams:
        where = team.report or output_dir / team.shape / "results.json"
        console.print(f"{team.shape}: {where}" + ("" if team.ok else f"  [red]{team.error or team.state}[/red]"))
    if run.index is not None:
        console.print(f"teams compared: {run.index}")
    if not run.ok:
        raise typer.Exit(1)
