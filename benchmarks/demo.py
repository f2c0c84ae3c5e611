"""`coordbench demo` as a user runs it: wall time on a quiet machine, and pass rate beside two CPU-bound processes.

Each run is the command itself (``python -m coordbench demo``, all six team shapes, a fresh
output folder): the interpreter, the imports, the green, the forked members, the assessments.
Quiet runs first, then runs beside two ``while True: pass`` processes on the machine's 2 cores
(the same load the tests put beside themselves). Run alone with ``python -m benchmarks.demo``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUIET_RUNS = 3
LOADED_RUNS = 10
HOGS = 2


def _demo() -> tuple[bool, float]:
    """One ``coordbench demo`` run: whether it exited 0, and its wall time (s)."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "coordbench", "demo", "--output-dir", str(Path(folder) / "demo")],
            capture_output=True,
            text=True,
            timeout=900,
        )
        return done.returncode == 0, time.perf_counter() - started


def run() -> dict[str, object]:
    quiet = [_demo() for _ in range(QUIET_RUNS)]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
    try:
        loaded = [_demo() for _ in range(LOADED_RUNS)]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return {"quiet": quiet, "loaded": loaded}


def _row(label: str, runs: list[tuple[bool, float]]) -> str:
    walls = sorted(wall for _, wall in runs)
    passed = sum(1 for ok, _ in runs if ok)
    return f"| {label} | {passed} / {len(runs)} | {walls[0]:.1f} | {statistics.median(walls):.1f} | {walls[-1]:.1f} |"


def report(result: dict[str, object]) -> str:
    quiet: list[tuple[bool, float]] = result["quiet"]  # type: ignore[assignment]
    loaded: list[tuple[bool, float]] = result["loaded"]  # type: ignore[assignment]
    ratio = statistics.median(w for _, w in loaded) / statistics.median(w for _, w in quiet)
    return "\n".join(
        [
            "## Demo (`benchmarks/demo.py`)",
            "",
            "`python -m coordbench demo` as `make demo` runs it (after install): the green and 6 teams (one "
            "process per member, forked from one image), each team assessed on the 2 bundled scenarios; each run "
            f"a fresh process. {QUIET_RUNS} runs on the quiet machine, then {LOADED_RUNS} beside {HOGS} CPU-bound "
            "processes (`python -c 'while True: pass'`) on its 2 cores. Targets: every run passes; quiet wall "
            "time under 40 s.",
            "",
            "| machine | passed | fastest (s) | median (s) | slowest (s) |",
            "|---|---:|---:|---:|---:|",
            _row("quiet", quiet),
            _row(f"beside {HOGS} CPU-bound processes", loaded),
            "",
            f"Loaded median / quiet median: {ratio:.2f}. Every wait in the demo follows events (a member's "
            "READY line, `/healthz`, the trace going quiet), never a fixed clock, so load slows it down "
            "and does not fail it.",
        ]
    )


if __name__ == "__main__":
    print(report(run()))
