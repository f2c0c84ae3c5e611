"""A2AInstrumentor under head sampling: calls that are not sampled still carry their context.

Production tracing samples: most calls are not recorded. Such a call must still tell its
callee which trace it belongs to (and that it was not sampled), the callee must still serve
the extensions it was asked for, and nothing about what the agents say may change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, ParentBased, Sampler

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.instrument import A2AInstrumentor
from coordbench.spans import SpanKind
from coordbench.testing import RecordingSpanExporter
from support.responses import final_payloads

InstrumentWith = Callable[[Sampler], RecordingSpanExporter]


class _StartedSpans(SpanProcessor):
    """Counts spans that started recording (a processor hears only of those)."""

    def __init__(self) -> None:
        self.recording = 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        del parent_context
        self.recording += span.is_recording()


@pytest.fixture
def instrument_with() -> Iterator[InstrumentWith]:
    """Instrument with a provider using the given sampler; returns the exporter it feeds."""
    instrumentor = A2AInstrumentor()
    providers: list[TracerProvider] = []

    def instrument(sampler: Sampler) -> RecordingSpanExporter:
        exporter = RecordingSpanExporter()
        provider = TracerProvider(sampler=sampler, resource=Resource.create({"service.name": "pytest"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        started = _StartedSpans()
        provider.add_span_processor(started)
        exporter.started = started  # type: ignore[attr-defined]
        providers.append(provider)
        instrumentor.instrument(tracer_provider=provider)
        return exporter

    yield instrument
    instrumentor.uninstrument()
    for provider in providers:
        provider.shutdown()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_unsampled_calls_record_nothing_and_change_nothing(
    start_agent: StartAgent, instrument_with: InstrumentWith, streaming: bool
) -> None:
    exporter = instrument_with(ALWAYS_OFF)
    b = start_agent("B")
    a = start_agent("A", next_url=b, streaming=streaming)
    client = AgentClient(a, streaming=streaming)
    assert await client.ask("hello world") == ("TASK_STATE_COMPLETED", "A(B(hello world))")
    assert await client.ask("again") == ("TASK_STATE_COMPLETED", "A(B(again))")
    await client.close()
    # every span of both calls has started by now (a server span starts before its answer); a span that is
    # not recording when it starts is never exported, so none started recording means none will be exported
    assert exporter.started.recording == 0  # type: ignore[attr-defined]
    assert exporter.spans() == []


async def test_an_unsampled_caller_still_passes_its_trace_context(
    start_agent: StartAgent, instrument_with: InstrumentWith
) -> None:
    """The caller does not sample; a callee that records anyway joins the caller's trace under its call."""
    exporter = instrument_with(ParentBased(ALWAYS_OFF, remote_parent_not_sampled=ALWAYS_ON))
    probe = start_agent("P", behaviour="probe")
    client = AgentClient(probe, streaming=False)
    _state, text = await client.ask("who am I?")
    await client.close()
    seen = json.loads(text)
    (server,) = await exporter.wait_for_async(1)
    _version, trace_id, span_id, flags = seen["header_traceparent"].split("-")
    assert not int(flags, 16) & 1  # not sampled, and the callee is told so (the flags may also say "random")
    assert server.kind is SpanKind.SERVER
    assert (server.trace_id, server.parent_span_id) == (trace_id, span_id)
    assert seen["current_span"] == server.span_id
    assert seen["metadata_traceparent"] is None  # the metadata copy repeated the header: removed
    assert seen["extensions"] == sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_unsampled_agents_still_serve_the_extensions_asked_for(
    start_agent: StartAgent, instrument_with: InstrumentWith, streaming: bool
) -> None:
    """Timestamps are a protocol feature, not tracing: an unsampled request gets them too."""
    instrument_with(ALWAYS_OFF)
    url = start_agent("T")
    events = await final_payloads(url, streaming=streaming)
    if streaming:
        artifacts = [e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e]
    else:
        artifacts = events[-1]["task"]["artifacts"]
    assert artifacts
    for artifact in artifacts:
        stamp = artifact["metadata"][semconv.TIMESTAMP_METADATA_KEY]
        assert stamp.endswith("Z") and "T" in stamp
    # no steps were recorded, so there is no trace to send back
    assert semconv.TRACEABILITY_METADATA_KEY not in json.dumps(events)
