"""Evaluation cost in instructions: what a trace costs, counted by valgrind rather than timed.

Wall-clock figures on this shared machine move by tens of percent between runs, so a change of a
few percent cannot be told from them. Valgrind's callgrind counts the instructions a process
executes, however busy the machine: the same count on every run for code on one thread (the hash
seed fixed), while threads that hand work to each other add waits that vary. Each figure is the count of a
process that evaluates some traces, less the count of the same process evaluating none (imports,
trace generation and warm-up are in both), on today's code and on the baseline's
(:data:`benchmarks.cost.BASELINE`), with where today's instructions go (the C functions of the
interpreter and its libraries that executed them).

- *Batch*: :data:`TRACES` traces of about 200 spans (those of :mod:`benchmarks.cost`'s batch),
  each replayed whole as ``coordbench evaluate`` does: instructions per trace.
- *Coordination*: the coordination evaluator on one trace of :data:`LARGE` spans (every evaluator
  but the judge, which would compute the coordination itself when it is missing, with and without
  the coordination evaluator), and the graph evaluator likewise: the ratio the cost issue sets a
  goal for (coordination at most 3 times the graph tier), free of the machine's noise.

Needs ``valgrind`` (Debian's package); without it the section says so and measures nothing.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.cost import BASELINE, ROOT, _baseline_tree, _env

TRACES = 20
LARGE = 3_000
SHOWN = 8
"""C functions listed for where a trace's instructions go."""
_INTERPRETER = "_PyEval_EvalFrameDefault"
"""CPython's bytecode loop: what executes a Python function's own steps."""


# --- measurements (run under valgrind in a child process, on whichever tree PYTHONPATH names) --------


def _batch(count: int) -> None:
    from benchmarks.cost import _batch_traces, _replay_batch
    from coordbench.evals import replay as replaying
    from coordbench.evals.config import JudgeConfig
    from coordbench.server.app import tune_gc_for_ingest

    tune_gc_for_ingest()
    traces = _batch_traces(TRACES)  # the cost batch's first
    judge = JudgeConfig()
    for spans in traces[:2]:  # imports and caches warmed, in the process that evaluates none too
        replaying.replay_sync(spans[0].trace_id, spans, judge=judge).to_json()
    _replay_batch(traces[:count], judge)


def _evaluators(size: int, skipped: Sequence[str]) -> None:
    from benchmarks.evaluation import synthetic_trace
    from coordbench.evals import EvalConfig, EvalContext, EvalPipeline, EvalScenario, JudgeConfig
    from coordbench.server.app import tune_gc_for_ingest

    tune_gc_for_ingest()
    spans = synthetic_trace(size, content=True)
    config = EvalConfig(judge=JudgeConfig())
    pipeline = EvalPipeline(config)
    try:  # what the pipeline opens for each scenario (the baseline's tree has none)
        from coordbench.evals.textcache import evaluation_cache  # pyright: ignore[reportMissingImports]
    except ImportError:
        import contextlib

        evaluation_cache = contextlib.nullcontext

    async def evaluated() -> None:
        with evaluation_cache():  # pyright: ignore[reportUnknownVariableType]
            ctx = EvalContext.build(spans, scenario=EvalScenario(id="bench"), config=config, hosts=["host"])
            for evaluator in pipeline.evaluators:
                if evaluator.name not in skipped:
                    ctx.results[evaluator.name] = await evaluator.evaluate(ctx)

    asyncio.run(evaluated())


def _tier(size: int, evaluate: bool) -> None:
    """The graph tier as the cost issue counts it: ``evaluate_graph`` from the spans to the metrics' JSON."""
    from benchmarks.evaluation import synthetic_trace
    from coordbench.graph import evaluate_graph
    from coordbench.server.app import tune_gc_for_ingest

    tune_gc_for_ingest()
    spans = synthetic_trace(size, content=True)
    evaluate_graph(synthetic_trace(100, seed=7, content=True), hosts=["host"]).to_json()  # imports warmed, in both
    if evaluate:
        evaluate_graph(spans, hosts=["host"]).to_json()


