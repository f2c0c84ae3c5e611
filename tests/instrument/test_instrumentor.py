"""A2AInstrumentor lifecycle: entry point, instrument/uninstrument, SDK span suppression."""

from __future__ import annotations

import asyncio
import re
from importlib.metadata import entry_points
from typing import Any

import a2a.utils.telemetry
import pytest
import wrapt
from a2a.client.base_client import BaseClient
from a2a.server.agent_execution.active_task import ActiveTask
from a2a.server.events import InMemoryQueueManager
from a2a.server.request_handlers import DefaultRequestHandlerV2, LegacyRequestHandler
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.tasks import task_manager
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.instrument import A2AInstrumentor
from coordbench.testing import RecordingSpanExporter

PATCHED = [
    (BaseClient, "send_message"),
    (BaseClient, "get_task"),
    (DefaultRequestHandlerV2, "on_message_send"),
    (DefaultRequestHandlerV2, "on_message_send_stream"),
    (LegacyRequestHandler, "on_message_send"),
    (LegacyRequestHandler, "_run_event_stream"),
    (ActiveTask, "__init__"),
]


def test_registered_for_opentelemetry_instrument() -> None:
    (entry,) = [e for e in entry_points(group="opentelemetry_instrumentor") if e.name == "a2a"]
    assert entry.value == "coordbench.instrument:A2AInstrumentor"
    assert entry.load() is A2AInstrumentor
    assert A2AInstrumentor().instrumentation_dependencies() == ("a2a-sdk >= 1.3, < 2",)


def test_uninstrument_restores_everything(tracer_provider: TracerProvider) -> None:
    originals = {(cls, name): cls.__dict__[name] for cls, name in PATCHED}
    sdk_trace = a2a.utils.telemetry.trace
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    try:
        for cls, name in PATCHED:
            assert isinstance(cls.__dict__[name], wrapt.FunctionWrapper), (cls, name)
        assert a2a.utils.telemetry.trace is not sdk_trace  # the SDK's own spans are silenced
    finally:
        A2AInstrumentor().uninstrument()
    for (cls, name), original in originals.items():
        assert cls.__dict__[name] is original, (cls, name)
    assert a2a.utils.telemetry.trace is sdk_trace is trace


async def test_no_spans_after_uninstrument(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    url = start_agent("Quiet")
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    A2AInstrumentor().uninstrument()
    client = AgentClient(url, streaming=True)
    assert await client.ask("hi") == ("TASK_STATE_COMPLETED", "Quiet(hi)")
    await client.close()
    # the relay's own tool step goes to the global (no-op) provider: nothing reaches our exporter
    assert span_exporter.spans() == []


SDK_TRACED: list[tuple[Any, str]] = [
    (JsonRpcDispatcher, "handle_requests"),
    (DefaultRequestHandlerV2, "_setup_active_task"),
    (LegacyRequestHandler, "_setup_message_execution"),
    (InMemoryQueueManager, "add"),
    (task_manager, "append_artifact_to_task"),
]
"""Methods and a function a2a-sdk wraps with its telemetry decorators (``trace_class``, ``trace_function``)."""


def _is_sdk_wrapper(value: Any) -> bool:
    code = getattr(value, "__code__", None)
    return hasattr(value, "__wrapped__") and getattr(code, "co_name", "") in {"async_wrapper", "sync_wrapper"}


def test_sdk_telemetry_wrappers_are_taken_out_while_instrumented(tracer_provider: TracerProvider) -> None:
    """Each call through a decorated a2a-sdk method otherwise pays for a wrapper that records nothing."""
    wrappers = {(owner, name): vars(owner)[name] for owner, name in SDK_TRACED}
    assert all(_is_sdk_wrapper(w) for w in wrappers.values())  # a2a-sdk as installed
    trace_class = a2a.utils.telemetry.trace_class
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    try:
        for (owner, name), wrapper in wrappers.items():
            assert vars(owner)[name] is wrapper.__wrapped__, (owner, name)

        # a class decorated while instrumented, as in an a2a-sdk module imported later
        @a2a.utils.telemetry.trace_class(kind=SpanKind.SERVER)
        class Late:
            async def work(self, x: int) -> int:
                return x + 1

        assert not _is_sdk_wrapper(vars(Late)["work"])
        assert asyncio.run(Late().work(1)) == 2
    finally:
        A2AInstrumentor().uninstrument()
    for (owner, name), wrapper in wrappers.items():
        assert vars(owner)[name] is wrapper, (owner, name)
    assert _is_sdk_wrapper(vars(Late)["work"])  # decorated as a2a-sdk meant it once we are gone
    assert a2a.utils.telemetry.trace_class is trace_class


def test_uninstrument_leaves_a_method_someone_replaced_since(tracer_provider: TracerProvider) -> None:
    wrapper = vars(JsonRpcDispatcher)["handle_requests"]
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    theirs = wrapt.FunctionWrapper(vars(JsonRpcDispatcher)["handle_requests"], lambda w, i, a, k: w(*a, **k))
    JsonRpcDispatcher.handle_requests = theirs  # another instrumentation wrapped it after us
    try:
        A2AInstrumentor().uninstrument()
        assert vars(JsonRpcDispatcher)["handle_requests"] is theirs
    finally:
        JsonRpcDispatcher.handle_requests = wrapper


async def test_sdk_spans_can_be_kept(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    """With suppress_sdk_spans=False the SDK decorators run again (they use the global provider)."""
    sdk_trace = a2a.utils.telemetry.trace
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, suppress_sdk_spans=False)
    try:
        assert a2a.utils.telemetry.trace is sdk_trace
        assert all(_is_sdk_wrapper(vars(owner)[name]) for owner, name in SDK_TRACED)
    finally:
        A2AInstrumentor().uninstrument()


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (True, sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])),
        ([semconv.TRACEABILITY_EXTENSION_URI], [semconv.TRACEABILITY_EXTENSION_URI]),
        ((semconv.TIMESTAMP_EXTENSION_URI_SPEC,), [semconv.TIMESTAMP_EXTENSION_URI_SPEC]),
        (
            {semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI},
            sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI]),
        ),
        ([], []),
        (False, []),
    ],
    ids=["all", "steps-only", "timestamps-spec-spelling", "set", "none", "off"],
)
async def test_the_extensions_asked_for_can_be_chosen(
    start_agent: StartAgent,
    tracer_provider: TracerProvider,
    span_exporter: RecordingSpanExporter,
    requested: object,
    expected: list[str],
) -> None:
    """The callee sees exactly the URIs asked for (none when off), and stamps only if timestamps are among them.

    The trace context is carried whatever is asked for.
    """
    import json

    from support.responses import final_payloads

    url = start_agent("Probe", behaviour="probe")
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, request_extensions=requested)
    try:
        client = AgentClient(url, streaming=False)
        _state, text = await client.ask("hi")
        await client.close()
        plain = start_agent("Plain")
        payloads = json.dumps(await final_payloads(plain, streaming=True))
    finally:
        A2AInstrumentor().uninstrument()
    seen = json.loads(text)
    assert seen["extensions"] == expected
    assert seen["header_traceparent"] is not None
    stamped = any(uri in semconv.TIMESTAMP_EXTENSION_URIS for uri in expected)
    assert any(key in payloads for key in semconv.TIMESTAMP_METADATA_KEYS) is stamped


