"""Run every benchmark and write docs/benchmarks.md (machine, date, figures)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

from benchmarks import (
    clickhouse,
    cost,
    demo,
    evaluation,
    ingest,
    instructions,
    instrumentation_overhead,
    online,
    pipeline,
    read_api,
)

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


def _previous(module: str) -> tuple[str, str] | None:
    """The section ``benchmarks/<module>.py`` wrote in the current file, and the date of that run."""
    try:
        text = OUT.read_text()
    except OSError:
        return None
    start = text.find(f"(`benchmarks/{module}.py`)")
    date = text.find("- Date: ")
    if start < 0 or date < 0:
        return None
    start = text.rfind("\n## ", 0, start) + 1
    end = text.find("\n## ", start + 3)
    section = text[start : end if end >= 0 else len(text)].strip()
    kept_from = text[date + len("- Date: ") : text.find("\n", date)].strip()
    return section, kept_from


def main(argv: list[str] | None = None) -> None:
    """Run the benchmarks; ``--keep MODULE`` (repeatable) keeps that section of the current file as it is.

    A change that does not touch what a section measures need not wait for it (the
    instrumentation overhead takes a third of the run): the kept section says so, with the date
    of the run that wrote it.
    """
    args = sys.argv[1:] if argv is None else argv
    keep = {args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--keep"}
    reference_before = cpu_reference_ms()
    sections = []
    for name, module in (
        ("instrumentation overhead", instrumentation_overhead),
        ("receiver ingest", ingest),
        ("read API", read_api),
        ("evaluation", evaluation),
        ("evaluator pipeline", pipeline),
        ("evaluation cost", cost),
        ("evaluation cost in instructions", instructions),
        ("online evaluation", online),
        ("ClickHouse store", clickhouse),
        ("demo", demo),
    ):
        short = module.__name__.rsplit(".", 1)[-1]
        previous = _previous(short) if short in keep else None
        if previous is not None:
            section, kept_from = previous
            marker = "_Kept from the run of "
            if marker not in section:
                title, _, rest = section.partition("\n")
                note = f"{marker}{kept_from} (`--keep {short}`): no change since touched what it measures._"
                section = f"{title}\n\n{note}\n{rest}"
            print(f"keeping {name} from {kept_from}", flush=True)
            sections.append(section)
            continue
        print(f"running {name} ...", flush=True)
        sections.append(module.report(module.run()))
    reference_after = cpu_reference_ms()
    header = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`benchmarks/run.py`); every figure below comes from one run of that command, "
        "except the test suite's times (kept from the last edit of that section: `time make test`) and any "
        "section marked as kept from an earlier run (`--keep`).",
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
