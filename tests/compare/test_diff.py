"""What a comparison reports, on team runs evaluated offline by the real pipeline (:mod:`compare.runs`).

Each change of team behaviour is reported as the matching regression, naming the part and the
agents; the same team twice is no regression; a difference inside the runs' noise is not one.
"""

from __future__ import annotations

from typing import Any

import pytest

from compare.runs import SERIAL, STAR, THROUGH_A_RELAY, WRITER_FAILS, WRITER_LEFT_OUT, row
from coordbench.compare import Comparison, broken, compare_rows, parse_rules
from coordbench.compare.diff import SINGLE_RUN_NOISE
from coordbench.results.document import ResultRow
from evals.teams import Team

RUNS = 3


@pytest.fixture(scope="module")
def star() -> ResultRow:
    return row(STAR, RUNS)


def _compare(base: ResultRow, head: Team | ResultRow, runs: int = RUNS) -> Comparison:
    head_row = head if isinstance(head, ResultRow) else row(head, runs)
    return compare_rows([base], [head_row], base_label="base", head_label="head")


def _regressed(comparison: Comparison) -> set[str]:
    return {d.name for d in comparison.scenarios[0].regressions}


def _new(comparison: Comparison) -> dict[str, list[str]]:
    return {e.evidence: e.agents for e in comparison.scenarios[0].evidence_new}


def test_the_same_team_twice_is_no_regression_and_intervals_are_given(star: ResultRow) -> None:
    comparison = _compare(star, STAR)
    assert not comparison.regressed
    scenario = comparison.scenarios[0]
    assert scenario.runs == (RUNS, RUNS)
    score = scenario.delta("score")
    assert score is not None and score.interval is not None and score.change == pytest.approx(0.0, abs=1e-12)
    assert score.verdict == "unchanged"
    assert not scenario.evidence_new and not scenario.evidence_cleared
    assert comparison.notes == []  # every figure had runs enough for an interval


def test_a_serial_star_is_a_parallelism_regression_naming_the_hub(star: ResultRow) -> None:
    comparison = _compare(star, SERIAL)
    assert {"score", "coordination", "parallelism"} <= _regressed(comparison)
    assert _new(comparison) == {"parallelism.serialised_work": ["coordinator"]}
    parallelism = comparison.scenarios[0].delta("parallelism")
    assert parallelism is not None and parallelism.interval is not None and parallelism.interval[1] < 0
    # the workers now wait for each other: their calls join the critical path, which grows
    path = comparison.scenarios[0].critical_path
    assert set(path.joined) >= {"coordinator -> analyst", "coordinator -> writer"}
    longer = comparison.scenarios[0].delta("critical_path_ms")
    assert longer is not None and longer.change is not None and longer.change > 0 and not longer.scored


def test_a_member_left_out_is_a_participation_regression_naming_it(star: ResultRow) -> None:
    comparison = _compare(star, WRITER_LEFT_OUT)
    assert {"participation", "efficiency"} <= _regressed(comparison)
    assert _new(comparison)["participation.idle_members"] == ["writer"]
    assert comparison.scenarios[0].graph.edges_gone == ["coordinator -> writer"]


def test_a_relay_added_is_an_information_flow_regression_naming_it(star: ResultRow) -> None:
    comparison = _compare(star, THROUGH_A_RELAY)
    assert "information_flow" in _regressed(comparison)
    assert _new(comparison)["information_flow.relays_add_nothing"] == ["relay"]
    graph = comparison.scenarios[0].graph
    assert graph.agents_added == ["relay"]
    assert graph.edges_added == ["coordinator -> relay", "relay -> writer"]
    assert "relay -> writer" in comparison.scenarios[0].critical_path.joined


def test_a_failing_member_is_a_robustness_regression_naming_it(star: ResultRow) -> None:
    comparison = _compare(star, WRITER_FAILS)
    assert "robustness" in _regressed(comparison)
    assert _new(comparison) == {"robustness.failed_calls": ["writer"]}


