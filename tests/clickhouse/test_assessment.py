"""Real instrumented traces through ClickHouse: an assessment's trace evaluates the same, and the green runs on it.

A live assessment (the green, three relay agents in their own processes, spans over OTLP) gives a
trace written by coordbench's instrumentation and by the assessor. Its spans as the green received
them go through the exporter's row mapping into the ClickHouse engine and back: the evaluation
must be the same bytes. Every attribute the trace carries that is not a string must be declared in
``semconv.ATTRIBUTE_TYPES`` (else ClickHouse would give it back as a string). Then a green whose
store is ClickHouse runs an assessment, waiting for each scenario's trace in ClickHouse.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.clickhouse import ClickHouseTraces, connect
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.evals.replay import replay_sync
from coordbench.spans import AttributeValue, SpanData, span_from_dict
from green.conftest import StartGreen, StartParticipant

pytestmark = pytest.mark.slow

TASK = "Plan the launch of a note-taking app: owners, timeline, risks."


def _request(coordinator: str, worker_a: str, worker_b: str) -> dict[str, Any]:
    return {
        "participants": {"coordinator": coordinator, "worker_a": worker_a, "worker_b": worker_b},
        "config": {
            "scenarios": [{"id": "launch", "task": TASK, "references": ["Owners, a dated timeline and the risks."]}],
            "trace_timeout": 60,
            "trace_quiet": 0.5,
        },
    }


async def _assess(green_url: str, request: dict[str, Any]) -> dict[str, Any]:
    async with Messenger(timeout=180) as messenger:
        reply = await messenger.send(green_url, json.dumps(request))
    assert reply.state == "completed", reply.text
    return reply.data[0]


def _kind(value: AttributeValue) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return "string[]"
    if isinstance(value, tuple) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return "int[]"
    return type(value).__name__


async def test_an_assessment_trace_evaluates_the_same_read_from_clickhouse(
    start_green: StartGreen, start_participant: StartParticipant, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    green = start_green()
    coordinator = start_participant("coordinator", green.url, behaviour="fanout")
    worker_a, worker_b = start_participant("worker-a", green.url), start_participant("worker-b", green.url)
    row = await _assess(green.url, _request(coordinator.url, worker_a.url, worker_b.url))
    trace_id = row["detail"]["scenarios"][0]["trace_id"]
    async with httpx.AsyncClient(base_url=green.url, timeout=60) as http:
        document = (await http.get(f"/v1/traces/{trace_id}")).json()
    received = [span_from_dict(s) for s in document["spans"]]
    assert len({s.service_name for s in received}) >= 4  # the green and the three agents, over OTLP

    # every attribute that is not a string is declared, with its type
    undeclared: dict[str, str] = {}
    for span in received:
        for groups in (span.attributes, span.resource, *(e.attributes for e in span.events)):
            for key, value in groups.items():
                if isinstance(value, str):
                    continue
                if key in (semconv.SERVICE_NAME, "process.pid") or key.startswith(("telemetry.", "process.")):
                    continue  # resource attributes evaluation never reads
                if semconv.ATTRIBUTE_TYPES.get(key) != _kind(value):
                    undeclared[key] = _kind(value)
    assert undeclared == {}, "declare these in semconv.ATTRIBUTE_TYPES"
    declared_seen = {k for s in received for k in s.attributes if k in semconv.ATTRIBUTE_TYPES}
    assert {semconv.A2A_REQUEST_SIZE, semconv.COORDBENCH_SCENARIO_PARTICIPANTS} <= declared_seen

    connection = connect(f"chdb://{tmp_path / 'ch'}?create=true")
    try:
        tables = ClickHouseTraces(connection)
        tables.ensure_schema()
        tables.insert(received)
        back = tables.trace(trace_id)
    finally:
        connection.close()
    assert [s.span_id for s in back] == [s.span_id for s in _ordered(received)]
    line = (await asyncio.to_thread(replay_sync, trace_id, back)).to_json()  # it runs its own event loop
    assert line == (await asyncio.to_thread(replay_sync, trace_id, received)).to_json()
    (evaluated,) = json.loads(line)["evaluations"]
    assert evaluated["scenario"] == "launch" and evaluated["passed"] == row["detail"]["scenarios"][0]["passed"]


def _ordered(spans: list[SpanData]) -> list[SpanData]:
    return sorted(spans, key=lambda s: (s.start_time_unix_nano, s.span_id))


async def test_a_green_on_clickhouse_waits_for_its_scenarios_there(
    start_green: StartGreen, start_participant: StartParticipant, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    store = f"chdb://{tmp_path / 'ch'}?create=true"
    green = start_green(store=store)
    coordinator = start_participant("coordinator", green.url, behaviour="fanout")
    worker_a, worker_b = start_participant("worker-a", green.url), start_participant("worker-b", green.url)
    row = await _assess(green.url, _request(coordinator.url, worker_a.url, worker_b.url))
    scenario = row["detail"]["scenarios"][0]
    assert (scenario["status"], scenario["trace_complete"]) == ("evaluated", True), scenario["completeness"]
    edges = {(e["caller"], e["callee"]) for e in scenario["results"]["graph"]["edges"]}
    assert edges == {("coordbench-green", "coordinator"), ("coordinator", "worker-a"), ("coordinator", "worker-b")}
    async with httpx.AsyncClient(base_url=green.url, timeout=60) as http:
        stored = (await http.get(f"/v1/traces/{scenario['trace_id']}")).json()
        counters = (await http.get("/v1/stats")).json()
    assert {s["resource"]["service.name"] for s in stored["spans"]} >= {"coordinator", "worker-a", "worker-b"}
    assert counters["stored"] == counters["received"] > 0 and counters["clickhouse"]["store"] == store