# --- the parent ---------------------------------------------------------------------------------------


@dataclass
class Count:
    """The instructions of one valgrind run, in all and per C function."""

    total: int
    functions: dict[str, int] = field(default_factory=dict[str, int])


_LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(\S.*)$")


def _functions(annotated: str) -> dict[str, int]:
    """``callgrind_annotate``'s per-function counts, by function (the build paths taken off)."""
    out: dict[str, int] = {}
    for line in annotated.splitlines():
        found = _LINE.match(line)
        if found is None or "PROGRAM TOTALS" in line:
            continue
        name, _, library = found.group(2).strip().partition(" [")
        if name.startswith("???"):  # no symbol: the library it ran in says more
            name = f"{Path(library.rstrip(']')).name}:{name}"
        elif "/" in name:  # the source file and the folder it is in (a build folder's path says nothing)
            name = "/".join(name.rsplit("/", 2)[-2:])
        out[name] = out.get(name, 0) + int(found.group(1).replace(",", ""))
    return out


def _counted(tree: str, src: Path, args: Sequence[str], folder: Path, *, detail: bool = False) -> Count:
    """The instructions ``python -m benchmarks.instructions ARGS`` executes on the tree ``src``."""
    valgrind = shutil.which("valgrind") or "valgrind"
    out = folder / f"callgrind.{tree}.{'-'.join(args)}"
    env = {**_env(src), "PYTHONHASHSEED": "0"}  # the same set and dict orders, so the same work, every run
    subprocess.run([valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-m",
                    "benchmarks.instructions", *args], cwd=ROOT, env=env, check=True,
                   capture_output=True)  # fmt: skip
    total = next(int(line.split()[1]) for line in out.read_text().splitlines() if line.startswith("summary:"))
    if not detail:
        return Count(total)
    annotate = shutil.which("callgrind_annotate") or "callgrind_annotate"
    annotated = subprocess.run([annotate, "--threshold=100", str(out)], check=True, capture_output=True, text=True)
    return Count(total, _functions(annotated.stdout))


@dataclass
class InstructionsResult:
    available: bool = True
    per_trace: dict[str, float] = field(default_factory=dict[str, float])
    where: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])
    coordination: dict[str, float] = field(default_factory=dict[str, float])
    graph: dict[str, float] = field(default_factory=dict[str, float])
    tier: dict[str, float] = field(default_factory=dict[str, float])
    """``evaluate_graph`` on the same trace: the graph tier as the cost issue counts it."""


def run() -> InstructionsResult:
    result = InstructionsResult()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        result.available = False
        return result
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = {"baseline": _baseline_tree(folder / "baseline"), "today": ROOT / "src"}
        runs = {
            (name, what): (src, args, name == "today" and what.startswith("batch"))
            for name, src in trees.items()
            for what, args in (
                ("batch", ("batch", str(TRACES))),
                ("batch0", ("batch", "0")),
                ("all", ("evaluators", str(LARGE), "llm_judge")),
                ("no coordination", ("evaluators", str(LARGE), "llm_judge", "coordination")),
                ("no graph", ("evaluators", str(LARGE), "llm_judge", "coordination", "graph")),
                ("tier", ("tier", str(LARGE), "1")),
                ("no tier", ("tier", str(LARGE), "0")),
            )
        }
        print(f"  {len(runs)} runs under valgrind, two at a time", flush=True)
        with ThreadPoolExecutor(max_workers=2) as pool:  # counts do not depend on the machine's load
            futures = {key: pool.submit(_counted, key[0], src, args, folder, detail=detail)
                       for key, (src, args, detail) in runs.items()}  # fmt: skip
            counts = {key: future.result() for key, future in futures.items()}
    for name in trees:
        result.per_trace[name] = (counts[name, "batch"].total - counts[name, "batch0"].total) / TRACES
        result.coordination[name] = counts[name, "all"].total - counts[name, "no coordination"].total
        result.graph[name] = counts[name, "no coordination"].total - counts[name, "no graph"].total
        result.tier[name] = counts[name, "tier"].total - counts[name, "no tier"].total
    many, none = counts["today", "batch"].functions, counts["today", "batch0"].functions
    spent = {name: many.get(name, 0) - none.get(name, 0) for name in many}
    whole = result.per_trace["today"] * TRACES
    result.where = [(name, n / whole) for name, n in sorted(spent.items(), key=lambda kv: -kv[1])[:SHOWN]]
    return result


