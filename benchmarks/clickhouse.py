"""ClickHouse as the store: spans/s read back for evaluation, traces evaluated per core, the cost of watching.

Everything runs on the ClickHouse engine embedded in this process (chdb 26.9), in the exporter's
tables; a ClickHouse server reads faster on its own cores, so these are a floor for the read.

*Read.* 200 twenty-agent traces (about 200 spans each, with captured message text), started now,
are written through coordbench's exporter row mapping, then read back by trace id: one trace a
query (through the trace-id index table, parsed into spans, as ``GET /v1/traces/{id}`` reads it),
and in batches as online evaluation reads them (the traces waiting in its queue, at most 32, in one
query, the columns evaluation reads). Baseline in the same run: the same traces read from the
in-memory store (OTLP protobuf decoded), the receiver's default. The batched read and the baseline
alternate, :data:`ROUNDS` times each, and the medians are compared: a single pass of each swung
their ratio from 0.24 to 0.66 on this shared machine. The garbage collector is set as
``coordbench serve`` sets it for its worker (:func:`coordbench.gcpolicy.tune_gc`), for both; each
round also reads both ways under CPython's default thresholds, where parsing a batch's JSON
triggers collections that walk the whole heap, so a library user can see what the policy is worth.

*Evaluate.* The traces read in batches are evaluated in this process (one core, one event loop for
the batch), as a receiver's worker does: traces per second per core, read included, gives the
cores a load needs.

*Watch.* One look at the index table, as online evaluation makes one a second: its time with the
200 traces, and with 100,000 more traces' index rows in the window (a busy minute's worth).
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.evaluation import synthetic_trace
from coordbench.clickhouse import ClickHouseTraces, connect
from coordbench.evals.replay import Replays
from coordbench.gcpolicy import THRESHOLDS
from coordbench.online.evaluator import READ_BATCH
from coordbench.otlp import decode_protobuf, export_request
from coordbench.spans import SpanData
from coordbench.store import TraceStore

TRACES = 200
TRACE_SPANS = 200
AGENTS = 20
WATCHED = 100_000
ROUNDS = 5
"""Batched reads from ClickHouse and reads from memory, alternating: each figure is the median of this many."""
LOADS = (10, 100, 1_000)
"""Loads, in 20-agent traces per second, to say how many cores they need."""


@dataclass
class Outcome:
    spans: int
    write_s: float
    read_s: float
    batch_read_s: list[float]
    memory_read_s: list[float]
    default_gc_batch_read_s: list[float]
    default_gc_memory_read_s: list[float]
    evaluate_s: list[float]
    watch_small_s: float
    watch_large_s: float


def _traces() -> list[list[SpanData]]:
    at = time.time_ns()
    out = []
    for n in range(TRACES):
        spans = synthetic_trace(TRACE_SPANS, agents=AGENTS, seed=1_000 + n, content=True)
        out.append(
            [
                s._replace(
                    start_time_unix_nano=s.start_time_unix_nano + at, end_time_unix_nano=s.end_time_unix_nano + at
                )
                for s in spans
            ]
        )
    return out


def _memory_store(traces: list[list[SpanData]]) -> TraceStore:
    """The in-memory store holding every trace, as the receiver stored them (OTLP protobuf decoded)."""

    async def fill() -> TraceStore:
        store = TraceStore(max_spans=10_000_000, max_traces=100_000)
        for spans in traces:
            await store.add(decode_protobuf(export_request(spans).SerializeToString()).spans)
        return store

    return asyncio.run(fill())


def _memory_read_s(store: TraceStore, traces: list[list[SpanData]]) -> float:
    """Seconds to read every trace back from the in-memory store, as the read API does."""
    started = time.perf_counter()
    for spans in traces:
        build = store.snapshot_builder(spans[0].trace_id)
        assert build is not None
        assert len(build().spans) == len(spans)
    return time.perf_counter() - started


def _batched_read_s(
    tables: ClickHouseTraces, traces: list[list[SpanData]]
) -> tuple[float, list[dict[str, list[SpanData]]]]:
    """Seconds to read every trace back from ClickHouse in batches, as the online worker does, and what was read."""
    batches: list[dict[str, list[SpanData]]] = []
    took = 0.0
    for first in range(0, len(traces), READ_BATCH):
        batch = traces[first : first + READ_BATCH]
        started = time.perf_counter()
        read = tables.traces([t[0].trace_id for t in batch], for_evaluation=True)
        took += time.perf_counter() - started
        assert [len(read[t[0].trace_id]) for t in batch] == [len(t) for t in batch]
        batches.append(read)
    return took, batches


def _watch_s(traces: ClickHouseTraces) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        traces.activity(300.0)
        best = min(best, time.perf_counter() - started)
    return best


def run() -> Outcome:
    default_gc = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        return _run(default_gc)
    finally:
        gc.set_threshold(*default_gc)  # the benchmarks after this one start as they would alone


def _run(default_gc: tuple[int, int, int]) -> Outcome:
    traces = _traces()
    spans = sum(len(t) for t in traces)
    with tempfile.TemporaryDirectory(prefix="coordbench-bench-ch-") as folder:
        connection = connect(f"chdb://{Path(folder) / 'ch'}?create=true")
        try:
            tables = ClickHouseTraces(connection)
            tables.ensure_schema()
            started = time.perf_counter()
            for chunk in range(0, TRACES, 20):  # batches of 20 traces, as a collector's batch mixes them
                tables.insert([s for t in traces[chunk : chunk + 20] for s in t])
            write_s = time.perf_counter() - started
            read_total = 0.0
            for expected in traces:
                started = time.perf_counter()
                read = tables.trace(expected[0].trace_id)
                read_total += time.perf_counter() - started
                assert len(read) == len(expected)
            memory = _memory_store(traces)
            reads: dict[str, list[float]] = {"batch": [], "memory": [], "default batch": [], "default memory": []}
            batches: list[dict[str, list[SpanData]]] = []
            for _ in range(ROUNDS):
                for policy, thresholds in (("", THRESHOLDS), ("default ", default_gc)):
                    gc.set_threshold(*thresholds)
                    took, batches = _batched_read_s(tables, traces)
                    reads[f"{policy}batch"].append(took)
                    reads[f"{policy}memory"].append(_memory_read_s(memory, traces))
            gc.set_threshold(*THRESHOLDS)
            del memory
            evaluate: list[float] = []
            with Replays() as replays:
                for read_many in batches:
                    for trace_id, read in read_many.items():
                        started = time.perf_counter()
                        replays.run(trace_id, read).to_json()
                        evaluate.append(time.perf_counter() - started)
            watch_small = _watch_s(tables)
            connection.command(
                f"INSERT INTO {tables.index_table} SELECT lower(hex(randomString(16))), now(), now() "  # noqa: S608 - our table
                f"FROM numbers({WATCHED})"
            )
            watch_large = _watch_s(tables)
        finally:
            connection.close()
    return Outcome(
        spans=spans,
        write_s=write_s,
        read_s=read_total,
        batch_read_s=reads["batch"],
        memory_read_s=reads["memory"],
        default_gc_batch_read_s=reads["default batch"],
        default_gc_memory_read_s=reads["default memory"],
        evaluate_s=evaluate,
        watch_small_s=watch_small,
        watch_large_s=watch_large,
    )


def report(o: Outcome) -> str:
    read_rate = o.spans / o.read_s
    batch_rate = o.spans / statistics.median(o.batch_read_s)
    memory_rate = o.spans / statistics.median(o.memory_read_s)
    ratios = sorted(m / b for b, m in zip(o.batch_read_s, o.memory_read_s, strict=True))
    default_ratio = statistics.median(o.default_gc_memory_read_s) / statistics.median(o.default_gc_batch_read_s)
    read_one = statistics.median(o.batch_read_s) / TRACES
    per_core = 1 / (read_one + statistics.median(o.evaluate_s))
    lines = [
        "## ClickHouse store (`benchmarks/clickhouse.py`)",
        "",
        f"{TRACES} twenty-agent traces ({o.spans:,} spans, captured text) in the exporter's tables of the ClickHouse "
        "engine embedded in the process (chdb), written through coordbench's exporter row mapping, then each read "
        "back by trace id through the trace-id index table, one trace a query and in batches of "
        f"{READ_BATCH} (as online evaluation reads them), and evaluated in this process (one core). Baseline in "
        f"the same run: the same traces read from the in-memory store. Batched reads and the baseline alternate, "
        f"{ROUNDS} rounds, and the read figures are medians; the garbage collector is set as `coordbench serve` "
        "sets it (each round also reads both ways under CPython's default thresholds: the row below the ratios).",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| spans/s written (our row mapping, JSONEachRow inserts of 20 traces) | {o.spans / o.write_s:,.0f} |",
        f"| spans/s read back, from ClickHouse, one trace a query | {read_rate:,.0f} |",
        f"| spans/s read back for evaluation, from ClickHouse, {READ_BATCH} traces a query | {batch_rate:,.0f} |",
        f"| spans/s read back, from the in-memory store (baseline) | {memory_rate:,.0f} |",
        f"| ClickHouse / memory: one a query · batched (goal: at least 0.5) | {read_rate / memory_rate:.2f} · "
        f"{batch_rate / memory_rate:.2f} |",
        f"| batched / memory, each round (lowest to highest) | {' · '.join(f'{r:.2f}' for r in ratios)} |",
        f"| batched / memory under CPython's default collector thresholds (median) | {default_ratio:.2f} |",
        f"| read of one trace, batched | {read_one * 1e3:.1f} ms |",
        f"| evaluation of one trace, median | {statistics.median(o.evaluate_s) * 1e3:.1f} ms |",
        f"| traces read and evaluated per second per core | {per_core:.1f} |",
        f"| one look at the index table, {TRACES} traces in the window | {o.watch_small_s * 1e3:.1f} ms |",
        f"| one look, {TRACES + WATCHED:,} traces in the window | {o.watch_large_s * 1e3:.1f} ms |",
        "",
        "Cores a load needs (20-agent traces of about 200 spans, read from ClickHouse and evaluated; the "
        "receivers' OTLP ingest beside it: see receiver ingest):",
        "",
        "| traces/s | spans/s | evaluation cores |",
        "|---:|---:|---:|",
    ]
    for load in LOADS:
        lines.append(f"| {load:,} | {load * TRACE_SPANS:,} | {load / per_core:.1f} |")
    return "\n".join(lines)
