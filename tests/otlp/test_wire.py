"""Slicing spans out of an encoded export request: every framing protobuf allows, or a clear WireError."""

from __future__ import annotations

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from coordbench.otlp.wire import WireError, span_slices


def _request(*scopes: list[Span]) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    for spans in scopes:
        request.resource_spans.add().scope_spans.add().spans.extend(spans)
    return request


def _expected(request: ExportTraceServiceRequest) -> list[list[bytes]]:
    return [[s.SerializeToString() for s in ss.spans] for rs in request.resource_spans for ss in rs.scope_spans]


def test_lengths_of_one_two_and_three_bytes() -> None:
    small = Span(name="s", span_id=b"\x01" * 8)  # 1-byte length
    medium = Span(name="m" * 300, span_id=b"\x02" * 8)  # 2-byte length
    large = Span(name="l" * 40_000, span_id=b"\x03" * 8)  # 3-byte length
    request = _request([small, medium, large], [], [medium])
    assert span_slices(request.SerializeToString()) == _expected(request)


def test_unknown_fields_are_skipped_at_every_level() -> None:
    """Fields a newer OTLP may add (any wire type, field numbers past 15) do not disturb the walk."""
    request = _request([Span(name="a"), Span(name="b")])
    unknown = bytes([0x98, 0x06, 0x2A])  # field 99, varint 42 (a two-byte tag)
    unknown += bytes([0x9D, 0x06, 1, 2, 3, 4])  # field 99, fixed32
    unknown += bytes([0x99, 0x06]) + bytes(8)  # field 99, fixed64
    unknown += bytes([0x9A, 0x06, 2, 0xFF, 0xFF])  # field 99, length-delimited
    scope = request.resource_spans[0].scope_spans[0]
    scope_bytes = scope.SerializeToString() + unknown
    resource_bytes = unknown + bytes([0x12, len(scope_bytes)]) + scope_bytes  # ResourceSpans: unknown, then scope
    body = unknown + bytes([0x0A, len(resource_bytes)]) + resource_bytes  # the request: unknown, then resource
    parsed = ExportTraceServiceRequest.FromString(body)  # protobuf accepts it: so must the walk
    assert [s.name for s in parsed.resource_spans[0].scope_spans[0].spans] == ["a", "b"]
    assert span_slices(body) == [[s.SerializeToString() for s in scope.spans]]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (bytes([0x0A, 0x05, 0x12, 0x03, 0x12, 0x09, 0x00]), "runs past the end"),
        (bytes([0x0A]), "truncated"),
        (bytes([0x0A, 0x02, 0x13, 0x14]), "unsupported wire type 3"),
        (bytes([0x08] + [0xFF] * 11), "varint longer than 10 bytes"),
    ],
)
def test_framing_it_cannot_walk_is_a_wire_error(body: bytes, message: str) -> None:
    with pytest.raises(WireError, match=message):
        span_slices(body)
