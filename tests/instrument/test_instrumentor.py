"""A2AInstrumentor lifecycle: entry point, instrument/uninstrument, SDK span suppression."""

from __future__ import annotations

from importlib.metadata import entry_points

import a2a.utils.telemetry
import wrapt
from a2a.client.base_client import BaseClient
from a2a.server.agent_execution.active_task import ActiveTask
from a2a.server.request_handlers import DefaultRequestHandlerV2, LegacyRequestHandler
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from agents.relay import AgentClient
from conftest import StartAgent
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
    assert A2AInstrumentor().instrumentation_dependencies() == ("a2a-sdk >= 1.3, < 1.4",)


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


async def test_sdk_spans_can_be_kept(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    """With suppress_sdk_spans=False the SDK decorators run again (they use the global provider)."""
    sdk_trace = a2a.utils.telemetry.trace
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, suppress_sdk_spans=False)
    try:
        assert a2a.utils.telemetry.trace is sdk_trace
    finally:
        A2AInstrumentor().uninstrument()


async def test_extensions_request_can_be_turned_off(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    import json

    url = start_agent("Probe", behaviour="probe")
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, request_extensions=False)
    try:
        client = AgentClient(url, streaming=False)
        _state, text = await client.ask("hi")
        await client.close()
    finally:
        A2AInstrumentor().uninstrument()
    seen = json.loads(text)
    assert seen["extensions"] == []
    assert seen["header_traceparent"] is not None
