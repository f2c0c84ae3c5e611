"""End to end: a real assessor, real participant processes, a real assessment over A2A, spans over OTLP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from coordbench.a2a import Messenger
from coordbench.evals.assessment_config import AssessmentConfig
from coordbench.evals.config import LLM_API_KEY_ENV
from green.conftest import StartGreen, StartParticipant

pytestmark = pytest.mark.slow

PATTERN = {"agents": ["a", "b"], "edges": [{"from": "a", "to": "b"}]}
TASK = "Plan the launch of a note-taking app: owners, timeline, risks."
REFERENCE = "Owners per workstream, a dated timeline for the launch, and the main risks."


def leaderboard(results_file: Path, role: str) -> list[tuple[Any, ...]]:
    """The AgentBeats leaderboard query (first column id), run by DuckDB as the platform does."""
    con = duckdb.connect()
    con.execute(f"CREATE TEMP TABLE results AS SELECT * FROM read_json_auto('{results_file}')")  # noqa: S608
    return con.execute(
        f"""
        SELECT t.participants.{role} AS id,
               res.score AS score,
               res.pass_rate AS pass_rate,
               res.task_rewards.overall_score AS overall,
               res.task_rewards.graph_density AS density,
               res.task_rewards.answer_quality AS answer,
               res.task_rewards.coordination_quality AS quality
        FROM results t CROSS JOIN UNNEST(t.results) AS r(res)
        """  # noqa: S608
    ).fetchall()


async def test_live_assessment_end_to_end(
    start_green: StartGreen, start_participant: StartParticipant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    green = start_green()
    coordinator = start_participant("coordinator", green.url, behaviour="fanout")
    worker_a = start_participant("worker-a", green.url)
    worker_b = start_participant("worker-b", green.url)
    # worker_b is given with credentials in its URL: they must not reach results, status or spans
    worker_b_url = worker_b.url.replace("http://", "http://bot:s3cret-token@", 1)
    request = {
        "participants": {"coordinator": coordinator.url, "worker_a": worker_a.url, "worker_b": worker_b_url},
        "config": {
            "scenarios": [{"id": "launch", "task": TASK, "references": [REFERENCE]}],
            "trace_timeout": 30,
            "trace_quiet": 0.5,
            "participant_ids": {"coordinator": "agentbeats-id-coordinator"},
        },
    }
    async with Messenger(timeout=120) as messenger:
        reply = await messenger.send(green.url, json.dumps(request))
    assert reply.state == "completed", reply.text
    assert len(reply.data) == 1
    row = reply.data[0]

    # results.json holds the same row as the artifact's data part
    results = json.loads((green.output_dir / "results.json").read_text())
    assert results["participants"] == {
        "coordinator": "agentbeats-id-coordinator",
        "worker_a": worker_a.url,
        "worker_b": worker_b.url.replace("http://", "http://REDACTED:REDACTED@", 1),
    }
    assert results["results"] == [row]
    assert "s3cret" not in (green.output_dir / "results.json").read_text()
    assert "s3cret" not in reply.text
    async with httpx.AsyncClient(base_url=green.url, timeout=30) as http:
        listing = (await http.get("/v1/traces", params={"limit": 500})).json()
        stored = [(await http.get(f"/v1/traces/{t['trace_id']}")).text for t in listing["traces"]]
    assert stored
    # the listing says which trace is the assessment's, and its scenarios
    (assessment,) = [t for t in listing["traces"] if t["assessment_id"] == row["assessment_id"]]
    assert assessment["scenarios"] == ["launch"] and assessment["root"].startswith("invoke_workflow assessment ")
    async with httpx.AsyncClient(base_url=green.url, timeout=30) as http:
        about = (await http.get("/")).json()
    assert about["name"] == "coordbench green assessor" and "agent-card.json" in about["description"]
    assert {"path": "/", "method": "POST", "what": "handle_requests"} in about["endpoints"]
    # not even in captured message content, which carries the request and the peers' URLs
    assert any("gen_ai.input.messages" in text for text in stored)
    assert not [text for text in stored if "s3cret" in text]

    scenario = row["detail"]["scenarios"][0]
    assert (scenario["id"], scenario["mode"], scenario["status"], scenario["error"]) == (
        "launch",
        "live",
        "evaluated",
        None,
    )
    assert scenario["trace_complete"] is True, scenario["completeness"]
    assert scenario["outcome"]["state"] == "completed"
    assert scenario["outcome"]["output"].startswith("coordinator combined: worker-a(")

    # the graph, worked out by hand: the assessor (host) asks the coordinator, which asks both workers
    graph = scenario["results"]["graph"]
    assert graph["hosts"] == ["coordbench-green"]
    edges = {(e["caller"], e["callee"]): e["count"] for e in graph["edges"]}
    assert edges == {
        ("coordbench-green", "coordinator"): 1,
        ("coordinator", "worker-a"): 1,
        ("coordinator", "worker-b"): 1,
    }
    assert graph["metrics"]["density"] == pytest.approx(2 / 6)  # 2 edges among 3 agents, directed
    # a star around the coordinator: it brokers every path (betweenness 1) and is in 100% of the
    # messages; described so, not scored for it
    assert (graph["classification"], graph["label"], graph["topology"]) == ("bottleneck", "bottleneck", "star")
    protocol = scenario["results"]["protocol"]
    assert (protocol["calls"], protocol["failed"], protocol["success_rate"]) == (3, 0, 1.0)

    # echo workers repeat the coordinator's words: low diversity
    text = scenario["results"]["text"]
    assert text["messages"] == 4
    assert text["diversity"] < 0.5
    assert 0 < text["rouge_l"] < 1 and 0 < text["tfidf_cosine"] < 1

    latency = scenario["results"]["latency"]
    assert latency["calls"]["count"] == 2 and latency["end_to_end"]["count"] == 1
    assert latency["end_to_end"]["p50_ms"] >= latency["calls"]["max_ms"]

    # the coordination score, part by part: everyone contributed, no message wasted or failed, the
    # trace complete; the coordinator asked worker-b only after worker-a had answered, though
    # worker-b's request carries nothing of that answer: serialisation 1 over its 2 calls, so
    # parallelism 1 - (1/2 - 0.05) / 0.95 = 10/19; no hub held the team up
    coordination = scenario["results"]["coordination"]
    parts = {name: part["value"] for name, part in coordination["parts"].items()}
    assert parts["participation"] == parts["efficiency"] == parts["robustness"] == 1
    # the echo workers add nothing to what they were asked: what answers add 0, relays 1
    assert parts["information_flow"] == pytest.approx(0.5)
    assert coordination["parts"]["information_flow"]["agents"] == ["worker-a", "worker-b"]
    assert parts["parallelism"] == pytest.approx(10 / 19)
    assert coordination["parts"]["parallelism"]["agents"] == ["coordinator"]
    assert parts["bottleneck"] == 1  # the coordinator's own time is machine-dependent: described only
    assert 0 < coordination["parts"]["bottleneck"]["figures"]["coordinator.own_share"] < 1
    answer = 0.5 + 0.5 * min(1.0, text["reference_similarity"] / 0.4)  # the text evaluator's figure
    quality = 0.22 + 0.18 + 0.14 * 10 / 19 + 0.10 + 0.16 + 0.20 * 0.5
    overall = (0.4 + 0.6 * answer) * quality
    judge = scenario["results"]["llm_judge"]
    assert judge["judge"] == "rules" and "AGENTBEATS_LLM_API_KEY" in judge["fallback_reason"]
    assert judge["overall_score"] == pytest.approx(overall)
    # the rule-based judge restates the coordination score: it does not count, the weights renormalise
    assert scenario["score_components"]["weights"] == {"coordination": 1.0}
    assert scenario["score"] == pytest.approx(overall)
    assert (scenario["answer_quality"], scenario["coordination_quality"]) == (pytest.approx(answer),
                                                                             pytest.approx(quality))  # fmt: skip
    assert row["score"] == pytest.approx(100 * overall)
    assert (row["max_score"], row["pass_rate"], row["domain"]) == (100, 100, "graph-assessment")
    assert row["time_used"] > 0
    assert row["task_rewards"] == {
        "overall_score": pytest.approx(overall),
        "answer_quality": pytest.approx(answer),
        "coordination_quality": pytest.approx(quality),
        "graph_density": pytest.approx(1 / 3),
    }
    assert row["detail"]["graph_metrics"]["classification"] == "bottleneck"
    assert row["detail"]["trace_completeness"] == {
        "live_scenarios": 1,
        "complete_scenarios": 1,
        "incomplete": [],
        "timed_out": [],
    }
    assert "1/1 scenarios passed" in reply.text

    # the leaderboard query finds the row, first column the AgentBeats id
    rows = leaderboard(green.output_dir / "results.json", "coordinator")
    assert rows == [
        (
            "agentbeats-id-coordinator",
            pytest.approx(100 * overall),
            pytest.approx(100.0),
            pytest.approx(overall),
            pytest.approx(1 / 3),
            pytest.approx(answer),
            pytest.approx(quality),
        )
    ]


async def test_repeats_run_each_live_scenario_again_and_report_its_spread(
    start_green: StartGreen, start_participant: StartParticipant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    green = start_green()
    coordinator = start_participant("coordinator", green.url, behaviour="fanout")
    worker = start_participant("worker", green.url)
    request = {
        "participants": {"coordinator": coordinator.url, "worker": worker.url},
        "config": {
            "scenarios": [{"id": "launch", "task": TASK}, {"id": "pattern", "interaction_pattern": PATTERN}],
            "repeats": 3,
            "trace_timeout": 30,
            "trace_quiet": 0.5,
        },
    }
    async with Messenger(timeout=120) as messenger:
        reply = await messenger.send(green.url, json.dumps(request))
    assert reply.state == "completed", reply.text
    row = reply.data[0]
    entries = row["detail"]["scenarios"]
    # each run is its own scenario, in its own span subtree; the pattern is replayed once (it is data)
    assert [(e["id"], e.get("scenario"), e.get("repeat")) for e in entries] == [
        ("launch#1", "launch", 1),
        ("launch#2", "launch", 2),
        ("launch#3", "launch", 3),
        ("pattern", None, None),
    ]
    assert len({e["trace_id"] for e in entries[:3]}) == 1 and all(e["status"] == "evaluated" for e in entries)
    scores = [e["score"] for e in entries[:3]]
    spread = row["detail"]["spread"]
    assert list(spread) == ["launch"]
    assert spread["launch"] == {
        "runs": 3,
        "mean": pytest.approx(sum(scores) / 3),
        "stdev": pytest.approx((sum((s - sum(scores) / 3) ** 2 for s in scores) / 2) ** 0.5, abs=1e-9),
        "min": min(scores),
        "max": max(scores),
    }
    assert "- launch: 3 runs, score" in reply.text
    async with httpx.AsyncClient(base_url=green.url, timeout=30) as http:
        page = (await http.get(f"/reports/{row['assessment_id']}")).text
    assert 'data-spread="launch"' in page and 'data-scenario="launch#3"' in page
    with pytest.raises(ValueError, match="repeats"):
        AssessmentConfig.model_validate({"repeats": 21})
