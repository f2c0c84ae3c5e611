"""The assessor's server: progress updates, ground truth, sharding, failures, isolation, endpoints, 0.3 clients."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest

from conftest import StartAgent
from coordbench.a2a import Messenger
from coordbench.evals.config import LLM_API_KEY_ENV
from green.conftest import StartGreen
from support.conformance import check_card, check_hello

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).parent.parent / "agents"


@pytest.fixture(autouse=True)
def _no_llm_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)


def request(participants: dict[str, str], **config: Any) -> str:
    return json.dumps({"participants": participants, "config": {"trace_quiet": 0.2, "trace_timeout": 10, **config}})


async def stream(url: str, body: str) -> list[tuple[str, str]]:
    """(event kind, state or text) for every event of a streamed request."""
    events: list[tuple[str, str]] = []
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        message = new_text_message(body, role=Role.ROLE_USER)
        async for event in client.send_message(SendMessageRequest(message=message)):
            kind = event.WhichOneof("payload")
            if kind == "status_update":
                update = event.status_update
                said = "".join(p.text for p in update.status.message.parts)
                events.append((f"status:{update.status.state}", said))
            elif kind == "artifact_update":
                events.append(("artifact", event.artifact_update.artifact.name))
            else:
                events.append((kind or "?", ""))
        await client.close()
    return events


async def test_progress_updates_while_a_slow_team_works(start_green: StartGreen, start_agent: StartAgent) -> None:
    green = start_green(heartbeat=0.3)
    slow = start_agent("slow-team", delay=1.6)
    events = await stream(green.url, request({"agent": slow}, scenarios=[{"id": "s", "task": "think hard"}]))
    working = [said for kind, said in events if kind == "status:1" or kind.endswith(":2")]
    assert events[0][0] == "task"
    assert any(said.startswith("Assessment ") and "1 scenario(s)" in said for said in working)
    assert "scenario 1/1: s (live)" in working
    # the team took 1.6 s: the heartbeat spoke at least 4 times in between (every 0.3 s)
    assert sum(said.startswith("still assessing") for said in working) >= 4
    assert ("artifact", "Result") in events
    assert events[-1][0].endswith(":3")  # TASK_STATE_COMPLETED


async def test_ground_truth_mode_and_sharding(start_green: StartGreen, start_agent: StartAgent) -> None:
    green = start_green()
    agent = start_agent("unused")
    async with Messenger(timeout=120) as messenger:
        reply = await messenger.send(green.url, request({"agent": agent}, scenarios=[], ground_truth=True))
        assert reply.state == "completed", reply.text
        row = reply.data[0]
        entries = row["detail"]["scenarios"]
        assert len(entries) == 16 and {e["mode"] for e in entries} == {"ground_truth"}
        # every labelled pattern gets its label through the same pipeline (100%)
        assert all(e["label_ok"] for e in entries), [(e["id"], e["label"], e["expected_label"]) for e in entries]
        half = await messenger.send(
            green.url,
            request({"agent": agent}, scenarios=[], ground_truth=True, shard_index=1, num_shards=2, api_key="sk-x"),
        )
    ids = [e["id"] for e in entries]
    assert row["detail"]["config"]["ground_truth"] is True and row["detail"]["config"]["scenarios"] == ids
    assert [e["id"] for e in half.data[0]["detail"]["scenarios"]] == ids[1::2]
    assert (half.data[0]["shard_index"], half.data[0]["num_shards"]) == (1, 2)
    # an unknown key is reported, never echoed (it could be a secret)
    assert half.data[0]["detail"]["ignored_config_keys"] == ["api_key"]
    assert "sk-x" not in json.dumps(half.data[0])


async def test_unreachable_team_fails_the_assessment_but_partial_failure_completes(
    start_green: StartGreen, start_agent: StartAgent
) -> None:
    green = start_green()
    up = start_agent("up")
    down = "http://127.0.0.1:9/"
    async with Messenger(timeout=60) as messenger:
        # a team that cannot be reached is a result (it answered nothing), not an assessor failure
        nothing = await messenger.send(green.url, request({"agent": down}, scenarios=[{"id": "s", "task": "t"}]))
        assert nothing.state == "completed", nothing.text
        assert "s [live]: score" in nothing.text and "not passed" in nothing.text
        (entry,) = nothing.data[0]["detail"]["scenarios"]
        assert (entry["status"], entry["passed"]) == ("error", False) and entry["score"] < 0.4
        assert entry["error"].startswith("cannot read the agent card at http://127.0.0.1:9/")
        partial = await messenger.send(
            green.url,
            request(
                {"agent": up, "other": down},
                scenarios=[{"id": "ok", "task": "t"}, {"id": "broken", "task": "t", "entry": "other"}],
            ),
        )
    assert partial.state == "completed"
    ok, broken = partial.data[0]["detail"]["scenarios"]
    assert (ok["status"], broken["status"]) == ("evaluated", "error")
    assert broken["error"].startswith("cannot read the agent card at http://127.0.0.1:9/")
    assert broken["results"]["protocol"]["calls"] == 0
    assert partial.data[0]["scenarios_failed"] == 1


async def test_concurrent_assessments_are_isolated(start_green: StartGreen, start_agent: StartAgent) -> None:
    green = start_green()
    first, second = start_agent("team-one", delay=0.3), start_agent("team-two", delay=0.3)
    async with Messenger(timeout=60) as m1, Messenger(timeout=60) as m2:
        one, two = await asyncio.gather(
            m1.send(green.url, request({"agent": first}, scenarios=[{"id": "a", "task": "x"}])),
            m2.send(green.url, request({"agent": second}, scenarios=[{"id": "b", "task": "y"}])),
        )
    for reply, team, other in ((one, "team-one", "team-two"), (two, "team-two", "team-one")):
        assert reply.state == "completed", reply.text
        graph = reply.data[0]["detail"]["scenarios"][0]["results"]["graph"]
        agents = {a["name"] for a in graph["agents"]}
        assert team in agents and other not in agents
        assert reply.data[0]["detail"]["trace_completeness"]["complete_scenarios"] == 1
    assert one.data[0]["assessment_id"] != two.data[0]["assessment_id"]


async def test_step_reports_peers_and_token(start_green: StartGreen) -> None:
    green = start_green(token="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    base = green.url.rstrip("/")
    async with httpx.AsyncClient(timeout=10) as http:
        step = {
            "step_id": "step-1",
            "trace_id": "trace-1",
            "call_type": "AGENT",
            "start_time": "2026-01-01T00:00:00Z",
            "end_time": "2026-01-01T00:00:01Z",
            "step_action": {"agent_url": "http://b/", "agent_name": "B"},
        }
        assert (await http.post(f"{base}/traces", json={"agent": "A", "steps": [step]})).status_code == 401
        ok = await http.post(f"{base}/traces", json={"agent": "A", "steps": [step]}, headers=auth)
        assert ok.status_code == 200 and ok.json()["accepted"] == 1 and ok.json()["stored"] == 1
        trace = ok.json()["traces"][0]
        stored = (await http.get(f"{base}/v1/traces/{trace}", headers=auth)).json()
        assert stored["spans"][0]["attributes"]["a2a.step.id"] == "step-1"
        again = await http.post(f"{base}/traces", json=[step], headers=auth)
        assert again.json()["duplicates"] == 1
        bad = await http.post(f"{base}/traces", json={"steps": [step, {**step, "call_type": "BOSS"}]}, headers=auth)
        assert bad.status_code == 400 and "steps[1]" in bad.json()["detail"]
        # a value no OTLP span (and so no durable store) can hold is refused up front, not stored
        huge = {**step, "step_id": "step-2", "additional_attributes": {"tokens": 10**30}}
        refused = await http.post(f"{base}/traces", json={"steps": [huge]}, headers=auth)
        assert refused.status_code == 400
        assert refused.json()["detail"].endswith(f"attribute 'tokens': {10**30} is out of int64 range")
        assert (
            await http.post(f"{base}/traces", content=b"{", headers={**auth, "content-type": "application/json"})
        ).status_code == 400
        # each of these was a 500 (OverflowError, RecursionError) or stored a NaN cost
        as_json = {**auth, "content-type": "application/json"}
        for body, detail in (
            (b'{"steps": [{"step_id": "x", "trace_id": "t", "call_type": "TOOL", "latency": -Infinity}]}', "finite"),
            (b'{"steps": [{"step_id": "x", "trace_id": "t", "call_type": "TOOL", "cost": NaN}]}', "finite"),
            (b"[" * 100_000 + b"]" * 100_000, "body is not JSON: nested too deeply"),
        ):
            answer = await http.post(f"{base}/traces", content=body, headers=as_json)
            assert (answer.status_code, detail in answer.json()["detail"]) == (400, True), answer.text
        deep: dict[str, object] = {"step_id": "leaf", "trace_id": "t", "call_type": "TOOL"}
        for _ in range(150):  # more than MAX_TRACE_NESTING; at 250 the server ran out of stack (a 500)
            invocation = {"agent_name": "B", "response_trace": {"trace_id": "t", "steps": [deep]}}
            deep = {
                "step_id": "s",
                "trace_id": "t",
                "call_type": "AGENT",
                "step_action": {"agent_invocation": invocation},
            }
        answer = await http.post(f"{base}/traces", content=json.dumps({"steps": [deep]}), headers=as_json)
        assert answer.status_code == 400 and "traces nested more than" in answer.json()["detail"]
        assert (
            await http.post(f"{base}/traces", content=b"x", headers={**auth, "content-type": "text/plain"})
        ).status_code == 415
        assert (await http.post(f"{base}/traces", json={"steps": []}, headers=auth)).status_code == 400
        assert (await http.post(f"{base}/traces", json={"steps": [step], "who": 1}, headers=auth)).json()["detail"] == (
            "unknown field(s): who (expected 'agent' and 'steps')"
        )

        peer = {"name": "B", "url": "http://127.0.0.1:9020/", "role": "researcher"}
        assert (await http.post(f"{base}/register", json=peer, headers=auth)).status_code == 201
        assert (await http.post(f"{base}/register", json=peer, headers=auth)).status_code == 200
        bad_peer = await http.post(f"{base}/register", json={"name": "", "url": "nope"}, headers=auth)
        assert bad_peer.status_code == 422
        peers = (await http.get(f"{base}/peers", headers=auth)).json()["peers"]
        assert [(p["name"], p["url"], p["role"]) for p in peers] == [("B", "http://127.0.0.1:9020/", "researcher")]
        assert (await http.get(f"{base}/peers?role=writer", headers=auth)).json() == {"peers": []}
        # A2A and health stay open: the AgentBeats client sends no token
        assert (await http.get(f"{base}/healthz")).status_code == 200
        assert (await http.get(f"{base}/.well-known/agent-card.json")).status_code == 200


async def test_a2a_sdk_03_client_runs_an_assessment(
    start_green: StartGreen, start_agent: StartAgent, v03_python: Path
) -> None:
    green = start_green()
    agent = start_agent("team")
    body = request({"agent": agent}, scenarios=[{"id": "s", "task": "hello team"}])
    done = await asyncio.to_thread(
        subprocess.run,
        [str(v03_python), str(AGENTS / "v03_assess.py"), green.url, body],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    final = lines[-1]
    assert final["final"] == "completed"
    assert any(line.get("status", "").startswith("scenario 1/1") for line in lines[:-1])
    (row,) = final["data"]
    assert row["domain"] == "graph-assessment" and row["detail"]["scenarios"][0]["id"] == "s"
    results = json.loads((green.output_dir / "results.json").read_text())
    assert results["results"][0]["score"] == pytest.approx(row["score"])
    rejected = await asyncio.to_thread(
        subprocess.run, [str(v03_python), str(AGENTS / "v03_assess.py"), green.url, "Hello"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    last = json.loads(rejected.stdout.splitlines()[-1])
    assert last["final"] == "rejected" and last["text"].startswith("the message is not an assessment request")


def test_the_green_passes_the_agentbeats_conformance_checks(start_green: StartGreen) -> None:
    green = start_green()
    check_card(green.url)
    result, _ = check_hello(green.url)
    assert result["status"]["state"] == "rejected"  # "Hello" is not an assessment request: said, not crashed
