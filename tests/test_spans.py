"""SpanData from OpenTelemetry SDK spans."""

from __future__ import annotations

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind as OtelKind
from opentelemetry.trace import Status, StatusCode

from coordbench.spans import SpanKind
from coordbench.spans import StatusCode as Code
from coordbench.testing import RecordingSpanExporter


def test_readable_span_conversion_keeps_everything() -> None:
    exporter = RecordingSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("scope-x")
    child_attributes = {"n": 1, "l": ["a", "b"]}
    with (
        tracer.start_as_current_span("parent", kind=OtelKind.SERVER) as parent,
        tracer.start_as_current_span("child", kind=OtelKind.CLIENT, attributes=child_attributes) as child,
    ):
        child.add_event("note", {"k": "v"})
        child.set_status(Status(StatusCode.ERROR, "bad"))
    child_data, parent_data = exporter.spans()
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
