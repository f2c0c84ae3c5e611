"""Our spans' attributes written past the SDK's per-value cleaning give exactly what the SDK's own path gives.

Every comparison here is against the OpenTelemetry SDK's public path (``start_span(...,
attributes=...)``, ``Span.set_attributes``) run side by side, so the shortcut is checked
against the SDK itself: same keys in the same order, same values, same dropped count,
under default and tight limits, and samplers and processors that look at attributes still
see them when they look.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    ALWAYS_ON,
    ParentBased,
    ParentBasedTraceIdRatio,
    Sampler,
    SamplingResult,
)
from opentelemetry.trace import Link, NoOpTracer, SpanKind
from opentelemetry.util.types import Attributes

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench.instrument import A2AInstrumentor, _attributes
from coordbench.testing import RecordingSpanExporter

START = {
    "a2a.step.call_type": "AGENT",
    "gen_ai.agent.name": "bench",
    "a2a.streaming": False,
    "server.port": 8080,
    "a2a.request.size": 50,
    "a2a.protocol.requested_extensions": ("https://example.com/a", "https://example.com/b"),
    "a2a.task.id": "task-1",
    "a2a.step.cost": 0.25,
}
END = {
    "gen_ai.conversation.id": "ctx-1",
    "a2a.task.id": "task-1",  # set at start too: the SDK moves it to the end
    "a2a.task.state": "completed",
    "a2a.response.events": 4,
    "a2a.usage.estimated": True,
}


class _Color(enum.IntEnum):
    RED = 1


NOT_PLAIN = {"a2a.list": ["x", "y"], "a2a.enum": _Color.RED, "a2a.mixed": ("x", 1), "a2a.none": None}


def _provider(limits: SpanLimits | None = None, sampler: Sampler | None = None) -> TracerProvider:
    provider = TracerProvider(span_limits=limits, sampler=sampler, resource=Resource.create({}))
    provider.add_span_processor(SimpleSpanProcessor(RecordingSpanExporter()))
    return provider


def _record(provider: TracerProvider, start: dict[str, Any], end: dict[str, Any], *, shortcut: bool) -> Span:
    tracer = provider.get_tracer("test")
    if shortcut:
        span = _attributes.start_span(tracer, "invoke_agent bench", kind=SpanKind.CLIENT, attributes=lambda: start)
        _attributes.set_attributes(span, end)
    else:
        span = tracer.start_span("invoke_agent bench", kind=SpanKind.CLIENT, attributes=start)
        span.set_attributes(end)
    span.end()
    assert isinstance(span, Span)
    return span


def _as_recorded(span: Span) -> tuple[list[tuple[str, Any]], int]:
    return list((span.attributes or {}).items()), span.dropped_attributes


@pytest.mark.parametrize(
    "limits",
    [
        None,
        SpanLimits(max_span_attributes=5),
        SpanLimits(max_span_attribute_length=4),
        SpanLimits(max_span_attributes=12, max_span_attribute_length=100),
    ],
    ids=["default", "five-attributes", "four-characters", "roomy"],
)
@pytest.mark.parametrize(
    "extra", [{}, *({k: v} for k, v in NOT_PLAIN.items())], ids=["plain", *(k[4:] for k in NOT_PLAIN)]
)
def test_same_attributes_as_the_sdk_path(limits: SpanLimits | None, extra: dict[str, Any]) -> None:
    start = {**START, **extra}
    expected = _as_recorded(_record(_provider(limits), start, END, shortcut=False))
    assert _as_recorded(_record(_provider(limits), start, END, shortcut=True)) == expected


def test_the_reset_key_moves_to_the_end_as_in_the_sdk() -> None:
    keys = [key for key, _ in _as_recorded(_record(_provider(), START, END, shortcut=True))[0]]
    assert keys[-len(END) :] == list(END)
    assert keys.count("a2a.task.id") == 1


class _AttributeSampler(Sampler):
    """Keeps the attributes it was shown, then decides as ``then`` does (sample everything by default)."""

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


@pytest.mark.parametrize("wrapped", [False, True], ids=["as-is", "as-parent-based-root"])
def test_a_sampler_that_may_read_attributes_is_shown_them(wrapped: bool) -> None:
    sampler = _AttributeSampler()
    provider = _provider(sampler=ParentBased(sampler) if wrapped else sampler)
    _record(provider, START, END, shortcut=True)
    assert sampler.seen == [START]


@pytest.mark.parametrize(
    ("sampler", "built"),
    [
        (ALWAYS_OFF, 0),
        (ParentBased(ALWAYS_OFF), 0),
        (ParentBasedTraceIdRatio(0.0), 0),
        (ALWAYS_ON, 1),
        (_AttributeSampler(), 1),
        (ParentBased(_AttributeSampler(then=ALWAYS_OFF)), 1),
    ],
    ids=["off", "parent-based-off", "ratio-0", "on", "reads-attributes", "reads-attributes-and-drops"],
)
def test_attributes_are_built_only_for_a_span_that_records_or_a_sampler_that_reads_them(
    sampler: Sampler, built: int
) -> None:
    """A dropped call costs no attribute work, unless its sampler may look at the attributes to decide."""
    calls: list[int] = []

    def attributes() -> dict[str, Any]:
        calls.append(1)
        return dict(START)

    span = _attributes.start_span(
        _provider(sampler=sampler).get_tracer("test"), "x", kind=SpanKind.CLIENT, attributes=attributes
    )
    assert len(calls) == built
    if span.is_recording():
        assert isinstance(span, Span) and dict(span.attributes or {}) == START


class _OnStartProbe(SpanProcessor):
    """Keeps the attributes each span has when it starts."""

    def __init__(self) -> None:
        self.at_start: list[dict[str, Any]] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.at_start.append(dict(span.attributes or {}))

    def on_end(self, span: ReadableSpan) -> None:
        return None


def test_a_processor_added_later_sees_the_attributes_when_spans_start() -> None:
    provider = _provider()
    _record(provider, START, END, shortcut=True)  # quiet processors only: the shortcut is taken and cached
    probe = _OnStartProbe()
    provider.add_span_processor(probe)
    _record(provider, START, END, shortcut=True)
    assert probe.at_start == [START]


def test_the_shortcut_is_taken_for_the_sdk_samplers_and_processors_that_ignore_attributes() -> None:
    for sampler in (ALWAYS_ON, ParentBased(ALWAYS_ON), ParentBasedTraceIdRatio(0.5)):
        provider = TracerProvider(sampler=sampler)
        provider.add_span_processor(BatchSpanProcessor(RecordingSpanExporter()))
        provider.add_span_processor(SimpleSpanProcessor(RecordingSpanExporter()))
        assert _attributes._may_start_bare(provider.get_tracer("test")) is True  # pyright: ignore[reportPrivateUsage]
        provider.shutdown()
    probed = _provider()
    probed.add_span_processor(_OnStartProbe())
    assert _attributes._may_start_bare(probed.get_tracer("test")) is False  # pyright: ignore[reportPrivateUsage]


def test_the_installed_sdk_has_the_internals_the_shortcut_writes_to() -> None:
    # if an SDK upgrade changes them, this fails and the shortcut has quietly turned itself off
    span = TracerProvider().get_tracer("test").start_span("x")
    assert _attributes._internals_fit(span) is True  # pyright: ignore[reportPrivateUsage]
    assert _attributes._internals_fit(NoOpTracer().start_span("x")) is False  # pyright: ignore[reportPrivateUsage]


def test_a_span_class_with_its_own_set_attributes_gets_it_called() -> None:
    sdk_span = TracerProvider().get_tracer("test").start_span("x")
    calls: list[dict[str, Any]] = []

    class Filtering(type(sdk_span)):  # a vendor's span that filters what is set on it
        def set_attributes(self, attributes: Any) -> None:
            calls.append(dict(attributes))

    span = Filtering(name="x", context=sdk_span.get_span_context())
    span.start()
    _attributes.set_attributes(span, END)
    assert calls == [END]
    assert dict(span.attributes or {}) == {}


def test_without_those_internals_everything_takes_the_public_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_attributes, "_internals_fit", lambda span: False)
    written: list[dict[str, Any]] = []
    public = Span.set_attributes

    def spy(span: Span, attributes: Any) -> None:
        written.append(dict(attributes))
        public(span, attributes)

    monkeypatch.setattr(Span, "set_attributes", spy)
    expected = _as_recorded(_record(_provider(), START, END, shortcut=False))
    written.clear()
    assert _as_recorded(_record(_provider(), START, END, shortcut=True)) == expected
    assert written == [START, END]  # both went through the SDK


def test_an_ended_span_keeps_its_attributes_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    span = _record(_provider(), START, END, shortcut=True)
    before = _as_recorded(span)
    with caplog.at_level(logging.WARNING):
        _attributes.set_attributes(span, {"a2a.late": "x"})
    assert _as_recorded(span) == before
    assert "Setting attribute on ended span." in caplog.text


def test_spans_of_other_tracers_get_the_public_path() -> None:
    span = _attributes.start_span(NoOpTracer(), "x", kind=SpanKind.CLIENT, attributes=lambda: dict(START))
    _attributes.set_attributes(span, END)
    assert not span.is_recording()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_a_traced_call_records_the_same_attributes_either_way(start_agent: StartAgent, streaming: bool) -> None:
    """The same call, through the shortcut and through the SDK's path (a processor that reads at start)."""
    url = start_agent("B")
    recorded: dict[bool, list[ReadableSpan]] = {}
    for shortcut in (True, False):
        exporter = RecordingSpanExporter()
        provider = TracerProvider(resource=Resource.create({"service.name": "pytest"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        probe = _OnStartProbe()
        if not shortcut:
            provider.add_span_processor(probe)
        instrumentor = A2AInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            client = AgentClient(url, streaming=streaming)
            assert await client.ask("hello") == ("TASK_STATE_COMPLETED", "B(hello)")
            await client.http.aclose()
        finally:
            instrumentor.uninstrument()
        provider.shutdown()
        recorded[shortcut] = sorted(exporter.get_finished_spans(), key=lambda s: (s.kind.value, s.name))
        if not shortcut:  # CLIENT, SERVER and the agent's TOOL step, each with its attributes at start
            assert sorted(attrs["a2a.step.call_type"] for attrs in probe.at_start) == ["AGENT", "AGENT", "TOOL"]
    # ids, and sizes and step lists that carry ids and timestamps, differ from call to call: their types do not
    per_call = {"a2a.message.id", "gen_ai.conversation.id", "a2a.task.id", "a2a.response.size", "a2a.response_trace"}

    def comparable(span: ReadableSpan) -> list[tuple[str, Any]]:
        return [(k, type(v) if k in per_call else v) for k, v in (span.attributes or {}).items()]

    for fast, public in zip(recorded[True], recorded[False], strict=True):
        assert (fast.kind, fast.name) == (public.kind, public.name)
        assert comparable(fast) == comparable(public)
        assert fast.dropped_attributes == public.dropped_attributes == 0
