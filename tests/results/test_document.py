"""The results contract: one set of models for results.json, its published JSON Schema, its errors.

A document is built from a real evaluation of a small trace (offline), written by the green's own
writer, and read back through the models: the bytes survive the round trip, the schema in
``docs/`` accepts it, and every column the AgentBeats leaderboard query reads is a required field.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from coordbench.cli import app
from coordbench.evals import EvalContext, EvalPipeline, EvalScenario, TeamOutcome
from coordbench.results import AssessmentReport, ScenarioReport, agentbeats_results, summary_text
from coordbench.results.document import ResultRow, ResultsDocument, ResultsDocumentError, schema_text
from coordbench.spans import SpanData
from evals.traces import client, server
from support.spans import sid, span

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "results.schema.json"


def _trace() -> list[SpanData]:
    return [
        span("invoke_workflow", span_id=sid(1), start_ms=0, end_ms=100, service="host",
             **{"a2a.step.call_type": "HOST"}),
        client("host", "lead", sid(2), sid(1), 0, 100, request="plan it", reply="the plan"),
        server("lead", sid(3), sid(2), 1, 99),
        client("lead", "writer", sid(4), sid(3), 10, 40, request="write", reply="written"),
        server("writer", sid(5), sid(4), 11, 39),
        client("lead", "critic", sid(6), sid(3), 10, 45, request="review", reply="reviewed"),
        server("critic", sid(7), sid(6), 11, 44),
    ]  # fmt: skip


def _report(*, repeat: int | None = None) -> AssessmentReport:
    spans = _trace()
    ctx = EvalContext.build(
        spans,
        scenario=EvalScenario(id="s1", task="plan it", references=["a plan"]),
        hosts=["host"],
        participants=["lead", "writer", "critic"],
        outcome=TeamOutcome(state="completed", output="the plan: written and reviewed"),
    )
    evaluation = asyncio.run(EvalPipeline().run(ctx))
    scenario = ScenarioReport(
        id="s1" if repeat is None else f"s1#{repeat}", mode="live", status="evaluated", trace_id=spans[0].trace_id,
        outcome=ctx.outcome, evaluation=evaluation, completeness={"complete": True, "span_count": 7},
        repeat=repeat,
    )  # fmt: skip
    return AssessmentReport(
        assessment_id="a1",
        participants={"lead": "http://127.0.0.1:1/"},
        scenarios=[scenario],
        time_used=1.5,
        config={"participant_ids": {"lead": "agentbeats-lead"}},
    )


def test_the_published_schema_is_the_models_schema() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), "run `make schema` and commit docs/results.schema.json"


def test_a_written_document_round_trips_byte_for_byte_and_the_schema_accepts_it() -> None:
    document = agentbeats_results(_report())
    text = document.text()
    data = json.loads(text)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(data)
    assert ResultsDocument.read(data).text() == text
    assert data["participants"] == {"lead": "agentbeats-lead"}  # the AgentBeats id, not the URL
    entry = data["results"][0]["detail"]["scenarios"][0]
    assert "repeat" not in entry and "scenario" not in entry  # written only for repeated runs
    assert entry["error"] is None and entry["expected_label"] is None  # always written, null or not
    row = document.results[0]
    coordination = row.detail.scenarios[0].coordination()
    assert coordination is not None and row.task_rewards.coordination_quality == pytest.approx(
        coordination.coordination_quality
    )
    graph = row.detail.scenarios[0].graph()
    assert graph is not None and {a.name for a in graph.agents} >= {"lead", "writer", "critic"}


def test_a_repeated_run_writes_its_scenario_and_repeat() -> None:
    entry = agentbeats_results(_report(repeat=2)).wire()["results"][0]["detail"]["scenarios"][0]
    assert (entry["id"], entry["scenario"], entry["repeat"]) == ("s1#2", "s1", 2)


def test_every_column_the_leaderboard_reads_is_required() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    assert "results" in schema["required"]
    assert {"score", "pass_rate", "task_rewards", "max_score", "time_used"} <= set(defs["ResultRow"]["required"])
    rewards = {"overall_score", "graph_density", "answer_quality", "coordination_quality"}
    assert rewards <= set(defs["TaskRewards"]["required"])


def test_the_summary_reads_the_row() -> None:
    report = _report()
    text = summary_text(report)
    row = agentbeats_results(report).results[0]
    assert text.startswith(f"coordbench assessment a1: score {row.score:.1f}/100, 1/1 scenarios passed")
    assert "- s1 [live]: score" in text and "(answer " in text


def _bad(mutate: Any) -> dict[str, Any]:
    data = agentbeats_results(_report()).wire()
    mutate(data)
    return data


def _scenario(d: dict[str, Any]) -> dict[str, Any]:
    return d["results"][0]["detail"]["scenarios"][0]


def _rename_rewards(d: dict[str, Any]) -> None:
    d["results"][0]["task_reward"] = d["results"][0].pop("task_rewards")


@pytest.mark.parametrize(
    ("mutate", "named"),
    [
        (lambda d: _scenario(d).pop("score"), "results.0.detail.scenarios.0.score: Field required"),
        (lambda d: d["results"][0]["task_rewards"].update(coordination_quality="high"),
         "results.0.task_rewards.coordination_quality: Input should be a valid number"),
        (_rename_rewards, "results.0.task_rewards: Field required"),
        (lambda d: _scenario(d).update(status="done"),
         "results.0.detail.scenarios.0.status: Input should be 'evaluated', 'error' or 'failed'"),
        (lambda d: d.pop("results"), "results: Field required"),
    ],
)  # fmt: skip
def test_a_bad_document_names_the_field(mutate: Any, named: str) -> None:
    with pytest.raises(ResultsDocumentError) as caught:
        ResultsDocument.read(_bad(mutate), source="r.json")
    assert caught.value.message.startswith("r.json is not a results.json document: ")
    assert named in caught.value.message


def test_a_row_that_is_not_one_is_refused() -> None:
    with pytest.raises(ResultsDocumentError, match=r"not a results row: .*domain: Field required"):
        ResultRow.read({"score": 1})


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "is not valid JSON"),
        ('{"results": [{"score": 1}]}', "is not a results.json document: results.0.domain: Field required"),
        ("[]", "is not a results.json document: document: Input should be a valid dictionary"),
    ],
)
def test_report_of_a_bad_results_file_exits_2_naming_what_is_wrong(tmp_path: Path, content: str, said: str) -> None:
    bad = tmp_path / "results.json"
    bad.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["report", str(bad), "--output", str(tmp_path / "r.html")])
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())
    assert not (tmp_path / "r.html").exists()
