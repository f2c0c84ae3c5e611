"""The noise of a difference between two sets of runs, against hand-worked values and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from coordbench.compare.noise import difference


def test_the_permutation_p_value_is_the_hand_counted_share_of_relabellings() -> None:
    # pooled 1, 2, 3, 4; C(4, 2) = 6 relabellings; |mean difference| >= 2 only for {3, 4} and {1, 2}
    found = difference([1.0, 2.0], [3.0, 4.0])
    assert found.change == 2.0
    assert found.p_value == pytest.approx(2 / 6)


@pytest.mark.parametrize(
    ("base", "head"),
    [
        ([0.81, 0.80, 0.83], [0.70, 0.74, 0.69]),
        ([0.50, 0.52, 0.49, 0.55], [0.51, 0.53, 0.48]),
        ([0.9, 0.9, 0.9], [0.9, 0.9, 0.9]),
    ],
)
def test_the_exact_permutation_test_agrees_with_scipy(base: list[float], head: list[float]) -> None:
    ours = difference(base, head)
    theirs = stats.permutation_test(
        (np.array(head), np.array(base)),
        lambda x, y: abs(np.mean(x) - np.mean(y)),  # two-sided as the share of |difference| at least observed
        permutation_type="independent",
        alternative="greater",
        n_resamples=np.inf,
    )
    assert ours.p_value == pytest.approx(float(theirs.pvalue), abs=1e-9)


def test_the_bootstrap_interval_holds_the_change_and_follows_scipy() -> None:
    rng = np.random.default_rng(3)
    base = list(rng.normal(0.80, 0.02, size=8))
    head = list(rng.normal(0.74, 0.02, size=8))
    ours = difference(base, head)
    assert ours.interval is not None
    low, high = ours.interval
    assert low < ours.change < high < 0  # a clear drop: the whole interval below zero
    theirs = stats.bootstrap(
        (np.array(head), np.array(base)),
        lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        method="percentile",
        n_resamples=4000,
        random_state=1,
    ).confidence_interval
    # two samplings of the same distribution: the ends agree to within a small part of the spread
    spread = float(theirs.high - theirs.low)
    assert abs(low - theirs.low) < 0.15 * spread and abs(high - theirs.high) < 0.15 * spread


def test_one_run_a_side_gives_no_interval_and_runs_are_counted() -> None:
    found = difference([0.8], [0.7, 0.72])
    assert (found.interval, found.p_value, found.runs, found.measured) == (None, None, (1, 2), False)
    assert found.change == pytest.approx(-0.09)


def test_the_same_runs_give_the_same_figures() -> None:
    base, head = [0.8, 0.82, 0.79, 0.85], [0.7, 0.75, 0.71, 0.69]
    assert difference(base, head) == difference(base, head)


def test_a_side_without_runs_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one run"):
        difference([], [0.5])
