"""The traceability and timestamp extensions, served by instrumented agents and read by callers."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry.sdk.trace import TracerProvider

from conftest import StartAgent
from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.instrument import A2AInstrumentor
from coordbench.spans import SpanKind
from coordbench.spantree import SpanTree
from coordbench.steps import AgentInvocation, CallType, ToolInvocation, response_trace_from_metadata, step_from_span
from coordbench.testing import RecordingSpanExporter
from support.responses import final_payloads


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


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_parallel_fan_out_and_concurrent_requests_keep_traces_and_steps_apart(
    start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter, streaming: bool
) -> None:
    """A coordinator asks two peers at once, twice at once: no span, step or cost crosses over.

    Each of the two requests to A is its own trace; inside it A's calls to B and C overlap in
    time and both reach D. A's response carries exactly its own steps (its lookup, B, C), each
    peer's nested trace holds exactly that peer's work, and the costs add up per request.
    """
    d = start_agent("D", delay=0.05)
    b = start_agent("B", next_url=d, streaming=streaming)
    c = start_agent("C", next_url=d, streaming=streaming)
    a = start_agent("A", behaviour="fanout", parallel=True, streaming=streaming)
    peers = {"b": b, "c": c}
    async with Messenger(timeout=30, streaming=streaming) as messenger:
        one, two = await asyncio.gather(
            messenger.send(a, "one", data={"peers": peers}, new_conversation=True),
            messenger.send(a, "two", data={"peers": peers}, new_conversation=True),
        )
    for reply, word in ((one, "one"), (two, "two")):
        assert reply.state == "completed"
        assert reply.text == (f"A combined: B(D(b, please help with: {word})) | C(D(c, please help with: {word}))")

    spans = await a2a_instrumented.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 10)
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 2
    assert not tree.orphans
    for reply, word in ((one, "one"), (two, "two")):
        host_call = next(
            s
            for s in spans
            if s.name == "invoke_agent A"
            and s.kind is SpanKind.CLIENT
            and s.attributes.get(semconv.GEN_AI_CONVERSATION_ID) == reply.context_id
        )
        in_trace = [s for s in spans if s.trace_id == host_call.trace_id]
        assert len(in_trace) == len(spans) // 2
        assert sorted(SpanTree(in_trace).call_chains()) == [("pytest", "A", "B", "D"), ("pytest", "A", "C", "D")]
        to_b, to_c = (
            next(s for s in in_trace if s.name == f"invoke_agent {peer}" and s.kind is SpanKind.CLIENT)
            for peer in ("B", "C")
        )
        assert to_b.start_time_unix_nano < to_c.end_time_unix_nano  # A's two calls overlapped
        assert to_c.start_time_unix_nano < to_b.end_time_unix_nano

        assert host_call.attributes[semconv.A2A_STEP_COST] == pytest.approx(0.005)  # lookups: A, B, D, C, D
        action = step_from_span(host_call).step_action
        assert isinstance(action, AgentInvocation)
        trace = action.response_trace
        assert trace is not None
        assert trace.trace_id == host_call.trace_id
        tools = [s.step_action for s in trace.steps if s.call_type is CallType.TOOL]
        assert tools == [ToolInvocation("lookup", {"query": word})]
        nested = {
            s.step_action.agent_name: s.step_action.response_trace
            for s in trace.steps
            if isinstance(s.step_action, AgentInvocation)
        }
        assert sorted(nested) == ["B", "C"]
        for peer, peer_trace in nested.items():
            asked = f"{peer.lower()}, please help with: {word}"
            assert peer_trace is not None and peer_trace.trace_id == host_call.trace_id
            peer_tool, peer_call = peer_trace.steps
            assert peer_tool.step_action == ToolInvocation("lookup", {"query": asked})
            assert isinstance(peer_call.step_action, AgentInvocation)
            assert peer_call.step_action.agent_name == "D"
            d_trace = peer_call.step_action.response_trace
            assert d_trace is not None
            assert [s.step_action for s in d_trace.steps] == [ToolInvocation("lookup", {"query": asked})]


def test_stamp_timestamps_stamps_every_message_and_artifact_of_an_event_once() -> None:
    from a2a.helpers import new_text_message
    from a2a.types import Artifact, Message, Part, Role, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

    from coordbench.instrument._extensions import stamp_timestamps
    from coordbench.steps import parse_timestamp

    key = semconv.TIMESTAMP_METADATA_KEY

    def stamps(*holders: Message | Artifact) -> list[str]:
        return [h.metadata.fields[key].string_value if key in h.metadata.fields else "" for h in holders]

    task = Task(id="t", context_id="c")
    task.artifacts.append(Artifact(artifact_id="a1", parts=[Part(text="x")]))
    task.artifacts.append(Artifact(artifact_id="a2", parts=[Part(text="y")]))
    task.status.message.CopyFrom(new_text_message("done", role=Role.ROLE_AGENT))
    stamp_timestamps(task)
    first = stamps(task.artifacts[0], task.artifacts[1], task.status.message)
    assert first[0] and len(set(first)) == 1  # one time for the whole event
    assert parse_timestamp(first[0]) > 0

    for spelling in semconv.TIMESTAMP_METADATA_KEYS:  # the agent's own stamp stays, under either spelling
        own = new_text_message("mine", role=Role.ROLE_AGENT)
        own.metadata.update({spelling: "2020-01-01T00:00:00Z"})
        before = own.SerializeToString()
        stamp_timestamps(own)
        assert own.SerializeToString() == before

    snapshot = Task(id="t", context_id="c")  # artifacts, no status message
    snapshot.artifacts.append(Artifact(artifact_id="a", parts=[Part(text="x")]))
    stamp_timestamps(snapshot)
    assert all(stamps(snapshot.artifacts[0]))

    bare = Task(id="t", context_id="c")
    update = TaskStatusUpdateEvent(task_id="t", context_id="c")
    stamp_timestamps(bare)
    stamp_timestamps(update)
    assert not bare.HasField("status") and bare.ByteSize() == Task(id="t", context_id="c").ByteSize()
    assert not update.status.HasField("message")

    artifact_update = TaskArtifactUpdateEvent(task_id="t", context_id="c")
    artifact_update.artifact.CopyFrom(Artifact(artifact_id="a", parts=[Part(text="z")]))
    message = new_text_message("hi", role=Role.ROLE_AGENT)
    stamp_timestamps(artifact_update)
    stamp_timestamps(message)
    assert all(stamps(artifact_update.artifact, message))
