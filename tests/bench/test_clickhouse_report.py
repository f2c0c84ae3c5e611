"""The ClickHouse benchmark's report: medians of the alternating rounds, per-round ratios, cores (hand-worked)."""

from __future__ import annotations

from benchmarks.clickhouse import TRACES, Outcome, report


def _outcome() -> Outcome:
    return Outcome(
        spans=40_000,
        write_s=4.0,
        read_s=10.0,
        batch_read_s=[2.0, 1.0, 4.0, 1.0, 1.0],  # median 1 s: 40,000 spans/s
        memory_read_s=[1.0, 0.5, 1.0, 0.25, 0.5],  # median 0.5 s: 80,000 spans/s
        default_gc_batch_read_s=[2.0, 2.0, 2.0, 3.0, 1.0],  # median 2 s
        default_gc_memory_read_s=[0.5, 0.5, 0.5, 0.5, 0.5],  # median 0.5 s
        evaluate_s=[0.015, 0.010, 0.020],  # median 15 ms
        watch_small_s=0.006,
        watch_large_s=0.4,
    )


def test_the_ratio_is_of_the_medians_and_each_round_is_shown() -> None:
    text = report(_outcome())
    assert "| spans/s read back for evaluation, from ClickHouse, 32 traces a query | 40,000 |" in text
    assert "| spans/s read back, from the in-memory store (baseline) | 80,000 |" in text
    # one a query: 40,000 / 10 s = 4,000 spans/s, 0.05 of memory; batched 40,000 / 80,000
    assert "| ClickHouse / memory: one a query · batched (goal: at least 0.5) | 0.05 · 0.50 |" in text
    # rounds, memory / batched: 1/2, 0.5/1, 1/4, 0.25/1, 0.5/1
    assert "| batched / memory, each round (lowest to highest) | 0.25 · 0.25 · 0.50 · 0.50 · 0.50 |" in text
    assert "| batched / memory under CPython's default collector thresholds (median) | 0.25 |" in text


def test_cores_follow_the_batched_read_and_the_evaluation() -> None:
    text = report(_outcome())
    read_one_ms = 1.0 / TRACES * 1e3  # the median round's read, shared by its traces: 5 ms
    assert f"| read of one trace, batched | {read_one_ms:.1f} ms |" in text
    # 5 ms read + 15 ms evaluation: 50 traces a second per core; 1,000 traces/s need 20 cores
    assert "| traces read and evaluated per second per core | 50.0 |" in text
    assert "| 1,000 | 200,000 | 20.0 |" in text
    assert "| 10 | 2,000 | 0.2 |" in text
