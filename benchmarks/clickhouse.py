"""ClickHouse as the store: spans/s read back for evaluation, traces evaluated per core, the cost of watching.

Everything runs on the ClickHouse engine embedded in this process (chdb 26.9), in the exporter's
tables; a ClickHouse server reads faster on its own cores, so these are a floor for the read.

*Read.* 200 twenty-agent traces (about 200 spans each, with captured message text), started now,
are written through coordbench's exporter row mapping, then read back by trace id: one trace a
query (through the trace-id index table, parsed into spans, as ``GET /v1/traces/{id}`` reads it),
and in batches as online evaluation reads them (the traces waiting in its queue, at most 32, in one
query, the columns evaluation reads). Baseline in the same run: the same traces read from the
in-memory store (OTLP protobuf decoded), the receiver's default.

*Evaluate.* The traces read in batches are evaluated in this process (one core, one event loop for
the batch), as a receiver's worker does: traces per second per core, read included, gives the
cores a load needs.

*Watch.* One look at the index table, as online evaluation makes one a second: its time with the
200 traces, and with 100,000 more traces' index rows in the window (a busy minute's worth).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.evaluation import synthetic_trace
from coordbench.clickhouse import ClickHouseTraces, connect
from coordbench.evals.replay import Replays
from coordbench.online.evaluator import READ_BATCH
from coordbench.otlp import decode_protobuf, export_request
from coordbench.spans import SpanData
from coordbench.store import TraceStore

TRACES = 200
TRACE_SPANS = 200
AGENTS = 20
WATCHED = 100_000
LOADS = (10, 100, 1_000)
"""Loads, in 20-agent traces per second, to say how many cores they need."""


@dataclass
class Outcome:
    spans: int
    write_s: float
    read_s: float
    batch_read_s: float
    memory_read_s: float
    evaluate_s: list[float]
    read_each_s: list[float]
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


def _memory_read_s(traces: list[list[SpanData]]) -> float:
    """Seconds to read every trace back from the in-memory store (protobuf decoded), as the read API does."""

    async def run() -> float:
        store = TraceStore(max_spans=10_000_000, max_traces=100_000)
        for spans in traces:
            await store.add(decode_protobuf(export_request(spans).SerializeToString()).spans)
        started = time.perf_counter()
        for spans in traces:
            build = store.snapshot_builder(spans[0].trace_id)
            assert build is not None
            assert len(build().spans) == len(spans)
        return time.perf_counter() - started

    return asyncio.run(run())


def _watch_s(traces: ClickHouseTraces) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        traces.activity(300.0)
        best = min(best, time.perf_counter() - started)
    return best


def run() -> Outcome:
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
            read_each: list[float] = []  # per trace: its share of its batch's read
            evaluate: list[float] = []
            batch_total = 0.0
            with Replays() as replays:
                for first in range(0, TRACES, READ_BATCH):
                    batch = traces[first : first + READ_BATCH]
                    started = time.perf_counter()
                    read_many = tables.traces([t[0].trace_id for t in batch], for_evaluation=True)
                    took = time.perf_counter() - started
                    batch_total += took
                    for expected in batch:
                        read = read_many[expected[0].trace_id]
                        assert len(read) == len(expected)
                        read_each.append(took / len(batch))
                        started = time.perf_counter()
                        replays.run(expected[0].trace_id, read).to_json()
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
        batch_read_s=batch_total,
        memory_read_s=_memory_read_s(traces),
        evaluate_s=evaluate,
        read_each_s=read_each,
        watch_small_s=watch_small,
        watch_large_s=watch_large,
    )


def report(o: Outcome) -> str:
    read_rate = o.spans / o.read_s
    batch_rate = o.spans / o.batch_read_s
    memory_rate = o.spans / o.memory_read_s
    per_trace = [r + e for r, e in zip(o.read_each_s, o.evaluate_s, strict=True)]
    per_core = 1 / statistics.median(per_trace)
    lines = [
        "## ClickHouse store (`benchmarks/clickhouse.py`)",
        "",
        f"{TRACES} twenty-agent traces ({o.spans:,} spans, captured text) in the exporter's tables of the ClickHouse "
        "engine embedded in the process (chdb), written through coordbench's exporter row mapping, then each read "
        "back by trace id through the trace-id index table, one trace a query and in batches of "
        f"{READ_BATCH} (as online evaluation reads them), and evaluated in this process (one core). Baseline in "
        "the same run: the same traces read from the in-memory store.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| spans/s written (our row mapping, JSONEachRow inserts of 20 traces) | {o.spans / o.write_s:,.0f} |",
        f"| spans/s read back, from ClickHouse, one trace a query | {read_rate:,.0f} |",
        f"| spans/s read back for evaluation, from ClickHouse, {READ_BATCH} traces a query | {batch_rate:,.0f} |",
        f"| spans/s read back, from the in-memory store (baseline) | {memory_rate:,.0f} |",
        f"| ClickHouse / memory: one a query · batched (goal: at least 0.5) | {read_rate / memory_rate:.2f} · "
        f"{batch_rate / memory_rate:.2f} |",
        f"| read of one trace, batched, median | {statistics.median(o.read_each_s) * 1e3:.1f} ms |",
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