@pytest.mark.parametrize(
    ("requested", "error", "message"),
    [
        (semconv.TRACEABILITY_EXTENSION_URI, TypeError, "not str"),
        (1, TypeError, "not int 1"),
        ([semconv.TRACEABILITY_EXTENSION_URI, 7], TypeError, "a string, not int 7"),
        (["https://example.com/ext/v1"], ValueError, "'https://example.com/ext/v1' is not one of"),
    ],
    ids=["bare-string", "number", "non-string-uri", "unknown-uri"],
)
def test_a_bad_extensions_choice_is_refused_before_anything_is_instrumented(
    requested: object, error: type[Exception], message: str
) -> None:
    from coordbench.instrument._state import STATE

    instrumentor = A2AInstrumentor()
    with pytest.raises(error, match=re.escape(message)):
        instrumentor.instrument(request_extensions=requested)
    assert STATE.tracer is None
    assert not instrumentor.is_instrumented_by_opentelemetry


async def test_message_content_is_not_recorded_by_default(
    start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter
) -> None:
    from coordbench import semconv

    url = start_agent("Quiet", behaviour="message")  # no tool step that records its query on purpose
    client = AgentClient(url, streaming=False)
    await client.ask("my secret plan")
    await client.close()
    spans = await a2a_instrumented.wait_for_async(lambda s: any(x.kind.name == "SERVER" for x in s))
    a2a_spans = [s for s in spans if semconv.A2A_METHOD in s.attributes]
    assert len(a2a_spans) == len(spans) == 2
    for span in a2a_spans:
        assert semconv.GEN_AI_INPUT_MESSAGES not in span.attributes
        assert semconv.GEN_AI_OUTPUT_MESSAGES not in span.attributes
        assert "my secret plan" not in repr(span.attributes)


@pytest.mark.parametrize("how", ["kwarg", "env", "env-span-only"])
async def test_message_content_capture(
    start_agent: StartAgent,
    tracer_provider: TracerProvider,
    span_exporter: RecordingSpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    """Opt-in capture puts the sent and received text on the client span only, truncated at 4 KiB."""
    import json

    from coordbench import semconv
    from coordbench.spans import SpanKind

    url = start_agent("Echo")
    if how.startswith("env"):  # a boolean word, or the GenAI instrumentations' mode (ADK's documented setting)
        monkeypatch.setenv(semconv.CAPTURE_CONTENT_ENV, "SPAN_ONLY" if how == "env-span-only" else "true")
        A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    else:
        A2AInstrumentor().instrument(tracer_provider=tracer_provider, capture_content=True)
    try:
        client = AgentClient(url, streaming=True)
        await client.ask("plan the launch")
        await client.ask("x" * 5000)
        await client.close()
    finally:
        A2AInstrumentor().uninstrument()
    spans = await span_exporter.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 2)
    clients = sorted((s for s in spans if s.kind is SpanKind.CLIENT), key=lambda s: s.start_time_unix_nano)
    first, second = (json.loads(str(s.attributes[semconv.GEN_AI_INPUT_MESSAGES])) for s in clients)
    assert first == [{"role": "user", "parts": [{"type": "text", "content": "plan the launch"}]}]
    out = json.loads(str(clients[0].attributes[semconv.GEN_AI_OUTPUT_MESSAGES]))
    assert out == [{"role": "assistant", "parts": [{"type": "text", "content": "Echo(plan the launch)"}]}]
    long_text = second[0]["parts"][0]["content"]
    assert long_text == "x" * 4096 + "...[truncated]"
    for span in spans:
        if span.kind is SpanKind.SERVER:
            assert semconv.GEN_AI_INPUT_MESSAGES not in span.attributes