def test_the_reverse_change_is_an_improvement_and_clears_the_evidence(star: ResultRow) -> None:
    comparison = compare_rows([row(SERIAL, RUNS)], [star], base_label="serial", head_label="parallel")
    assert not comparison.regressed
    parallelism = comparison.scenarios[0].delta("parallelism")
    assert parallelism is not None and parallelism.verdict == "improvement"
    assert [e.evidence for e in comparison.scenarios[0].evidence_cleared] == ["parallelism.serialised_work"]


def _scored(base: ResultRow, scores: list[float]) -> ResultRow:
    """``base`` with its runs' overall scores replaced (the noise a live team's runs have)."""
    entries = [e.model_copy(update={"score": s}) for e, s in zip(base.detail.scenarios, scores, strict=True)]
    return base.model_copy(update={"detail": base.detail.model_copy(update={"scenarios": entries})})


def test_a_difference_inside_the_noise_is_not_a_regression(star: ResultRow) -> None:
    noisy_base = _scored(star, [0.80, 0.86, 0.78])
    noisy_head = _scored(star, [0.79, 0.84, 0.81])
    score = _compare(noisy_base, noisy_head).scenarios[0].delta("score")
    assert score is not None and score.interval is not None
    assert score.interval[0] < 0 < score.interval[1] and score.verdict == "unchanged"
    # the same mean drop with no spread is beyond the noise
    steady = _compare(_scored(star, [0.81, 0.81, 0.81]), _scored(star, [0.78, 0.78, 0.78])).scenarios[0]
    assert steady.delta("score") is not None and steady.delta("score").verdict == "regression"  # type: ignore[union-attr]


def test_one_run_a_side_says_no_interval_and_uses_the_busy_machine_tolerance() -> None:
    base = row(STAR, 1)
    small = _scored(base, [base.detail.scenarios[0].score - SINGLE_RUN_NOISE / 2])
    comparison = _compare(base, small)
    score = comparison.scenarios[0].delta("score")
    assert score is not None and score.interval is None and score.verdict == "unchanged"
    assert any("no interval can be given" in note for note in comparison.notes)
    assert _compare(base, SERIAL, runs=1).scenarios[0].delta("parallelism").verdict == "regression"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("rules", "head", "fails"),
    [
        ("score<-0.05", SERIAL, True),
        ("score<-0.5", SERIAL, False),  # it fell, but by less than the rule allows
        ("parallelism<-0.1", SERIAL, True),
        ("robustness<-0.1", SERIAL, False),
        ("new:serialised_work", SERIAL, True),
        ("new:parallelism.serialised_work", SERIAL, True),
        ("new:idle_members", SERIAL, False),
        ("new:idle_members", WRITER_LEFT_OUT, True),
        ("new:*", WRITER_FAILS, True),
        ("critical_path_ms>+10%", SERIAL, True),
        ("regression", STAR, False),
        ("regression", WRITER_FAILS, True),
        ("score<-0.05,new:relays_add_nothing", THROUGH_A_RELAY, True),
    ],
)
def test_fail_on_rules_fire_only_on_a_matching_regression(star: ResultRow, rules: str, head: Team, fails: bool) -> None:
    found = broken(parse_rules(rules), _compare(star, head))
    assert bool(found) == fails, found
    if fails:
        assert all(line.split(":", 1)[0] in rules for line in found)


def test_a_broken_rule_names_the_figure_the_scenario_and_the_agents(star: ResultRow) -> None:
    found = broken(parse_rules("parallelism<-0.1,new:serialised_work"), _compare(star, SERIAL))
    assert any(line.startswith("parallelism<-0.1: scenario s1: parallelism 1.000 -> 0.351") for line in found), found
    assert any("parallelism.serialised_work fired (coordinator) in 3 of 3 run(s)" in line for line in found), found


def test_the_same_runs_give_the_same_json(star: ResultRow) -> None:
    head = row(SERIAL, RUNS)
    first = _compare(star, head).to_json()
    assert first == _compare(star, head).to_json()
    data: dict[str, Any] = _compare(star, head).wire()
    assert data["scenarios"][0]["scenario"] == "s1"
