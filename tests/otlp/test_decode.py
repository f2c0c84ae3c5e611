"""OTLP decoding: protobuf and OTLP/JSON into domain spans, rejections, and encoding back."""

from __future__ import annotations

import json
import math
import re
from typing import cast

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from coordbench.otlp import OtlpDecodeError, decode_json, decode_protobuf, export_request, export_request_json, native
from coordbench.otlp.codecs import encoded_span
from coordbench.otlp.model import MAX_VALUE_DEPTH
from coordbench.spans import SpanData, SpanEvent, SpanKind, SpanLink, StatusCode
from support.spans import TRACE, sid

pytestmark = pytest.mark.usefixtures("decode_path")  # each test: native scanner, then protobuf path

SPAN = SpanData(
    trace_id=TRACE,
    span_id=sid(1),
    parent_span_id=sid(2),
    name="invoke_agent B",
    kind=SpanKind.CLIENT,
    start_time_unix_nano=1_700_000_000_000_000_001,
    end_time_unix_nano=1_700_000_000_500_000_000,
    attributes={"s": "x", "i": 2**62, "f": 0.25, "b": True, "l": ("a", 1), "kv": {"k": "v"}, "raw": b"\x00\xff"},
    status_code=StatusCode.ERROR,
    status_message="boom",
    resource={"service.name": "agent-a", "n": 1},
    events=(SpanEvent("exception", 1_700_000_000_100_000_000, {"exception.type": "E"}),),
    scope_name="scope",
    links=(
        SpanLink("ab" * 16, sid(40), {"a2a.link": "follow-up", "n": 2}, "vendor=1"),
        SpanLink(TRACE, sid(41)),
    ),
)


def test_protobuf_round_trip_is_exact() -> None:
    body = export_request([SPAN]).SerializeToString()
    result = decode_protobuf(body)
    assert result.rejected_count == 0
    (encoded,) = result.spans
    assert (encoded.trace_id.hex(), encoded.span_id.hex(), encoded.parent_span_id.hex()) == (TRACE, sid(1), sid(2))
    assert encoded.decode() == SPAN


def _many_spans() -> list[SpanData]:
    return [
        SPAN._replace(
            span_id=sid(i + 1),
            name=f"span {i}",
            resource={"service.name": f"agent-{i % 3}"},
            scope_name=f"scope-{i % 2}",
        )
        for i in range(12)
    ]


def test_each_span_keeps_the_bytes_its_sender_wrote() -> None:
    """Spans are sliced out of the request (several resources and scopes), not re-serialised."""
    spans = _many_spans()
    request = export_request(spans)
    assert len(request.resource_spans) > 1  # several resources (and scopes) to walk
    result = decode_protobuf(request.SerializeToString())
    sent = {s.span_id: s.SerializeToString() for r in request.resource_spans for sc in r.scope_spans for s in sc.spans}
    assert [e.payload for e in result.spans] == [sent[e.span_id] for e in result.spans]
    assert sorted(e.decode() for e in result.spans) == sorted(spans)


def test_unknown_group_field_falls_back_to_serialising_each_span() -> None:
    """A deprecated group field (wire types 3/4) is legal protobuf the slicer does not walk: still decoded."""
    body = export_request(_many_spans()).SerializeToString() + bytes([0x9B, 0x06, 0x9C, 0x06])  # field 99 group
    result = decode_protobuf(body)
    assert sorted(e.decode() for e in result.spans) == sorted(_many_spans())


