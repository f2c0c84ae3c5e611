"""One replay: a trace assessed with a non-default config is judged the same by every path that reads it back.

A live assessment (the green with online evaluation and a ClickHouse evaluations table, a
coordinator and two workers in their own processes) runs two scenarios under a config that is
not the default: a pass threshold of 0.99, the text evaluator off, a bottleneck threshold of 0.9.
The figures and verdicts of its results.json must then come back identically from
``coordbench evaluate --trace-id``, the green's online evaluation, the ClickHouse
``coordbench_evaluations`` table, ``coordbench compare`` on the trace, ``coordbench report
--trace-id`` and the pytest helper; under the default config the same trace passes, so the test
sees the recorded config applied (the bug this replaced: report and compare used the defaults).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from coordbench.a2a import Messenger
from coordbench.clickhouse import connect
from coordbench.evals.assessment_config import AssessmentConfig
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.evals.evaluation import TraceEvaluation
from coordbench.evals.replay import replay_sync
from coordbench.spans import span_from_dict
from coordbench.testing.coordination import evaluate_coordination
from evals.teams import Team, team_spans, teams
from green.conftest import StartGreen, StartParticipant, start_green, start_participant

__all__ = ["start_green", "start_participant"]  # the fixtures, used here

pytestmark = pytest.mark.slow

COMMAND = [sys.executable, "-m", "coordbench.cli"]
CONFIG: dict[str, Any] = {
    "scenarios": [
        {"id": "launch", "task": "Plan the launch of a note-taking app: owners, timeline, risks.",
         "references": ["Owners per workstream, a dated timeline and the top risks."]},
        {"id": "triage", "task": "Triage the outage of the payments API: cause, impact, next steps.",
         "references": ["The cause, who is affected, and the next steps with owners."]},
    ],
    "pass_threshold": 0.99,
    "disabled_evaluators": ["text"],
    "thresholds": {"bottleneck_betweenness": 0.9},
    "trace_timeout": 60,
    "trace_quiet": 0.5,
}  # fmt: skip


def _cli(*args: str) -> str:
    done = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _online(url: str, trace_id: str) -> dict[str, Any]:
    """The green's online evaluation of the trace, once it has made one (it follows the trace's quiet period)."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for _ in range(1200):
            answer = await http.get(f"/v1/traces/{trace_id}/evaluation")
            if answer.status_code == 200:
                return answer.json()
            assert answer.status_code == 404, answer.text
            await asyncio.sleep(0.1)
    raise AssertionError(f"trace {trace_id} was not evaluated online")


def _verdicts(evaluation: TraceEvaluation) -> dict[str, tuple[float, bool]]:
    return {e.scenario: (e.score.overall, e.passed) for e in evaluation.evaluations}


