"""The traceability and timestamp extensions, served by instrumented agents and read by callers."""

from __future__ import annotations

import json

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest
from google.protobuf.json_format import MessageToDict
from opentelemetry.sdk.trace import TracerProvider

from conftest import StartAgent
from coordbench import semconv
from coordbench.instrument import A2AInstrumentor
from coordbench.spans import SpanKind
from coordbench.steps import AgentInvocation, CallType, ToolInvocation, response_trace_from_metadata, step_from_span
from coordbench.testing import RecordingSpanExporter


async def final_payloads(url: str, *, streaming: bool) -> list[dict[str, object]]:
    """Every response event as a plain dict."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        request = SendMessageRequest(message=new_text_message("hi", role=Role.ROLE_USER))
        events = [MessageToDict(e) async for e in client.send_message(request)]
        await client.close()
    return events


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_steps_travel_back_and_nest(
    start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter, streaming: bool
) -> None:
    b = start_agent("B")
    a = start_agent("A", next_url=b, streaming=streaming)
    events = await final_payloads(a, streaming=streaming)
    final = events[-1]
    holder = final.get("task") or final.get("statusUpdate")
    assert isinstance(holder, dict)
    trace = response_trace_from_metadata(holder["metadata"])  # type: ignore[arg-type]
    assert trace is not None
    # A's steps: its lookup tool call, then its call to B (which nests B's own lookup)
    tool, call_b = trace.steps
    assert tool.call_type is CallType.TOOL
    assert tool.step_action == ToolInvocation("lookup", {"query": "hi"})
    assert tool.cost == pytest.approx(0.001)
    assert call_b.call_type is CallType.AGENT
    assert isinstance(call_b.step_action, AgentInvocation)
    assert call_b.step_action.agent_name == "B"
    nested = call_b.step_action.response_trace
    assert nested is not None
    assert [s.step_action for s in nested.steps] == [ToolInvocation("lookup", {"query": "hi"})]
    assert call_b.cost == pytest.approx(0.001)  # B's lookup
    assert trace.trace_id == call_b.trace_id == nested.trace_id

    spans = await a2a_instrumented.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 2)
    host_call = next(s for s in spans if s.name == "invoke_agent A" and s.kind is SpanKind.CLIENT)
    a_server = next(s for s in spans if s.name == "invoke_agent A" and s.kind is SpanKind.SERVER)
    assert host_call.attributes[semconv.A2A_STEP_COST] == pytest.approx(0.002)  # A's lookup + B's lookup
    assert a_server.attributes[semconv.A2A_STEP_COST] == pytest.approx(0.002)
    step = step_from_span(host_call)
    assert step.cost == pytest.approx(0.002)
    assert isinstance(step.step_action, AgentInvocation)
    assert step.step_action.response_trace == trace


async def test_timestamps_on_messages_and_artifacts(
    start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter
) -> None:
    url = start_agent("Clock")
    events = await final_payloads(url, streaming=True)
    artifacts = [e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e]  # type: ignore[index]
    assert artifacts
    for artifact in artifacts:
        stamp = artifact["metadata"][semconv.TIMESTAMP_METADATA_KEY]
        assert stamp.endswith("Z") and "T" in stamp


async def test_nothing_added_when_not_asked(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    url = start_agent("Plain")
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, request_extensions=False)
    try:
        events = await final_payloads(url, streaming=True)
    finally:
        A2AInstrumentor().uninstrument()
    text = json.dumps(events)
    assert semconv.TRACEABILITY_METADATA_KEY not in text
    assert semconv.TIMESTAMP_METADATA_KEY not in text
