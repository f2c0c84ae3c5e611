"""Run every benchmark and write docs/benchmarks.md (machine, date, figures)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import time
from pathlib import Path

from benchmarks import clickhouse, demo, evaluation, ingest, instrumentation_overhead, online, pipeline, read_api

OUT = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        memory = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration):
        memory = "unknown memory"
    return (
        f"{cpu}, {os.cpu_count()} cores, {memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def cpu_reference_ms() -> float:
    """Best of 5 timings of a fixed pure-Python loop: how fast this machine runs Python right now."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        sum(range(10_000_000))
        best = min(best, time.perf_counter() - started)
    return best * 1e3


SUITE = "## Test suite"


def _suite_section() -> str:
    """The hand-measured test-suite section of the current file (a run of ``make test`` takes too long for bench)."""
    try:
        text = OUT.read_text()
    except OSError:
        return ""
    start = text.find(SUITE)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(SUITE))
    return text[start : end if end >= 0 else len(text)].strip()


def main() -> None:
    reference_before = cpu_reference_ms()
    sections = []
    for name, module in (
        ("instrumentation overhead", instrumentation_overhead),
        ("receiver ingest", ingest),
        ("read API", read_api),
        ("evaluation", evaluation),
        ("evaluator pipeline", pipeline),
        ("online evaluation", online),
        ("ClickHouse store", clickhouse),
        ("demo", demo),
    ):
        print(f"running {name} ...", flush=True)
        sections.append(module.report(module.run()))
    reference_after = cpu_reference_ms()
    header = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`benchmarks/run.py`); every figure below comes from one run of that command, "
        "except the test suite's times (kept from the last edit of that section: `time make test`).",
        "Ratios compare measurements taken in the same run; absolute figures on this shared machine vary by "
        "±40% between runs.",
        "",
        f"- Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {machine()}",
        f"- CPU reference (`sum(range(10**7))`, best of 5): {reference_before:.0f} ms before the run, "
        f"{reference_after:.0f} ms after; compare it between runs before comparing absolute figures",
        "",
    ]
    kept = _suite_section()
    if kept:
        sections.append(kept)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(header) + "\n" + "\n\n".join(sections) + "\n")
    print(OUT.read_text())


if __name__ == "__main__":
    main()