async def test_every_path_judges_an_assessed_trace_as_its_assessment_did(
    start_green: StartGreen, start_participant: StartParticipant, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    evaluations = f"chdb://{tmp_path / 'ch'}?create=true"
    green = start_green(evaluate=True, evaluate_quiet=0.5, evaluations_store=evaluations)
    coordinator = start_participant("coordinator", green.url, behaviour="fanout")
    workers = [start_participant(name, green.url) for name in ("worker-a", "worker-b")]
    request = {
        "participants": {"coordinator": coordinator.url, "worker_a": workers[0].url, "worker_b": workers[1].url},
        "config": CONFIG,
    }
    async with Messenger(timeout=300) as messenger:
        reply = await messenger.send(green.url, json.dumps(request))
    assert reply.state == "completed", reply.text
    row = reply.data[0]
    assessed = {s["id"]: (s["score"], s["passed"]) for s in row["detail"]["scenarios"]}
    (trace_id,) = {s["trace_id"] for s in row["detail"]["scenarios"]}
    assert set(assessed) == {"launch", "triage"}
    assert not any(passed for _, passed in assessed.values())  # 0.99 is out of reach

    # coordbench evaluate --trace-id: the assessment's figures and verdicts, from the recorded config
    line = _cli("evaluate", "--trace-id", trace_id, "--receiver", green.url).strip()
    evaluated = TraceEvaluation.from_json(line)
    assert _verdicts(evaluated) == assessed
    for scenario in evaluated.evaluations:
        assert "text" not in scenario.results
        assert scenario.results.graph is not None and scenario.results.graph.thresholds.bottleneck_betweenness == 0.9

    # online evaluation: the same line, byte for byte
    record = await _online(green.url, trace_id)
    assert json.dumps(record["evaluation"], separators=(",", ":"), sort_keys=True, ensure_ascii=False) == line
    assert {s["scenario"]: (s["score"], s["passed"]) for s in record["scenarios"]} == assessed

    # the ClickHouse evaluations table the green writes beside: the same figures and verdicts, and the line
    connection = connect(evaluations)
    try:
        rows = connection.rows(
            "SELECT Scenario, Score, Passed, Evaluation FROM otel.coordbench_evaluations WHERE TraceId = {t:String}",
            {"t": trace_id},
        )
    finally:
        connection.close()
    assert {scenario: (score, bool(passed)) for scenario, score, passed, _ in rows} == assessed
    assert {text for *_, text in rows} == {line}

    # compare on the trace: each scenario's figures as evaluated
    comparison = json.loads(_cli("compare", trace_id, trace_id, "--receiver", green.url, "--json"))
    figures = {s["scenario"]: {d["name"]: d["base"] for d in s["deltas"]} for s in comparison["scenarios"]}
    for scenario in evaluated.evaluations:
        coordination = scenario.results.coordination
        assert coordination is not None
        assert figures[scenario.scenario]["score"] == scenario.score.overall
        assert figures[scenario.scenario]["coordination"] == coordination.coordination_quality

    # report --trace-id: every scenario not passed, with the assessment's score
    page = tmp_path / "report.html"
    _cli("report", "--trace-id", trace_id, "--receiver", green.url, "--output", str(page))
    html = page.read_text(encoding="utf-8")
    for scenario, (score, _passed) in assessed.items():
        section = re.search(rf'<section class="scenario" data-scenario="{scenario}">(.*?)</section>', html, re.S)
        assert section is not None
        assert '<span class="badge fail">not passed</span>' in section.group(1)
        shown = re.search(r'data-field="score"><span data-value="([^"]+)"', section.group(1))
        assert shown is not None and float(shown.group(1)) == score

    # the pytest helper
    async with httpx.AsyncClient(base_url=green.url, timeout=30) as http:
        spans = [span_from_dict(s) for s in (await http.get(f"/v1/traces/{trace_id}")).json()["spans"]]
    helper = await asyncio.to_thread(evaluate_coordination, spans)
    assert {e.id: (e.score, e.passed) for e in helper.detail.scenarios} == assessed

    # and the config is what made them fail: under the defaults the same trace passes, with the text evaluator
    default = await asyncio.to_thread(replay_sync, trace_id, spans, config=AssessmentConfig())
    assert all(e.passed and "text" in e.results for e in default.evaluations)


@pytest.mark.parametrize(
    ("recorded", "said"),
    [
        ('{"pass_threshold": 7}', "config.pass_threshold: Input should be less than or equal to 1"),
        ('{"evaluators": ["no-such-evaluator"]}', "no-such-evaluator"),
        ('{"timout": 3}', "did you mean 'timeout'"),
    ],
)
def test_a_trace_recording_a_config_it_cannot_have_is_refused_by_every_command_naming_the_field(
    tmp_path: Path, recorded: str, said: str
) -> None:
    """A hostile or broken trace's recorded config is said (exit 2), not silently judged by other rules."""
    from coordbench import semconv
    from coordbench.otlp import export_request_json
    from evals.traces import client, server
    from support.spans import sid, span

    spans = [
        span("invoke_workflow run", span_id=sid(1), service="host", start_ms=0, end_ms=100,
             **{"a2a.step.call_type": "HOST", semconv.COORDBENCH_ASSESSMENT_CONFIG: recorded}),
        client("host", "worker", sid(2), sid(1), 1, 99, request="Plan it", reply="The plan"),
        server("worker", sid(3), sid(2), 2, 98),
    ]  # fmt: skip
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps(export_request_json(spans)), encoding="utf-8")
    for args in (["evaluate", str(trace)], ["compare", str(trace), str(trace)]):
        done = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=600)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "error:" in done.stderr and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(teams())
def test_the_stored_line_reads_back_as_the_same_evaluation(team: Team) -> None:
    """The JSON line is only the stored form: read back, the typed evaluation writes the same bytes again."""
    spans = team_spans(team)
    line = replay_sync(spans[0].trace_id, spans).to_json()
    back = TraceEvaluation.from_json(line)
    assert back.to_json() == line
    (scenario,) = back.evaluations
    assert scenario.results.coordination is not None and scenario.results.graph is not None
    assert set(scenario.results.names()) == set(json.loads(line)["evaluations"][0]["results"])


def test_a_plugins_result_rides_in_extra_and_keeps_its_name_on_the_wire() -> None:
    from coordbench.evals.evaluation import EvaluatorResults

    wire = {"verbosity": {"worst_agent": "B", "ratio": 1.5}, "protocol": None}
    results = EvaluatorResults.model_validate({k: v for k, v in wire.items() if v is not None})
    assert results.extra == {"verbosity": {"worst_agent": "B", "ratio": 1.5}} and results.protocol is None
    assert results.model_dump(mode="json") == {"verbosity": {"worst_agent": "B", "ratio": 1.5}}
    assert "verbosity" in results and "protocol" not in results
