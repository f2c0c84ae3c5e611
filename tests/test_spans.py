"""SpanData from OpenTelemetry SDK spans."""

from __future__ import annotations

import json

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, Status, StatusCode
from opentelemetry.trace import SpanKind as OtelKind

from coordbench.spans import SpanData, SpanEvent, SpanKind, SpanLink, span_from_dict, span_to_dict
from coordbench.spans import StatusCode as Code
from coordbench.testing import RecordingSpanExporter


def test_readable_span_conversion_keeps_everything() -> None:
    exporter = RecordingSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("scope-x")
    child_attributes = {"n": 1, "l": ["a", "b"]}
    with tracer.start_as_current_span("earlier") as earlier:
        pass
    linked = earlier.get_span_context()
    with (
        tracer.start_as_current_span("parent", kind=OtelKind.SERVER) as parent,
        tracer.start_as_current_span(
            "child", kind=OtelKind.CLIENT, attributes=child_attributes, links=[Link(linked, {"why": "follow-up"})]
        ) as child,
    ):
        child.add_event("note", {"k": "v"})
        child.set_status(Status(StatusCode.ERROR, "bad"))
    _earlier, child_data, parent_data = exporter.spans()
    assert parent_data.parent_span_id is None
    assert child_data.parent_span_id == parent_data.span_id == format(parent.get_span_context().span_id, "016x")
    assert child_data.trace_id == format(child.get_span_context().trace_id, "032x")
    assert (child_data.kind, parent_data.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert child_data.attributes == {"n": 1, "l": ("a", "b")}
    assert (child_data.status_code, child_data.status_message) == (Code.ERROR, "bad")
    assert child_data.service_name == "svc"
    assert child_data.scope_name == "scope-x"
    assert [(e.name, dict(e.attributes)) for e in child_data.events] == [("note", {"k": "v"})]
    assert child_data.end_time_unix_nano >= child_data.start_time_unix_nano > 0
    assert child_data.links == (
        SpanLink(format(linked.trace_id, "032x"), format(linked.span_id, "016x"), {"why": "follow-up"}),
    )
    assert parent_data.links == ()


def test_dict_round_trip_keeps_links_and_events() -> None:
    span = SpanData(
        "ab" * 16,
        "cd" * 8,
        None,
        "s",
        SpanKind.CLIENT,
        1,
        2,
        {"a": (1, 2)},
        events=(SpanEvent("e", 1, {"k": "v"}),),
        links=(SpanLink("ef" * 16, "01" * 8, {"x": {"y": 1}}, "k=v"),),
    )
    assert span_from_dict(json.loads(json.dumps(span_to_dict(span)))) == span
