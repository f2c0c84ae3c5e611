"""Samplers and span processors see our spans' attributes when the spans start, as with any instrumentation.

The instrumentation uses the OpenTelemetry API only: a span's first attributes go to
``start_span``, later ones to ``Span.set_attributes``. A sampler that samples on attributes and
a processor that reads them in ``on_start`` must therefore see them, on every span of a real call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanKind
from opentelemetry.util.types import Attributes

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.instrument import A2AInstrumentor
from coordbench.testing import RecordingSpanExporter


class _AttributeSampler(Sampler):
    """Keeps the attributes each sampling decision was shown, then samples as ``then`` does."""

    def __init__(self, then: Sampler = ALWAYS_ON) -> None:
        self.seen: list[dict[str, Any]] = []
        self.then = then

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: Any = None,
    ) -> SamplingResult:
        self.seen.append(dict(attributes or {}))
        return self.then.should_sample(parent_context, trace_id, name, kind, attributes, links)

    def get_description(self) -> str:
        return "AttributeSampler"


class _OnStartProbe(SpanProcessor):
    """Keeps the attributes each span has when it starts."""

    def __init__(self) -> None:
        self.at_start: list[dict[str, Any]] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.at_start.append(dict(span.attributes or {}))

    def on_end(self, span: ReadableSpan) -> None:
        return None


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_a_traced_call_shows_its_attributes_to_samplers_and_processors_at_start(
    start_agent: StartAgent, streaming: bool
) -> None:
    url = start_agent("B")
    sampler = _AttributeSampler()
    exporter = RecordingSpanExporter()
    provider = TracerProvider(sampler=sampler, resource=Resource.create({"service.name": "pytest"}))
    probe = _OnStartProbe()
    provider.add_span_processor(probe)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = A2AInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = AgentClient(url, streaming=streaming)
        assert await client.ask("hello") == ("TASK_STATE_COMPLETED", "B(hello)")
        await client.http.aclose()
    finally:
        instrumentor.uninstrument()
    provider.shutdown()
    # CLIENT, SERVER and the agent's TOOL step, each with its call type and callee when it starts
    for seen in (sampler.seen, probe.at_start):
        assert sorted(a[semconv.A2A_CALL_TYPE] for a in seen) == ["AGENT", "AGENT", "TOOL"]
        assert all(a[semconv.GEN_AI_AGENT_NAME] == "B" for a in seen if a[semconv.A2A_CALL_TYPE] == "AGENT")
    spans = exporter.get_finished_spans()
    client_span = next(s for s in spans if s.kind is SpanKind.CLIENT)
    attributes = client_span.attributes or {}
    assert attributes[semconv.A2A_STREAMING] is streaming
    assert attributes[semconv.A2A_TASK_STATE] == "completed"  # set at the end, through Span.set_attributes
    assert client_span.dropped_attributes == 0
