"""A2AInstrumentor on real agents over loopback: span tree, attributes, propagation, lifetimes."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import httpx
import pytest
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from opentelemetry import baggage, trace
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState

from agents.relay import AgentClient, RelayExecutor
from conftest import StartAgent
from coordbench import semconv
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.instrument import host_step
from coordbench.spans import SpanData, SpanKind, StatusCode, span_to_dict
from coordbench.testing import LoopbackServer, RecordingSpanExporter, SpanTree

pytestmark = pytest.mark.usefixtures("a2a_instrumented")


def servers(spans: list[SpanData], n: int) -> bool:
    return sum(1 for s in spans if s.kind is SpanKind.SERVER) >= n


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_chain_is_one_tree_with_a2a_attributes(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    b = start_agent("B")
    a = start_agent("A", next_url=b, streaming=streaming)
    client = AgentClient(a, streaming=streaming)
    state, text = await client.ask("hello world")
    await client.close()
    assert (state, text) == ("TASK_STATE_COMPLETED", "A(B(hello world))")

    spans = await span_exporter.wait_for_async(lambda s: servers(s, 2))
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 1
    assert tree.call_chains() == [("pytest", "A", "B")]
    assert not tree.orphans

    method = "SendStreamingMessage" if streaming else "SendMessage"
    for callee in ("A", "B"):
        client_span = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.CLIENT)
        server_span = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.SERVER)
        assert tree.parent(server_span) == client_span
        assert server_span.start_time_unix_nano >= client_span.start_time_unix_nano
        assert server_span.end_time_unix_nano >= client_span.start_time_unix_nano
        ca, sa = client_span.attributes, server_span.attributes
        for attrs in (ca, sa):
            assert attrs[semconv.GEN_AI_OPERATION_NAME] == "invoke_agent"
            assert attrs[semconv.GEN_AI_AGENT_NAME] == callee
            assert attrs[semconv.A2A_METHOD] == method
            assert attrs[semconv.A2A_PROTOCOL_VERSION] == "1.0"
            assert attrs[semconv.A2A_TASK_STATE] == "completed"
            assert attrs[semconv.A2A_CALL_TYPE] == "AGENT"
            assert attrs[semconv.A2A_STREAMING] is streaming
            assert attrs[semconv.A2A_REQUEST_SIZE] > 0
            assert attrs[semconv.A2A_RESPONSE_SIZE] > 0
            assert attrs[semconv.GEN_AI_USAGE_INPUT_TOKENS] == 3  # "hello world": 11 chars -> ceil(11/4)
        assert ca[semconv.GEN_AI_CONVERSATION_ID] == sa[semconv.GEN_AI_CONVERSATION_ID] != ""
        assert ca[semconv.A2A_TASK_ID] == sa[semconv.A2A_TASK_ID] != ""
        assert ca[semconv.A2A_MESSAGE_ID] == sa[semconv.A2A_MESSAGE_ID] != ""
        # both ends size the request without the trace context we add to its metadata (a 55-character
        # traceparent and its key); a2a-sdk's client itself adds an empty configuration (2 bytes)
        added = int(sa[semconv.A2A_REQUEST_SIZE]) - int(ca[semconv.A2A_REQUEST_SIZE])
        assert 0 <= added < 55
        assert ca[semconv.SERVER_ADDRESS] == "127.0.0.1"
        assert isinstance(ca[semconv.SERVER_PORT], int)
        assert str(ca[semconv.A2A_AGENT_URL]).startswith("http://127.0.0.1:")
        assert sa[semconv.A2A_REQUESTED_EXTENSIONS] == tuple(
            sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])
        )
    # B's reply is "B(hello world)" = 14 chars -> 4 tokens; A's is "A(B(hello world))" = 17 -> 5
    assert tree.one(name="invoke_agent B", kind=SpanKind.CLIENT).attributes[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == 4
    assert tree.one(name="invoke_agent A", kind=SpanKind.CLIENT).attributes[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == 5
    # the call A makes records its caller
    assert tree.one(name="invoke_agent B", kind=SpanKind.CLIENT).attributes[semconv.A2A_CALLER_NAME] == "A"
    # the executor's own work is inside the server span
    a_server = tree.one(name="invoke_agent A", kind=SpanKind.SERVER)
    tool = tree.one(name="execute_tool lookup", gen_ai__agent__name="A")
    assert tree.parent(tool) == a_server
    # a2a-sdk's own ~55 spans per request are suppressed
    assert {s.scope_name for s in spans} == {semconv.INSTRUMENTATION_NAME}


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_rest_binding_is_traced_like_json_rpc(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    """HTTP+JSON (REST) calls: the same spans, parent from the headers, extensions served."""
    b = start_agent("B")
    a = start_agent("A", next_url=b, streaming=streaming)
    client = AgentClient(a, streaming=streaming, bindings=("HTTP+JSON",))
    state, text = await client.ask("hello world")
    await client.close()
    assert (state, text) == ("TASK_STATE_COMPLETED", "A(B(hello world))")

    spans = await span_exporter.wait_for_async(lambda s: servers(s, 2))
    tree = SpanTree(spans)
    assert tree.call_chains() == [("pytest", "A", "B")]
    assert not tree.orphans
    client_span = tree.one(name="invoke_agent A", kind=SpanKind.CLIENT)
    server_span = tree.one(name="invoke_agent A", kind=SpanKind.SERVER)
    assert tree.parent(server_span) == client_span
    ca, sa = client_span.attributes, server_span.attributes
    assert ca[semconv.A2A_PROTOCOL_BINDING] == sa[semconv.A2A_PROTOCOL_BINDING] == "HTTP+JSON"
    assert str(ca[semconv.A2A_AGENT_URL]).endswith("/rest")
    method = "SendStreamingMessage" if streaming else "SendMessage"
    for attrs in (ca, sa):
        assert attrs[semconv.A2A_METHOD] == method
        assert attrs[semconv.A2A_TASK_STATE] == "completed"
        assert attrs[semconv.A2A_STREAMING] is streaming
    assert ca[semconv.A2A_TASK_ID] == sa[semconv.A2A_TASK_ID] != ""
    assert sa[semconv.A2A_REQUESTED_EXTENSIONS] == tuple(
        sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])
    )
    # A's own call to B went over JSON-RPC (its default)
    assert tree.one(name="invoke_agent B", kind=SpanKind.SERVER).attributes[semconv.A2A_PROTOCOL_BINDING] == "JSONRPC"


async def test_trace_context_travels_in_headers_and_metadata(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    probe = start_agent("P", behaviour="probe")
    client = AgentClient(probe, streaming=False)
    _state, text = await client.ask("who am I?")
    await client.close()
    seen = json.loads(text)
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    call = next(s for s in spans if s.kind is SpanKind.CLIENT)
    server = next(s for s in spans if s.kind is SpanKind.SERVER)
    expected = f"00-{call.trace_id}-{call.span_id}-"  # then the trace flags (sampled, maybe random)
    assert seen["header_traceparent"].startswith(expected)
    assert int(seen["header_traceparent"][-2:], 16) & 1  # sampled
    # the metadata copy (checked against an uninstrumented 0.3 agent in test_compat_v03) repeated the
    # header, so the server removed it: the agent sees the message as the caller wrote it
    assert seen["metadata_traceparent"] is None
    assert seen["metadata_present"] is False  # not even an empty metadata the caller never wrote
    assert seen["extensions"] == sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])
    assert seen["current_span"] == server.span_id  # the executor runs inside the server span


def _raw_send(metadata: dict[str, str], headers: dict[str, str]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": "1",
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], "metadata": metadata}
        },
    }


@pytest.mark.parametrize("header", ["A2A-Extensions", "a2a-extensions"])
async def test_extensions_the_caller_asks_for_are_kept_beside_ours(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter, header: str
) -> None:
    """A caller's own ``A2A-Extensions`` header (header names are case-insensitive) is merged, not replaced."""
    probe = start_agent("P", behaviour="probe")
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, probe).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
        context = ClientCallContext(service_parameters={header: "urn:example:mine"})
        request = SendMessageRequest(message=new_text_message("who am I?", role=Role.ROLE_USER))
        events = [e async for e in client.send_message(request, context=context)]
        await client.close()
    seen = json.loads(events[-1].message.parts[0].text)
    assert seen["extensions"] == sorted(
        ["urn:example:mine", semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI]
    )
    assert context.service_parameters == {header: "urn:example:mine"}  # the caller's context is left as it was


