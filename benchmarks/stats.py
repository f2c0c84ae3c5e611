"""Distribution-free estimates for benchmarks that rotate blocks of calls over several modes.

On a shared machine, the time of a call drifts during a run by more than the effects we
measure. Rounds of blocks (one block per mode, back to back) see nearly the same machine
state, so the difference between two modes' block medians in the same round is a paired
observation; the median of those differences, with a confidence interval from order
statistics (the sign test: no assumption about their distribution), says how sure a figure
is, and whether a target is met, missed, or not decided by the run.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

__all__ = ["PairedEstimate", "median_ci_ranks", "paired_estimate", "verdict"]


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int]:
    """1-based ranks ``(lo, hi)`` of the order statistics that bound the median of ``n`` values.

    The interval ``[x_(lo), x_(hi)]`` covers the population median with probability at least
    ``confidence``: ``lo`` is the largest rank with ``P(Binomial(n, 1/2) < lo) <= (1 - confidence) / 2``.

    Raises:
        ValueError: when ``n`` is too small for any interval at that confidence (fewer than 6
            values at 95%).
    """
    tail = (1 - confidence) / 2
    below = 0.0  # P(B <= k - 1) for the rank k being tried
    lo = 0
    for k in range(1, n // 2 + 1):
        below += comb(n, k - 1) / 2**n
        if below > tail:
            break
        lo = k
    if lo == 0:
        raise ValueError(f"{n} values cannot bound a median with {confidence:.0%} confidence")
    return lo, n + 1 - lo


@dataclass(frozen=True, slots=True)
class PairedEstimate:
    """The median of paired differences, with a distribution-free 95% confidence interval."""

    median: float
    low: float
    high: float
    rounds: int


def paired_estimate(differences: Sequence[float]) -> PairedEstimate:
    """The median of ``differences`` (one per round) and its 95% confidence interval.

    Raises:
        ValueError: with fewer than 6 differences.
    """
    ordered = sorted(differences)
    lo, hi = median_ci_ranks(len(ordered))
    return PairedEstimate(statistics.median(ordered), ordered[lo - 1], ordered[hi - 1], len(ordered))


def verdict(estimate: PairedEstimate, target: float) -> str:
    """``met`` when the whole interval lies under ``target``, ``missed`` when none of it does, else ``undecided``."""
    if estimate.high < target:
        return "met"
    if estimate.low >= target:
        return "missed"
    return "undecided"