def test_slices_that_do_not_line_up_are_not_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A safety net for the slicer: slices in the wrong order are detected and not stored."""
    import coordbench.otlp.decode as decode_module

    monkeypatch.setattr(native, "AVAILABLE", False)  # the slicer belongs to the protobuf path

    real = decode_module.span_slices
    monkeypatch.setattr(decode_module, "span_slices", lambda body: [list(reversed(s)) for s in real(body)])
    result = decode_protobuf(export_request(_many_spans()).SerializeToString())
    assert sorted(e.decode() for e in result.spans) == sorted(_many_spans())
    assert "do not line up" in caplog.text


def test_json_round_trip_is_exact() -> None:
    body = json.dumps(export_request_json([SPAN])).encode()
    (encoded,) = decode_json(body).spans
    assert encoded.decode() == SPAN


def test_json_follows_otlp_not_protobuf_json() -> None:
    """Hex ids, integer enums, 64-bit integers as strings or numbers; unknown fields ignored."""
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                "unknownField": 1,
                "scopeSpans": [
                    {
                        "scope": {"name": "s"},
                        "spans": [
                            {
                                "traceId": TRACE.upper(),
                                "spanId": sid(7),
                                "name": "n",
                                "kind": 3,
                                "startTimeUnixNano": "1000",
                                "endTimeUnixNano": 2000,
                                "attributes": [{"key": "count", "value": {"intValue": "42"}}],
                                "status": {"code": 2},
                                "whatever": {"nested": True},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    (encoded,) = decode_json(json.dumps(doc).encode()).spans
    span = encoded.decode()
    assert span.trace_id == TRACE and span.parent_span_id is None
    assert (span.kind, span.status_code) == (SpanKind.CLIENT, StatusCode.ERROR)
    assert (span.start_time_unix_nano, span.end_time_unix_nano) == (1000, 2000)
    assert span.attributes == {"count": 42}
    assert span.service_name == "svc"


def test_json_accepts_what_protobuf_json_writers_send() -> None:
    """Enum names, doubles as strings (NaN, Infinity), empty values; what the protobuf JSON mapping allows."""
    attributes = [
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "inf", "value": {"doubleValue": "-Infinity"}},
        {"key": "d", "value": {"doubleValue": "0.5"}},
        {"key": "empty", "value": {}},
        {"key": "missing"},
        {"key": "array", "value": {"arrayValue": {}}},
        {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": False}}]}}},
    ]
    span = {
        "traceId": TRACE,
        "spanId": sid(1),
        "kind": "SPAN_KIND_CONSUMER",
        "status": {"code": "STATUS_CODE_OK"},
        "attributes": attributes,
    }
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    (encoded,) = decode_json(json.dumps(doc).encode()).spans
    decoded = encoded.decode()
    assert (decoded.kind, decoded.status_code) == (SpanKind.CONSUMER, StatusCode.OK)
    attrs = decoded.attributes
    assert math.isnan(cast("float", attrs["nan"]))
    assert attrs["inf"] == -math.inf and attrs["d"] == 0.5
    assert (attrs["empty"], attrs["missing"], attrs["array"]) == (None, None, ())
    assert attrs["kv"] == {"a": False}


def _proto_with_ids(trace_id: bytes, span_id: bytes, parent: bytes = b"") -> bytes:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    good = spans.add(trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(sid(1)), name="good")
    bad = spans.add(trace_id=trace_id, span_id=span_id, parent_span_id=parent, name="bad")
    assert good and bad
    return request.SerializeToString()


@pytest.mark.parametrize(
    ("trace_id", "span_id", "parent", "reason"),
    [
        (b"\x01" * 15, b"\x01" * 8, b"", "invalid trace_id (must be 16 non-zero bytes)"),
        (bytes(16), b"\x01" * 8, b"", "invalid trace_id (must be 16 non-zero bytes)"),
        (b"\x01" * 16, b"\x01" * 4, b"", "invalid span_id (must be 8 non-zero bytes)"),
        (b"\x01" * 16, bytes(8), b"", "invalid span_id (must be 8 non-zero bytes)"),
        (b"\x01" * 16, b"\x01" * 8, b"\x01" * 3, "invalid parent_span_id (must be empty or 8 bytes)"),
    ],
)
def test_spans_with_bad_ids_are_rejected_and_counted(
    trace_id: bytes, span_id: bytes, parent: bytes, reason: str
) -> None:
    result = decode_protobuf(_proto_with_ids(trace_id, span_id, parent))
    assert [s.decode().name for s in result.spans] == ["good"]
    assert dict(result.rejected) == {reason: 1}
    assert result.received == 2
    assert result.rejection_message() == f"1 spans rejected: {reason} (1)"


def _attr(value: object) -> dict[str, object]:
    return {"traceId": TRACE, "spanId": sid(1), "attributes": [{"key": "k", "value": value}]}


@pytest.mark.parametrize(
    ("span", "reason"),
    [
        ({"traceId": "zz" * 16, "spanId": sid(1)}, "invalid trace_id (not hex)"),
        ({"traceId": TRACE, "spanId": sid(1)[:6]}, "invalid span_id (must be 8 bytes)"),
        ({"traceId": TRACE}, "invalid span_id (missing)"),
        ({"traceId": TRACE, "spanId": sid(1), "name": 5}, "invalid name (not a string)"),
        (
            {"traceId": TRACE, "spanId": sid(1), "startTimeUnixNano": "soon"},
            "invalid startTimeUnixNano (not an integer)",
        ),
        ({"traceId": TRACE, "spanId": sid(1), "attributes": {"k": "v"}}, "invalid attributes (not a list)"),
        (_attr({"arrayValue": {"values": 5}}), "invalid arrayValue (values is not a list)"),
        (_attr({"arrayValue": [1]}), "invalid arrayValue (not an object)"),
        (_attr({"kvlistValue": {"values": True}}), "invalid kvlistValue (values is not a list)"),
        (_attr({"kvlistValue": []}), "invalid kvlistValue (not an object)"),
        (_attr({"boolValue": "false"}), "invalid boolValue (not true or false)"),
        (_attr({"stringValue": 1}), "invalid stringValue (not a string)"),
        (_attr({"doubleValue": True}), "invalid doubleValue (not a number)"),
        (_attr({"doubleValue": "lots"}), "invalid doubleValue (not a number)"),
        (_attr({"bytesValue": 7}), "invalid bytesValue (not base64)"),
        (_attr({"intValue": str(2**63)}), "invalid intValue (out of int64 range)"),
        (_attr({"intValue": -(2**63) - 1}), "invalid intValue (out of int64 range)"),
        (_attr({"doubleValue": 10**400}), "invalid doubleValue (out of range)"),
        (
            {"traceId": TRACE, "spanId": sid(1), "startTimeUnixNano": "-1"},
            "invalid startTimeUnixNano (out of uint64 range)",
        ),
        (
            {"traceId": TRACE, "spanId": sid(1), "endTimeUnixNano": 2**64},
            "invalid endTimeUnixNano (out of uint64 range)",
        ),
        (_attr(0), "invalid attribute value (not an object)"),
        ({"traceId": TRACE, "spanId": sid(1), "status": {"message": 3}}, "invalid status.message (not a string)"),
        ({"traceId": TRACE, "spanId": sid(1), "events": [{"name": ["e"]}]}, "invalid event name (not a string)"),
        ({"traceId": TRACE, "spanId": sid(1), "kind": "SPAN_KIND_SIDEWAYS"}, "invalid kind (not an integer)"),
        ({"traceId": TRACE, "spanId": sid(1), "links": {}}, "invalid links (not a list)"),
        ({"traceId": TRACE, "spanId": sid(1), "links": [{"traceId": TRACE}]}, "invalid link spanId (missing)"),
        (
            {"traceId": TRACE, "spanId": sid(1), "links": [{"traceId": "x", "spanId": sid(2)}]},
            "invalid link traceId (not hex)",
        ),
    ],
)
def test_malformed_json_spans_are_rejected_alone(span: dict[str, object], reason: str) -> None:
    good = {"traceId": TRACE, "spanId": sid(9), "name": "good"}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [good, span]}]}]}
    result = decode_json(json.dumps(doc).encode())
    assert [s.decode().name for s in result.spans] == ["good"]
    assert dict(result.rejected) == {reason: 1}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"\xff\x00garbage", "cannot decode ExportTraceServiceRequest (protobuf)"),
    ],
)
def test_undecodable_protobuf(body: bytes, message: str) -> None:
    with pytest.raises(OtlpDecodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_protobuf(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "cannot decode ExportTraceServiceRequest (JSON): Expecting property name"),
        (b"[1, 2]", "the body must be an object"),
        (b'{"resourceSpans": "x"}', "resourceSpans must be a list of objects"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [1]}]}]}', "spans must be a list of objects"),
    ],
)
def test_undecodable_json(body: bytes, message: str) -> None:
    with pytest.raises(OtlpDecodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_json(body)


def _nested(levels: int) -> dict[str, object]:
    value: dict[str, object] = {"stringValue": "leaf"}
    for level in range(levels):
        value = (
            {"arrayValue": {"values": [value]}}
            if level % 2
            else {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
        )
    return value


def test_attribute_nesting_is_bounded() -> None:
    spans = [
        {**_attr(_nested(MAX_VALUE_DEPTH)), "spanId": sid(1), "name": "deep"},
        {**_attr(_nested(MAX_VALUE_DEPTH + 1)), "spanId": sid(2), "name": "too deep"},
    ]
    result = decode_json(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode())
    assert [s.decode().name for s in result.spans] == ["deep"]
    assert dict(result.rejected) == {f"invalid attribute value (nested deeper than {MAX_VALUE_DEPTH} levels)": 1}


def test_json_nested_beyond_the_parser_is_undecodable() -> None:
    body = b'{"resourceSpans": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(OtlpDecodeError, match="nested too deeply"):
        decode_json(body)


def test_json_accepts_the_edges_of_each_integer_type() -> None:
    span = {
        **_attr({"intValue": str(-(2**63))}),
        "startTimeUnixNano": str(2**64 - 1),
        "attributes": [
            {"key": "min", "value": {"intValue": str(-(2**63))}},
            {"key": "max", "value": {"intValue": 2**63 - 1}},
        ],
    }
    (encoded,) = decode_json(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()).spans
    assert encoded.decode().attributes == {"min": -(2**63), "max": 2**63 - 1}
    assert encoded.decode().start_time_unix_nano == 2**64 - 1
    encoded.dump()  # and protobuf can hold them


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"attributes": {"n": 2**63}}, "attribute 'n': 9223372036854775808 is out of int64 range"),
        ({"resource": {"r": (1, {"deep": -(2**64)})}}, "resource attribute 'r': -18446744073709551616 is out of int64"),
        ({"start_time_unix_nano": -5}, "start time -5 is out of uint64 range"),
        ({"attributes": {"o": object()}}, "attribute 'o': object is not an OTLP value"),
    ],
)
def test_in_memory_spans_the_store_could_not_keep_are_refused(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        encoded_span(SPAN._replace(**change))  # type: ignore[arg-type]


def test_empty_request_is_fine() -> None:
    assert decode_protobuf(b"").received == 0
    assert decode_json(b"{}").received == 0