def report(result: InstructionsResult) -> str:
    lines = ["## Evaluation cost in instructions (`benchmarks/instructions.py`)", ""]
    if not result.available:
        return "\n".join([*lines, "valgrind is not installed here: nothing was counted (`apt-get install valgrind`)."])
    base, today = result.per_trace["baseline"], result.per_trace["today"]
    cb, ct = result.coordination["baseline"], result.coordination["today"]
    gb, gt = result.graph["baseline"], result.graph["today"]
    lines += [
        "Instructions counted by valgrind's callgrind, however busy the machine: a process evaluating some "
        f"traces less the same process evaluating none; today's code against the baseline (commit "
        f"`{BASELINE}`). Today's batch runs on one thread, so its count barely moves between runs; the "
        "baseline hands each evaluator to a worker thread and back, and the waits between them make its count "
        "move from run to run (by about a tenth on this machine).",
        "",
        "| | baseline | today | baseline / today |",
        "|---|---:|---:|---:|",
        f"| per trace of ~200 spans, batch of {TRACES} (millions) | {base / 1e6:,.1f} | {today / 1e6:,.1f} | "
        f"{base / today:.2f} |",
        f"| coordination evaluator, one trace of {LARGE:,} spans (millions) | {cb / 1e6:,.0f} | {ct / 1e6:,.0f} | "
        f"{cb / ct:.2f} |",
        f"| graph evaluator, the same trace (millions) | {gb / 1e6:,.0f} | {gt / 1e6:,.0f} | {gb / gt:.2f} |",
        f"| coordination / graph evaluator | {cb / gb:.2f} | {ct / gt:.2f} | |",
    ]
    if result.tier:
        tb, tt = result.tier["baseline"], result.tier["today"]
        lines[-1:-1] = [
            f"| graph tier, `evaluate_graph` on the same trace (millions) | {tb / 1e6:,.0f} | {tt / 1e6:,.0f} | "
            f"{tb / tt:.2f} |",
            f"| coordination / graph tier (goal: at most 3) | {cb / tb:.2f} | {ct / tt:.2f} | |",
        ]
    lines += [
        "",
        "Where a ~200-span trace's instructions go today, by the C function that executed them: "
        + ", ".join(f"`{name}` {share:.1%}" for name, share in result.where)
        + ".",
    ]
    interpreter = sum(share for name, share in result.where if _INTERPRETER in name)
    others = [share for name, share in result.where if _INTERPRETER not in name]
    if others and interpreter > 0.1 and max(others) < 0.05:
        lines[-1] += (
            f" The interpreter's own loop executes {interpreter:.0%} of them and no other function "
            f"{max(others):.1%} or more: the cost is Python executing many small steps, not one "
            "computation a faster algorithm or library call would remove."
        )
    return "\n".join(lines)


def _child(argv: Sequence[str]) -> None:
    if argv[0] == "batch":
        _batch(int(argv[1]))
    elif argv[0] == "evaluators":
        _evaluators(int(argv[1]), argv[2:])
    elif argv[0] == "tier":
        _tier(int(argv[1]), argv[2] == "1")
    else:
        raise SystemExit(f"unknown measurement {argv[0]!r}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        _child(sys.argv[1:])
    else:
        print(report(run()))
