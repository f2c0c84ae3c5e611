"""Latency percentiles: NumPy's linear interpolation, to the last bit, without NumPy's cost per call."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coordbench.evals.latency import latency_stats, percentiles

DURATIONS = st.lists(st.floats(0, 1e9, allow_nan=False, allow_infinity=False), min_size=1, max_size=300)


@settings(max_examples=500, deadline=None)
@given(DURATIONS, st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=5))
def test_percentiles_are_numpys_bit_for_bit(values: list[float], qs: list[float]) -> None:
    assert percentiles(values, qs) == [float(v) for v in np.percentile(np.asarray(values, dtype=float), qs)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10_000).map(lambda ns: ns / 1e3), min_size=1, max_size=50))
def test_durations_in_milliseconds_too(values: list[float]) -> None:
    # what the evaluator sees: span durations in ms, many equal
    expected = [float(v) for v in np.percentile(np.asarray(values, dtype=float), [50, 95, 99])]
    stats = latency_stats(values)
    assert [stats.p50_ms, stats.p95_ms, stats.p99_ms] == expected


def test_hand_worked() -> None:
    # four values: p50 halfway between the 2nd and 3rd, p95 at index 2.85 (30 + 0.85 * 10), p99 at 2.97
    found = percentiles([40.0, 10.0, 30.0, 20.0], [50, 95, 99, 100, 0])
    assert all(math.isclose(a, b) for a, b in zip(found, [25.0, 38.5, 39.7, 40.0, 10.0], strict=True))
    assert percentiles([7.0], [50, 99]) == [7.0, 7.0]
