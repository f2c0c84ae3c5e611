"""A hostile trace costs what its size says: evaluation grows linearly on the shapes built to make it grow faster.

Each shape of :mod:`tests.cost.hostile` is evaluated whole (every evaluator and failure
attribution) at 2,000 and at 8,000 spans (the fingerprints-only shape at 1,000 and 4,000). Four
times the spans may cost at most eight times the CPU time and the peak memory: linear work gives
about four, work that compares every call with every other sixteen. CPU time of this process
(its evaluator threads included), never a clock: a busy machine slows both runs alike.
``make bench`` evaluates the first three shapes at 100,000 spans.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable

import pytest
from tests.cost.hostile import distinct_prints, one_root, same_text, self_calls

from coordbench.evals import JudgeConfig
from coordbench.evals.evaluation import TraceEvaluation
from coordbench.evals.replay import replay
from coordbench.spans import SpanData

SMALL, LARGE = 2_000, 8_000
GROWTH = 8.0
"""Most a four times larger trace may cost, in CPU time and in peak memory: linear is 4, quadratic 16."""

pytestmark = pytest.mark.slow


def _evaluate(spans: list[SpanData]) -> TraceEvaluation:
    return asyncio.run(replay(spans[0].trace_id, spans, judge=JudgeConfig(), attribution="always"))


def _cpu(spans: list[SpanData]) -> float:
    gc.collect()
    started = time.process_time()
    evaluation = _evaluate(spans)
    spent = time.process_time() - started
    assert not evaluation.evaluations[0].failures  # every evaluator finished: nothing timed out or failed
    return spent


def _peak(spans: list[SpanData]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        _evaluate(spans)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("shape", "size", "memory"),
    [
        (self_calls, SMALL, True),
        (one_root, SMALL, True),
        (same_text, SMALL, True),
        (distinct_prints, SMALL // 2, False),
    ],
    ids=["self_calls", "one_root", "same_text", "distinct_prints"],
)
def test_a_hostile_shape_costs_linear_time_and_memory(
    shape: Callable[[int], list[SpanData]], size: int, memory: bool
) -> None:
    # without captured text every pair a window compares costs a fingerprint estimate (2 ms a span): half
    # the size still puts two windows (256 calls) of messages in the smaller trace, and its memory is the
    # same spans and calls the other shapes measure, not measured again
    small, large = shape(size), shape(4 * size)
    assert len(large) >= 4 * len(small) - 4
    _cpu(small)  # imports and caches warmed, so the small run is not charged for them
    cpu_small, cpu_large = _cpu(small), _cpu(large)
    assert cpu_large <= GROWTH * cpu_small, f"CPU time grew {cpu_large / cpu_small:.1f}x for 4x the spans"
    if not memory:
        return
    peak_small, peak_large = _peak(small), _peak(large)
    assert peak_large <= GROWTH * peak_small, f"peak memory grew {peak_large / peak_small:.1f}x for 4x the spans"


def test_the_ratio_catches_quadratic_work() -> None:
    # the yardstick itself: pairwise work over the same sizes grows sixteen times, past GROWTH
    def pairs(n: int) -> float:
        started = time.process_time()
        items = list(range(n // 10))
        sum(1 for a in items for b in items if a < b)
        return time.process_time() - started

    pairs(SMALL)
    assert pairs(LARGE) > GROWTH * pairs(SMALL)
