"""How far a difference between two sets of runs is beyond their noise.

With at least two runs on each side, a difference of means gets a 95% percentile bootstrap
interval (each side resampled with replacement) and a two-sided permutation p-value (exact when
the relabellings are few enough to count, else a fixed-seed sample). Both use a fixed seed, so
the same runs always give the same figures (evaluation is deterministic, comparisons too).
With one run on a side no interval can be given: :attr:`Difference.interval` is ``None``.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BOOTSTRAP_RESAMPLES", "PERMUTATIONS", "Difference", "difference"]

BOOTSTRAP_RESAMPLES = 4000
"""Bootstrap resamples per interval."""
PERMUTATIONS = 20_000
"""Relabellings counted exactly up to this many; sampled (this many) beyond."""
_SEED = 20261126
_LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Difference:
    """``mean(head) - mean(base)``, with its noise when it can be measured.

    Attributes:
        base: Mean over the base runs.
        head: Mean over the head runs.
        change: ``head - base``.
        interval: 95% bootstrap interval of the change (``None`` with fewer than two runs a side).
        p_value: Two-sided permutation p-value (``None`` with fewer than two runs a side).
        runs: Runs on each side, ``(base, head)``.
    """

    base: float
    head: float
    change: float
    interval: tuple[float, float] | None
    p_value: float | None
    runs: tuple[int, int]

    @property
    def measured(self) -> bool:
        """Both sides have at least two runs: the noise is measured."""
        return self.interval is not None


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (NumPy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _bootstrap(base: Sequence[float], head: Sequence[float]) -> tuple[float, float]:
    rng = random.Random(_SEED)  # noqa: S311 - resampling, not secrecy: a fixed seed keeps comparisons reproducible
    changes = sorted(
        statistics.fmean(rng.choices(head, k=len(head))) - statistics.fmean(rng.choices(base, k=len(base)))
        for _ in range(BOOTSTRAP_RESAMPLES)
    )
    tail = (1 - _LEVEL) / 2
    return _quantile(changes, tail), _quantile(changes, 1 - tail)


def _permutation(base: Sequence[float], head: Sequence[float]) -> float:
    pooled = [*base, *head]
    n, total = len(head), sum(pooled)
    observed = abs(statistics.fmean(head) - statistics.fmean(base))
    slack = 1e-12 * max(1.0, observed)

    def extreme(chosen: Sequence[float]) -> bool:
        mean_head = sum(chosen) / n
        mean_base = (total - sum(chosen)) / (len(pooled) - n)
        return abs(mean_head - mean_base) >= observed - slack

    if math.comb(len(pooled), n) <= PERMUTATIONS:
        labellings = list(itertools.combinations(pooled, n))
        return sum(extreme(c) for c in labellings) / len(labellings)
    rng = random.Random(_SEED)  # noqa: S311 - as above
    hits = sum(extreme(rng.sample(pooled, n)) for _ in range(PERMUTATIONS))
    return (hits + 1) / (PERMUTATIONS + 1)


def difference(base: Sequence[float], head: Sequence[float]) -> Difference:
    """The difference of the means of two sets of runs, with its interval and p-value when measurable.

    Args:
        base: One value per base run (at least one).
        head: One value per head run (at least one).

    Raises:
        ValueError: If a side has no runs.

    Example:
        >>> d = difference([0.80, 0.82, 0.81], [0.70, 0.71, 0.69])
        >>> round(d.change, 3), d.interval is not None and d.interval[1] < 0
        (-0.11, True)
        >>> difference([0.8], [0.7]).interval is None
        True
    """
    if not base or not head:
        raise ValueError("each side needs at least one run")
    mean_base, mean_head = statistics.fmean(base), statistics.fmean(head)
    measured = len(base) >= 2 and len(head) >= 2
    return Difference(
        base=mean_base,
        head=mean_head,
        change=mean_head - mean_base,
        interval=_bootstrap(base, head) if measured else None,
        p_value=_permutation(base, head) if measured else None,
        runs=(len(base), len(head)),
    )
