"""``coordbench groundtruth [FILE]``: replay labelled patterns and check labels and metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from coordbench.cli.output import fail
from coordbench.errors import CoordbenchError

__all__ = ["DEFAULT_FILE", "groundtruth"]

DEFAULT_FILE = Path("data/ground_truth.json")


def _fmt(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def groundtruth(
    file: Annotated[
        Path, typer.Argument(help="Ground-truth JSON (scenarios with patterns, labels, expected metrics).")
    ] = (DEFAULT_FILE),
    strict: Annotated[bool, typer.Option(help="Also fail on expected-metric mismatches, not only on labels.")] = True,
) -> None:
    """Turn each scenario's interaction pattern into spans, evaluate them, and compare with its label and metrics.

    Prints a table and the classification accuracy; exits 1 if a label (or, with --strict,
    an expected metric) disagrees, 2 if the file is unusable.
    """
    from coordbench.evals.groundtruth import evaluate_scenario, load_ground_truth

    console = Console()
    try:
        truth = load_ground_truth(file)
    except CoordbenchError as exc:
        fail(exc.message)
    table = Table(title=f"Ground truth: {file}")
    table.add_column("scenario")
    table.add_column("expected")
    table.add_column("predicted")
    table.add_column("metrics")
    table.add_column("ok", justify="center")
    correct = 0
    all_ok = True
    for scenario in truth.scenarios:
        _, check = evaluate_scenario(scenario)
        correct += check.label_ok
        all_ok &= check.ok if strict else check.label_ok
        metrics = (
            "; ".join(f"{k}: expected {_fmt(e)}, got {_fmt(a)}" for k, (e, a) in check.mismatches.items())
            if check.mismatches
            else f"{len(scenario.expected_metrics)} match"
        )
        mark = "[green]✓[/green]" if check.ok else "[red]✗[/red]"
        table.add_row(scenario.id, check.expected_label, check.predicted_label, metrics, mark)
    console.print(table)
    total = len(truth.scenarios)
    console.print(f"classification accuracy: {correct}/{total} = {correct / total:.1%}")
    if not all_ok:
        raise typer.Exit(1)
