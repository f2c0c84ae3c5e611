"""Coordination assertions on recorded traces: they pass on a good team and fail in plain words on a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from compare.runs import SERIAL, STAR, THROUGH_A_RELAY, WRITER_FAILS, WRITER_LEFT_OUT
from coordbench.results.document import ResultsDocument
from coordbench.testing import (
    CoordinationAssertionError,
    RecordingSpanExporter,
    assert_coordination,
    assert_no_regression,
    evaluate_coordination,
)
from evals.teams import TOPIC, Team, team_spans

MEMBERS = ["coordinator", "researcher", "analyst", "writer"]


def _check(team: Team, **expected: object) -> None:
    assert_coordination(team_spans(team), participants=team.members, task=TOPIC, **expected)  # type: ignore[arg-type]


def test_a_good_team_passes_and_its_row_is_returned() -> None:
    row = assert_coordination(team_spans(STAR), min_score=0.8, max_idle=0, min_parallelism=0.9,
                              no_evidence=["relays_add_nothing"], participants=MEMBERS, task=TOPIC)  # fmt: skip
    assert row.detail.scenarios[0].score >= 0.8


def test_serial_work_fails_min_parallelism_naming_the_hub_and_its_calls() -> None:
    with pytest.raises(CoordinationAssertionError) as caught:
        _check(SERIAL, min_parallelism=0.9)
    message = str(caught.value)
    assert message.startswith("coordination fell short:\n- parallelism 0.351 is below 0.9: ")
    assert "coordinator" in message and "(calls " in message


def test_a_member_left_out_fails_max_idle_naming_it() -> None:
    with pytest.raises(CoordinationAssertionError, match=r"1 member\(s\) took no part \(at most 0\): writer"):
        _check(WRITER_LEFT_OUT, max_idle=0)


def test_forbidden_evidence_fails_naming_the_agent() -> None:
    with pytest.raises(CoordinationAssertionError) as caught:
        _check(THROUGH_A_RELAY, no_evidence=["relays_add_nothing"])
    assert "information_flow.relays_add_nothing fired: " in str(caught.value) and "relay" in str(caught.value)


def test_every_shortfall_is_named_at_once() -> None:
    with pytest.raises(CoordinationAssertionError) as caught:
        _check(WRITER_FAILS, min_score=0.99, min_parts={"robustness": 1.0}, no_evidence=["failed_calls"])
    lines = str(caught.value).splitlines()[1:]
    assert [line.split(" ", 2)[1] for line in lines] == ["score", "robustness", "robustness.failed_calls"]
    assert all("writer" in line for line in lines[1:])


def test_an_unknown_part_or_an_empty_trace_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown part"):
        assert_coordination(team_spans(STAR), min_parts={"speed": 1.0})
    with pytest.raises(CoordinationAssertionError, match="no spans to judge"):
        assert_coordination(RecordingSpanExporter())


def test_no_regression_against_a_saved_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "results.json"
    row = evaluate_coordination(team_spans(STAR), participants=MEMBERS, task=TOPIC)
    baseline.write_text(ResultsDocument.of([row]).text(), encoding="utf-8")
    comparison = assert_no_regression(baseline, team_spans(STAR), participants=MEMBERS, task=TOPIC)
    assert not comparison.regressed
    with pytest.raises(CoordinationAssertionError) as caught:
        assert_no_regression(baseline, team_spans(SERIAL), participants=MEMBERS, task=TOPIC, tolerance=0.05)
    message = str(caught.value)
    assert message.startswith("coordination regressed:\n- ")
    assert "parallelism<-0.050000: scenario " in message and "parallelism 1.000 -> 0.351" in message
    assert "new evidence, by agent:\n- parallelism.serialised_work: coordinator" in message
    # a tolerance wider than the fall lets it pass, evidence aside
    assert_no_regression(row, team_spans(SERIAL), participants=MEMBERS, task=TOPIC, tolerance=0.9, new_evidence=False)
