"""Wall time of the demo (`coordbench demo`, all six team shapes), after install; its parts timed apart.

Run alone with ``python -m benchmarks.demo`` (prints the section) or as part of ``make bench``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coordbench.demo import run_demo

RUNS = 3


def _startup_ms() -> float:
    """One member process as the launcher starts it (``python -m coordbench.purple``), to ``--help`` exit.

    The interpreter and the imports, no serving: what each of the demo's 29 member processes pays first.
    """
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "coordbench.purple", "--help"], capture_output=True, check=True)
    return (time.perf_counter() - started) * 1e3


def run() -> dict[str, object]:
    walls: list[float] = []
    teams = 0
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            result = run_demo(Path(folder))
            walls.append(time.perf_counter() - started)
            assert result.ok, [(t.shape, t.state, t.error) for t in result.teams]
            teams = len(result.teams)
    startups = [_startup_ms() for _ in range(5)]
    return {"walls": walls, "teams": teams, "startup_ms": statistics.median(startups)}


def report(result: dict[str, object]) -> str:
    walls = sorted(result["walls"])  # type: ignore[arg-type]
    return "\n".join(
        [
            "## Demo (`benchmarks/demo.py`)",
            "",
            f"`coordbench demo` as `make demo` runs it (after install): the green and {result['teams']} teams "
            "(29 agent processes), each team assessed on the 2 bundled scenarios. "
            f"{RUNS} runs back to back; the aim is under 60 s on 2 cores.",
            "",
            "| runs | fastest (s) | median (s) | slowest (s) | one member process, start to exit of `--help` "
            "(ms, median of 5) |",
            "|---:|---:|---:|---:|---:|",
            f"| {len(walls)} | {walls[0]:.1f} | {statistics.median(walls):.1f} | {walls[-1]:.1f} | "
            f"{result['startup_ms']:.0f} |",
            "",
            "Most of the time is start-up: 30 Python processes importing a2a-sdk, OpenTelemetry and uvicorn on "
            "2 cores; the assessments themselves take a few seconds.",
        ]
    )


if __name__ == "__main__":
    print(report(run()))