async def test_tracestate_and_baggage_travel_with_the_call(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    """The default propagators carry vendors' ``tracestate`` entries and W3C baggage: both reach the agent."""
    probe = start_agent("P", behaviour="probe")
    parent = SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0xB7AD6B7169203331,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=TraceState([("vendor", "v1")]),
    )
    token = otel_context.attach(
        baggage.set_baggage("session.id", "s-42", context=trace.set_span_in_context(NonRecordingSpan(parent)))
    )
    try:
        client = AgentClient(probe, streaming=False)
        _state, text = await client.ask("who am I?")
        await client.close()
    finally:
        otel_context.detach(token)
    seen = json.loads(text)
    assert seen["header_traceparent"].startswith("00-0af7651916cd43dd8448eb211c80319c-")
    assert seen["trace_state"] == "vendor=v1"
    assert seen["baggage"] == {"session.id": "s-42"}
    # the metadata copy repeated the headers, all of it: removed, the agent sees the message as written
    assert seen["metadata_keys"] == []


async def test_context_from_metadata_alone_brings_tracestate_and_baggage(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    """A hop that dropped the headers: the metadata copy carries everything, and the agent keeps it."""
    url = start_agent("P", behaviour="probe")
    metadata = {
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        "tracestate": "vendor=v1",
        "baggage": "session.id=s-42",
    }
    async with httpx.AsyncClient() as http:
        response = await http.post(url, json=_raw_send(metadata, {}), headers={"A2A-Version": "1.0"})
    seen = json.loads(response.json()["result"]["message"]["parts"][0]["text"])
    assert seen["trace_state"] == "vendor=v1"
    assert seen["baggage"] == {"session.id": "s-42"}
    assert seen["metadata_keys"] == ["baggage", "traceparent", "tracestate"]  # not repeated anywhere: kept
    (server,) = await span_exporter.wait_for_async(1)
    assert (server.trace_id, server.parent_span_id) == ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7")


@pytest.mark.parametrize("channel", ["metadata", "header", "both", "both-same", "metadata, stray headers"])
async def test_server_takes_parent_from_header_else_metadata(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter, channel: str
) -> None:
    url = start_agent("S", behaviour="message")
    from_header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    from_metadata = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    headers = {"A2A-Version": "1.0"}
    metadata: dict[str, str] = {}
    if channel in ("header", "both"):
        headers["traceparent"] = from_header
    if channel in ("metadata", "both"):
        metadata["traceparent"] = from_metadata
    if channel == "both-same":
        headers["traceparent"] = metadata["traceparent"] = from_header
    if channel == "metadata, stray headers":  # headers with no traceparent do not hide the metadata's
        metadata["traceparent"] = from_metadata
        headers.update(tracestate="vendor=v1", baggage="k=v")
    async with httpx.AsyncClient() as http:
        response = await http.post(url, json=_raw_send(metadata, headers), headers=headers)
    assert response.status_code == 200 and "result" in response.json()
    (server,) = await span_exporter.wait_for_async(1)
    assert server.trace_id == "0af7651916cd43dd8448eb211c80319c"
    assert server.parent_span_id == ("00f067aa0ba902b7" if channel.startswith("metadata") else "b7ad6b7169203331")


def test_inside_an_http_server_span_the_metadata_context_still_wins_over_stray_headers() -> None:
    """An HTTP server span (ASGI instrumentation) is current and the headers lost the traceparent but kept
    baggage: the caller's context in the metadata is still the parent, and the baggage comes along."""
    from a2a.server.context import ServerCallContext

    from coordbench.instrument._server import parent_context

    asgi = NonRecordingSpan(
        SpanContext(trace_id=0x1, span_id=0x2, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    )
    request = SendMessageRequest(message=_message("hi"))
    request.message.metadata.fields[
        "traceparent"
    ].string_value = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    call_context = ServerCallContext(state={"headers": {"baggage": "k=v"}})
    token = otel_context.attach(trace.set_span_in_context(asgi))
    try:
        parent = parent_context(request, call_context)
    finally:
        otel_context.detach(token)
    assert parent is not None
    context = trace.get_current_span(parent).get_span_context()
    assert (context.trace_id, context.span_id) == (0x0AF7651916CD43DD8448EB211C80319C, 0x00F067AA0BA902B7)
    assert baggage.get_baggage("k", parent) == "v"  # and the headers' baggage is not lost
    # a caller in the current span's own trace: our span nests under the HTTP server span
    request.message.metadata.fields["traceparent"].string_value = "00-" + "0" * 31 + "1-" + "0" * 15 + "3-01"
    token = otel_context.attach(trace.set_span_in_context(asgi))
    try:
        assert parent_context(request, call_context) is None  # same trace as the current span: nest under it
    finally:
        otel_context.detach(token)


async def test_streamed_call_span_lasts_until_the_last_event(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    url = start_agent("Slow", delay=0.3)
    client = AgentClient(url, streaming=True)
    await client.ask("x")
    await client.close()
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    call = next(s for s in spans if s.kind is SpanKind.CLIENT)
    server = next(s for s in spans if s.kind is SpanKind.SERVER)
    assert call.duration_ms >= 300
    assert server.duration_ms >= 300
    assert call.attributes[semconv.A2A_RESPONSE_EVENTS] >= 3  # task, working, artifact, completed


async def test_a_streamed_server_span_covers_writing_the_final_event(span_exporter: RecordingSpanExporter) -> None:
    """The SERVER span of a stream ends once its final event has gone out, not before it is written."""
    open_at_final_write: list[bool] = []

    def app(url: str) -> Any:
        inner = create_a2a_app(build_agent_card("W", url, description="relay W"), RelayExecutor("W"))

        async def watched(scope: Any, receive: Any, send: Any) -> None:
            async def watching_send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.body" and b"TASK_STATE_COMPLETED" in message.get("body", b""):
                    ended = any(s.kind is SpanKind.SERVER for s in span_exporter.spans())
                    open_at_final_write.append(not ended)
                await send(message)

            await inner(scope, receive, watching_send)

        return watched

    with LoopbackServer(app) as url:
        client = AgentClient(url, streaming=True)
        assert await client.ask("x") == ("TASK_STATE_COMPLETED", "W(x)")
        spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
        await client.close()
    assert open_at_final_write == [True]
    call = next(s for s in spans if s.kind is SpanKind.CLIENT)
    server = next(s for s in spans if s.kind is SpanKind.SERVER)
    assert server.parent_span_id == call.span_id
    assert server.attributes[semconv.A2A_TASK_STATE] == "completed"


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_the_callers_own_code_between_events_runs_in_its_own_context(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    """The CLIENT span is current only while a2a-sdk works: the caller's loop body and what follows see theirs."""
    url = start_agent("E")
    client = AgentClient(url, streaming=streaming)
    inner = await client._get()
    tracer = tracer_provider.get_tracer("caller")
    request = SendMessageRequest(message=_message("hi"))
    with tracer.start_as_current_span("caller work") as mine:
        async for _event in inner.send_message(request):
            assert trace.get_current_span() is mine
            with tracer.start_as_current_span("handle event"):
                pass
        assert trace.get_current_span() is mine
    assert trace.get_current_span() is trace.INVALID_SPAN
    await client.close()
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    tree = SpanTree(spans)
    work = tree.one(name="caller work")
    call = tree.one(name="invoke_agent E", kind=SpanKind.CLIENT)
    assert tree.parent(call) == work
    handled = [s for s in spans if s.name == "handle event"]
    assert handled and all(tree.parent(s) == work for s in handled)


async def test_a_caller_that_stops_reading_early_ends_its_span_cleanly(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    """Breaking out of a stream and closing it ends the CLIENT span at once, without an error."""
    url = start_agent("Slow", delay=0.5)
    client = AgentClient(url, streaming=True)
    inner = await client._get()
    request = SendMessageRequest(message=_message("first event only"))
    async with contextlib.aclosing(inner.send_message(request)) as stream:
        async for _event in stream:
            break
    (call,) = await span_exporter.wait_for_async(lambda s: any(x.kind is SpanKind.CLIENT for x in s))
    assert call.status_code is StatusCode.UNSET
    assert semconv.ERROR_TYPE not in call.attributes
    assert call.attributes[semconv.A2A_RESPONSE_EVENTS] == 1
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))  # the agent finishes its work
    served = next(s for s in spans if s.kind is SpanKind.SERVER)
    assert served.parent_span_id == call.span_id
    assert call.end_time_unix_nano < served.end_time_unix_nano  # it did not wait for the agent to finish
    await client.close()


async def test_server_span_covers_an_executor_that_outlives_the_request(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    url = start_agent("Background", delay=0.4)
    client = AgentClient(url, streaming=False)
    inner = await client._get()
    request = SendMessageRequest(configuration=SendMessageConfiguration(return_immediately=True))
    request.message.CopyFrom(_message("go"))
    events = [e async for e in inner.send_message(request)]
    assert events[0].task.status.state != 3  # not yet completed: the call returned immediately
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    call = next(s for s in spans if s.kind is SpanKind.CLIENT)
    server = next(s for s in spans if s.kind is SpanKind.SERVER)
    assert call.end_time_unix_nano < server.end_time_unix_nano  # the call returned before the work was done
    assert server.duration_ms >= 400  # the server span covers the executor's 0.4 s
    await client.close()


def _message(text: str):
    from a2a.helpers import new_text_message
    from a2a.types import Role

    return new_text_message(text, role=Role.ROLE_USER)


async def test_get_task_is_traced_on_both_sides(start_agent: StartAgent, span_exporter: RecordingSpanExporter) -> None:
    url = start_agent("T")
    client = AgentClient(url, streaming=False)
    await client.ask("x")
    inner = await client._get()
    first = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    task_id = next(s for s in first if s.kind is SpanKind.CLIENT).attributes[semconv.A2A_TASK_ID]
    task = await inner.get_task(GetTaskRequest(id=str(task_id)), context=ClientCallContext(timeout=5))
    await client.close()
    assert task.id == task_id
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 2))
    get_client = next(s for s in spans if s.name == "GetTask T" and s.kind is SpanKind.CLIENT)
    get_server = next(s for s in spans if s.name == "GetTask T" and s.kind is SpanKind.SERVER)
    assert get_server.parent_span_id == get_client.span_id
    for span in (get_client, get_server):
        assert span.attributes[semconv.A2A_METHOD] == "GetTask"
        assert span.attributes[semconv.A2A_TASK_ID] == task_id
        assert span.attributes[semconv.A2A_TASK_STATE] == "completed"
        assert semconv.GEN_AI_OPERATION_NAME not in span.attributes
        assert span.status_code is StatusCode.UNSET


async def test_message_only_agent(start_agent: StartAgent, span_exporter: RecordingSpanExporter) -> None:
    url = start_agent("M", behaviour="message")
    client = AgentClient(url, streaming=True)
    state, text = await client.ask("ping")
    await client.close()
    assert (state, text) == ("message", "M(ping)")
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    for span in spans:
        assert semconv.A2A_TASK_STATE not in span.attributes
        assert span.attributes[semconv.GEN_AI_CONVERSATION_ID]
        assert span.attributes[semconv.A2A_RESPONSE_EVENTS] == 1


async def test_subscribe_and_cancel_are_traced_on_both_sides(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter
) -> None:
    """A caller starts two slow tasks without waiting, follows one to the end and cancels the other."""
    url = start_agent("Slow", delay=0.3)
    client = AgentClient(url, streaming=True)
    inner = await client._get()
    started: list[str] = []
    for text in ("follow me", "cancel me"):
        request = SendMessageRequest(configuration=SendMessageConfiguration(return_immediately=True))
        request.message.CopyFrom(_message(text))
        async for event in inner.send_message(request):
            if event.WhichOneof("payload") == "task":
                started.append(event.task.id)
                break
    followed, cancelled = started
    cancel_reply = await inner.cancel_task(CancelTaskRequest(id=cancelled))
    states = [e async for e in inner.subscribe(SubscribeToTaskRequest(id=followed))]
    await client.close()
    assert cancel_reply.status.state == TaskState.TASK_STATE_CANCELED
    final = states[-1]
    final_state = (
        final.status_update.status.state if final.WhichOneof("payload") == "status_update" else final.task.status.state
    )
    assert final_state == TaskState.TASK_STATE_COMPLETED

    spans = await span_exporter.wait_for_async(lambda s: servers(s, 4))
    tree = SpanTree(spans)
    for name, task_id, state in (
        ("CancelTask Slow", cancelled, "canceled"),
        ("SubscribeToTask Slow", followed, "completed"),
    ):
        call = tree.one(name=name, kind=SpanKind.CLIENT)
        served = tree.one(name=name, kind=SpanKind.SERVER)
        assert tree.parent(served) == call
        for span in (call, served):
            assert span.attributes[semconv.A2A_TASK_ID] == task_id
            assert span.attributes[semconv.A2A_TASK_STATE] == state
            assert span.status_code is StatusCode.UNSET
    subscribe = tree.one(name="SubscribeToTask Slow", kind=SpanKind.CLIENT)
    assert subscribe.attributes[semconv.A2A_STREAMING] is True
    assert subscribe.duration_ms >= 100  # it followed the task to its end


@pytest.mark.parametrize(
    ("streaming", "resend_task"),
    [(False, False), (True, False), (True, True)],
    ids=["send", "stream", "stream-resent-task"],
)
async def test_input_required_turn_and_its_follow_up(
    start_agent: StartAgent, span_exporter: RecordingSpanExporter, streaming: bool, resend_task: bool
) -> None:
    """An agent asks for more input; the caller answers on the same task: two calls, one conversation.

    The first call ends at ``input-required`` (an interrupted task, not an error), the second
    carries the same task and context ids to ``completed``, and both sit under the caller's
    HOST step, each server span under its client span. When the agent re-sends the resumed task
    first, the second stream opens with a snapshot still in ``input-required``: the spans must
    not end there (they did, reporting ``input-required`` for a call that completed).
    """
    url = start_agent("Asker", behaviour="ask", resend_task=resend_task)
    client = AgentClient(url, streaming=streaming)
    inner = await client._get()

    async def final_task(message: Any, last: Any = None) -> Any:
        """The task as the call leaves it (status updates applied to ``last``, the task known so far)."""
        async for event in inner.send_message(SendMessageRequest(message=message)):
            kind = event.WhichOneof("payload")
            if kind == "task":
                last = event.task
            elif kind == "status_update" and last is not None:
                last.status.CopyFrom(event.status_update.status)
        assert last is not None
        return last

    async with host_step("conversation"):
        first = await final_task(_message("book a table"))
        state_before = first.status.state
        second = await final_task(
            new_text_message("for two", role=Role.ROLE_USER, context_id=first.context_id, task_id=first.id),
            Task(id=first.id, context_id=first.context_id),
        )
    await client.close()
    assert state_before == TaskState.TASK_STATE_INPUT_REQUIRED
    assert second.status.state == TaskState.TASK_STATE_COMPLETED
    assert (second.id, second.context_id) == (first.id, first.context_id)

    spans = await span_exporter.wait_for_async(
        lambda s: servers(s, 2) and any(x.name.startswith("invoke_workflow") for x in s)
    )
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 1
    host = tree.one(name="invoke_workflow conversation")
    calls = sorted(
        (s for s in spans if s.name == "invoke_agent Asker" and s.kind is SpanKind.CLIENT),
        key=lambda s: s.start_time_unix_nano,
    )
    assert len(calls) == 2
    for call, state in zip(calls, ("input-required", "completed"), strict=True):
        assert tree.parent(call) == host
        (served,) = tree.children(call)
        assert served.kind is SpanKind.SERVER
        for span in (call, served):
            assert span.attributes[semconv.A2A_TASK_ID] == first.id
            assert span.attributes[semconv.GEN_AI_CONVERSATION_ID] == first.context_id
            assert span.attributes[semconv.A2A_TASK_STATE] == state
            assert span.status_code is StatusCode.UNSET
    assert calls[0].end_time_unix_nano <= calls[1].start_time_unix_nano
    # the follow-up's spans cover its whole stream: working, the artifact, completed (+ a re-sent snapshot)
    if streaming:
        assert calls[1].attributes[semconv.A2A_RESPONSE_EVENTS] == 3 + resend_task


async def test_agent_url_credentials_never_reach_spans(span_exporter: RecordingSpanExporter) -> None:
    """A card may advertise a URL carrying a token; the call works and the spans show it redacted."""
    secret = "s3cret-token"

    def app(url: str) -> object:
        card = build_agent_card("Guarded", url, description="advertises a URL with credentials")
        for interface in card.supported_interfaces:
            if interface.protocol_binding == "JSONRPC":
                interface.url = url.replace("http://", f"http://bot:{secret}@", 1) + f"?api_key={secret}"
        return create_a2a_app(card, RelayExecutor("Guarded"))

    with LoopbackServer(app) as url:
        client = AgentClient(url, streaming=False)
        state, text = await client.ask("hi")
        await client.close()
    assert (state, text) == ("TASK_STATE_COMPLETED", "Guarded(hi)")
    spans = await span_exporter.wait_for_async(lambda s: servers(s, 1))
    call = next(s for s in spans if s.kind is SpanKind.CLIENT)
    host_port = url.removeprefix("http://")
    assert call.attributes[semconv.A2A_AGENT_URL] == f"http://REDACTED:REDACTED@{host_port}?api_key=REDACTED"
    assert secret not in json.dumps([span_to_dict(s) for s in spans])
