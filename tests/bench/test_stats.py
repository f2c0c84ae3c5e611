"""The benchmarks' paired-round statistics, against binomial tails from SciPy and hand-worked tables."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from benchmarks.stats import PairedEstimate, median_ci_ranks, paired_estimate, verdict


@pytest.mark.parametrize(("n", "ranks"), [(6, (1, 6)), (20, (6, 15)), (40, (14, 27))])
def test_ranks_match_the_sign_test_table(n: int, ranks: tuple[int, int]) -> None:
    # the published sign-test table for a 95% interval around the median
    assert median_ci_ranks(n) == ranks


def test_ranks_are_the_widest_binomial_tail_within_alpha() -> None:
    for n in range(6, 121):
        lo, hi = median_ci_ranks(n)
        assert hi == n + 1 - lo, n
        assert binom.cdf(lo - 1, n, 0.5) <= 0.025 < binom.cdf(lo, n, 0.5), n


def test_too_few_values_for_an_interval_is_an_error() -> None:
    with pytest.raises(ValueError, match="5 values cannot bound a median with 95% confidence"):
        median_ci_ranks(5)


def test_paired_estimate_reads_the_order_statistics() -> None:
    differences = [float(v) for v in (9, 1, 8, 2, 7, 3, 6, 4, 5, 0, 19, 11, 18, 12, 17, 13, 16, 14, 15, 10)]
    # sorted: 0..19; median of 20 is (9 + 10) / 2; ranks 6 and 15 are 5 and 14
    assert paired_estimate(differences) == PairedEstimate(9.5, 5.0, 14.0, 20)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(10.0, 149.0, "met"), (150.0, 200.0, "missed"), (100.0, 150.0, "undecided"), (149.9, 151.0, "undecided")],
)
def test_verdict_needs_the_whole_interval_on_one_side(low: float, high: float, expected: str) -> None:
    assert verdict(PairedEstimate((low + high) / 2, low, high, 20), 150.0) == expected
