"""Decoding OTLP trace exports (protobuf and JSON) into encoded domain spans. Pure: no I/O.

The walk keeps per span only what grouping needs (trace id, span id, parent id) plus the
span's own encoding, sliced out of the request as the sender wrote it
(:mod:`coordbench.otlp.wire`); :meth:`~coordbench.store.encoded.EncodedSpan.decode` builds the full
:class:`~coordbench.spans.SpanData` later, when someone reads the trace.

OTLP/JSON is not the protobuf JSON mapping: ids are hex, enums are integers, 64-bit integers
may be strings, and unknown fields must be ignored, so it is walked directly rather than
parsed with ``google.protobuf.json_format`` (which also runs at a fraction of the speed).
"""

# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false, reportUnknownMemberType=false
# The JSON half walks json.loads output, which is untyped (Any) by nature; the hot path checks
# exact types instead of casting, so these three rules are relaxed for this module only.

from __future__ import annotations

import base64
import binascii
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from coordbench import jsontext
from coordbench.errors import CoordbenchError
from coordbench.otlp import native
from coordbench.otlp.wire import WireError, span_slices
from coordbench.spans import AttributeValue, SpanData, SpanEvent, SpanKind, SpanLink, StatusCode
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec

__all__ = [
    "CODECS",
    "MAX_VALUE_DEPTH",
    "OTLP_JSON",
    "OTLP_PROTOBUF",
    "DecodeResult",
    "OtlpDecodeError",
    "decode_json",
    "decode_protobuf",
    "decode_request",
    "decode_weight",
    "encoded_span",
]

logger = logging.getLogger(__name__)

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)


class OtlpDecodeError(CoordbenchError, ValueError):
    """The body is not an ``ExportTraceServiceRequest`` in the declared encoding."""

    default_message = "cannot decode ExportTraceServiceRequest"


@dataclass
class DecodeResult:
    """The spans of one export request, and what was rejected and why."""

    spans: list[EncodedSpan] = field(default_factory=list[EncodedSpan])
    rejected: Counter[str] = field(default_factory=Counter[str])

    @property
    def rejected_count(self) -> int:
        """Number of spans rejected."""
        return sum(self.rejected.values())

    @property
    def received(self) -> int:
        """Number of spans in the request (kept or rejected)."""
        return len(self.spans) + self.rejected_count

    def rejection_message(self) -> str:
        """``"3 spans rejected: invalid trace_id (2), invalid span_id (1)"``, or empty."""
        if not self.rejected:
            return ""
        reasons = ", ".join(f"{reason} ({n})" for reason, n in sorted(self.rejected.items()))
        return f"{self.rejected_count} spans rejected: {reasons}"


def _check_ids(trace_id: bytes, span_id: bytes, parent: bytes) -> str | None:
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        return native.REJECTION_REASONS[0]
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return native.REJECTION_REASONS[1]
    if parent and len(parent) != 8:
        return native.REJECTION_REASONS[2]
    return None


# --- protobuf --------------------------------------------------------------------------------


def _any_value(value: AnyValue) -> AttributeValue:
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "double_value":
        return value.double_value
    if kind == "array_value":
        return tuple(_any_value(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value
    return None


def _attributes(pairs: Sequence[KeyValue]) -> dict[str, AttributeValue]:
    return {kv.key: _any_value(kv.value) for kv in pairs}


def decode_protobuf(body: bytes) -> DecodeResult:
    """Decode an ``application/x-protobuf`` export request.

    Args:
        body: The (decompressed) request body.

    Returns:
        The spans with valid ids, and the rejected ones counted by reason.

    Raises:
        OtlpDecodeError: If the body is not a valid ``ExportTraceServiceRequest``.
    """
    body = body if type(body) is bytes else bytes(body)  # the store keeps slices of it: immutable bytes
    if native.AVAILABLE:
        fast = native.scan(body, OTLP_PROTOBUF, _envelope)
        if fast is not None:
            spans, rejected = fast
            result = DecodeResult(spans)
            for reason, count in zip(native.REJECTION_REASONS, rejected, strict=True):
                if count:
                    result.rejected[reason] = count
            return result
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpDecodeError(f"cannot decode ExportTraceServiceRequest (protobuf): {exc}") from exc
    return _walk(request, _slices(request, body))


def decode_weight(
    size: int, *, compressed: bool = False, json_body: bool = False, native_scan: bool | None = None
) -> int:
    """A body's size weighted by what it costs to decode, for the receivers' off-the-loop threshold.

    The unit is a byte of uncompressed protobuf on the protobuf path. A compressed byte inflates
    to about 4 and an OTLP/JSON byte decodes about 4 times slower, so each counts 4; the native
    scanner decodes protobuf about 4 times faster than the protobuf path, so with it a protobuf
    byte counts a quarter. On a worker thread the decode competes with the event loop for the
    GIL and costs more CPU per span (``docs/benchmarks.md``, "decoded off the loop"), so only
    bodies whose decode would hold the loop for more than a few milliseconds go there.

    Args:
        size: The body's size as received.
        compressed: Whether it is gzip, deflate or zstd.
        json_body: Whether it is OTLP/JSON rather than protobuf.
        native_scan: Whether protobuf goes through the native scanner (default: whether it is
            available, :data:`coordbench.otlp.native.AVAILABLE`).

    Example:
        >>> decode_weight(4096, native_scan=True), decode_weight(4096, native_scan=False)
        (1024, 4096)
        >>> decode_weight(1000, compressed=True, json_body=True)
        16000
    """
    weight = size * 4 if compressed else size
    if json_body:
        return weight * 4
    scanned = native.AVAILABLE if native_scan is None else native_scan
    return -(-weight // 4) if scanned else weight  # rounded up: a body is never weightless


_ENVELOPES: dict[tuple[bytes | None, bytes | None], Envelope] = {}
_MAX_ENVELOPES = 4096


def _envelope(resource: bytes | None, scope: bytes | None) -> Envelope:
    """The envelope of an encoded resource and scope, for the native scan.

    A sender repeats the same few resources and scopes in every request, so envelopes are
    kept across requests (decoding one costs as much as storing many spans) and spans from the
    same process and scope share one. Nothing mutates an envelope or its resource.
    """
    key = (resource, scope)
    envelope = _ENVELOPES.get(key)
    if envelope is None:
        attributes = _attributes(Resource.FromString(resource).attributes) if resource else {}
        envelope = Envelope(attributes, InstrumentationScope.FromString(scope).name if scope else "")
        if len(_ENVELOPES) >= _MAX_ENVELOPES:
            _ENVELOPES.clear()
        _ENVELOPES[key] = envelope
    return envelope


def _slices(request: ExportTraceServiceRequest, body: bytes) -> list[list[bytes]] | None:
    """Each scope's span bytes as sent, if they line up with the parsed request (else ``None``)."""
    try:
        slices = span_slices(body)
    except WireError:
        return None  # a framing the slicer does not handle (groups): each span is serialised instead
    scopes = [scope.spans for resource in request.resource_spans for scope in resource.scope_spans]
    if len(slices) != len(scopes) or any(
        len(raw) != len(spans) or (raw and spans[0].span_id not in raw[0])
        for raw, spans in zip(slices, scopes, strict=True)
    ):
        logger.warning("OTLP span slices do not line up with the parsed request; serialising each span instead")
        return None
    return slices


def decode_request(request: ExportTraceServiceRequest) -> DecodeResult:
    """Walk an already parsed export request (each span is serialised again for the store)."""
    return _walk(request, None)


def _walk(request: ExportTraceServiceRequest, encoded: list[list[bytes]] | None) -> DecodeResult:
    """Walk a parsed request; ``encoded`` holds each scope's span bytes, when sliced from the body."""
    result = DecodeResult()
    append = result.spans.append
    make = tuple.__new__  # builds the EncodedSpan without its Python-level __new__: this loop is the ingest hot path
    scope_index = 0
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            envelope = Envelope(resource, scope_spans.scope.name)
            spans = scope_spans.spans
            raw = encoded[scope_index] if encoded is not None else None
            scope_index += 1
            for index, span in enumerate(spans):
                trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
                if (
                    len(trace_id) != 16
                    or len(span_id) != 8
                    or trace_id == _ZERO_TRACE
                    or span_id == _ZERO_SPAN
                    or (parent and len(parent) != 8)
                ):
                    result.rejected[_check_ids(trace_id, span_id, parent) or "invalid ids"] += 1
                    continue
                # Bytes, not the parsed message: keeping ~100k upb wrappers alive (GC-tracked, each
                # pinning its request's arena) measured 2.6x the memory and 40% slower ingest.
                payload = raw[index] if raw is not None else span.SerializeToString()
                append(make(EncodedSpan, (trace_id, span_id, parent, OTLP_PROTOBUF, payload, envelope)))
    return result


_KINDS = tuple(SpanKind)
_STATUSES = tuple(StatusCode)


def _kind(value: int) -> SpanKind:
    return _KINDS[value] if 0 <= value <= 5 else SpanKind.UNSPECIFIED  # a tuple lookup: cheaper than SpanKind(value)


def _status(value: int) -> StatusCode:
    return _STATUSES[value] if 0 <= value <= 2 else StatusCode.UNSET


def _protobuf_span_data(encoded: EncodedSpan) -> SpanData:
    payload = encoded.payload
    span = payload if isinstance(payload, Span) else Span.FromString(payload)
    return SpanData(
        trace_id=encoded.trace_id.hex(),
        span_id=encoded.span_id.hex(),
        parent_span_id=encoded.parent_span_id.hex() or None,
        name=span.name,
        kind=_kind(span.kind),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        attributes=_attributes(span.attributes),
        status_code=_status(span.status.code),
        status_message=span.status.message,
        resource=encoded.envelope.resource,
        events=tuple(SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes)) for e in span.events),
        scope_name=encoded.envelope.scope_name,
        links=tuple(
            SpanLink(link.trace_id.hex(), link.span_id.hex(), _attributes(link.attributes), link.trace_state)
            for link in span.links
        )
        if span.links
        else (),
    )


# --- JSON ------------------------------------------------------------------------------------


class _Bad(CoordbenchError, ValueError):
    """One span is malformed (it is rejected; the rest of the request is kept)."""


def _hex_id(value: Any, width: int, field_name: str, *, optional: bool = False) -> bytes:
    if value is None or value == "":
        if optional:
            return b""
        raise _Bad(f"invalid {field_name} (missing)")
    if not isinstance(value, str):
        raise _Bad(f"invalid {field_name} (not a hex string)")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise _Bad(f"invalid {field_name} (not hex)") from None
    if len(raw) != width:
        raise _Bad(f"invalid {field_name} (must be {width} bytes)")
    return raw


_INT64 = (-(2**63), 2**63 - 1)
_UINT64 = (0, 2**64 - 1)
_INT32 = (-(2**31), 2**31 - 1)


def _json_int(value: Any, field_name: str, bounds: tuple[int, int] = _INT64) -> int:
    """An integer as OTLP/JSON writes it (a number or a decimal string), within the field's protobuf type."""
    if value is None:
        return 0
    number: int | None = None
    if type(value) is int:
        number = value
    elif type(value) is str:
        try:
            number = int(value)
        except ValueError:
            number = None
    if number is None:
        raise _Bad(f"invalid {field_name} (not an integer)")
    if not bounds[0] <= number <= bounds[1]:
        kind = "int64" if bounds is _INT64 else "uint64" if bounds is _UINT64 else "int32"
        raise _Bad(f"invalid {field_name} (out of {kind} range)")
    return number


_KIND_NAMES = {f"SPAN_KIND_{kind.name}": index for index, kind in enumerate(_KINDS)}
_STATUS_NAMES = {f"STATUS_CODE_{code.name}": index for index, code in enumerate(_STATUSES)}


def _json_enum(value: Any, names: Mapping[str, int], field_name: str) -> int:
    """An OTLP/JSON enum: an integer as OTLP says, or its protobuf name as protobuf JSON writes it."""
    if type(value) is str and value in names:
        return names[value]
    return _json_int(value, field_name, _INT32)


def _json_double(raw: Any) -> float:
    # ``float`` also takes "NaN", "Infinity" and "-Infinity", as the protobuf JSON mapping does
    if type(raw) is float or type(raw) is int or type(raw) is str:
        try:
            return float(raw)
        except ValueError:
            pass
        except OverflowError:  # an integer literal beyond any double
            raise _Bad("invalid doubleValue (out of range)") from None
    raise _Bad("invalid doubleValue (not a number)")


def _json_values(raw: Any, kind: str) -> Any:
    """The ``values`` list of an ``arrayValue`` or ``kvlistValue`` object (empty when absent)."""
    if type(raw) is not dict:
        raise _Bad(f"invalid {kind} (not an object)")
    items = raw.get("values")
    if items is None:
        return ()
    if type(items) is not list:
        raise _Bad(f"invalid {kind} (values is not a list)")
    return items


MAX_VALUE_DEPTH = 64
"""Deepest nesting of array and key-value-list attribute values accepted in OTLP/JSON.

Protobuf refuses messages nested deeper than 100 levels in all (about 45 levels of nested
arrays in a span attribute); JSON gets an explicit bound of its own rather than Python's
recursion limit.
"""


def _json_value(value: Any, depth: int = 0) -> AttributeValue:
    # Hot path (one call per attribute): exact type checks (json.loads makes plain dicts and
    # lists) and no typing.cast calls, which are function calls at run time. A value of the
    # wrong JSON type rejects the span rather than being coerced: bool("false") is True.
    if type(value) is not dict:
        raise _Bad("invalid attribute value (not an object)")
    for kind, raw in value.items():
        if kind == "stringValue":
            if type(raw) is not str:
                raise _Bad("invalid stringValue (not a string)")
            return raw
        if kind == "intValue":
            return _json_int(raw, "intValue")
        if kind == "boolValue":
            if type(raw) is not bool:
                raise _Bad("invalid boolValue (not true or false)")
            return raw
        if kind == "doubleValue":
            return _json_double(raw)
        if kind == "arrayValue" or kind == "kvlistValue":
            if depth >= MAX_VALUE_DEPTH:
                raise _Bad(f"invalid attribute value (nested deeper than {MAX_VALUE_DEPTH} levels)")
            items = _json_values(raw, kind)
            if kind == "arrayValue":
                return tuple(_json_value(x, depth + 1) for x in items)
            return _json_attributes(items or None, depth + 1)
        if kind == "bytesValue":
            if type(raw) is not str:
                raise _Bad("invalid bytesValue (not base64)")
            try:
                return base64.b64decode(raw, validate=True)
            except (binascii.Error, ValueError):
                raise _Bad("invalid bytesValue (not base64)") from None
    return None  # an empty AnyValue, or only fields this version does not know (ignored, as OTLP says)


def _json_attributes(pairs: Any, depth: int = 0) -> dict[str, AttributeValue]:
    if pairs is None:
        return {}
    if type(pairs) is not list:
        raise _Bad("invalid attributes (not a list)")
    out: dict[str, AttributeValue] = {}
    for pair in pairs:
        key = pair.get("key") if type(pair) is dict else None
        if type(key) is not str:
            raise _Bad("invalid attribute (needs a string key)")
        value = pair.get("value")
        out[key] = None if value is None else _json_value(value, depth)
    return out


def _objects(value: Any, where: str) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in cast("list[Any]", value)):
        raise OtlpDecodeError(f"cannot decode ExportTraceServiceRequest (JSON): {where} must be a list of objects")
    return cast("list[Mapping[str, Any]]", value)


def decode_json(body: bytes) -> DecodeResult:
    """Decode an ``application/json`` (OTLP/JSON) export request.

    Args:
        body: The (decompressed) request body.

    Returns:
        The spans with valid ids and well-formed fields, and the rejected ones by reason.

    Raises:
        OtlpDecodeError: If the body is not JSON or not shaped like an export request.
    """
    try:
        document = jsontext.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise OtlpDecodeError(f"cannot decode ExportTraceServiceRequest (JSON): {exc}") from exc
    if not isinstance(document, Mapping):
        raise OtlpDecodeError("cannot decode ExportTraceServiceRequest (JSON): the body must be an object")
    result = DecodeResult()
    for resource_spans in _objects(cast("Mapping[str, Any]", document).get("resourceSpans"), "resourceSpans"):
        raw_resource: Any = resource_spans.get("resource") or {}
        try:
            resource = _json_attributes(cast("Mapping[str, Any]", raw_resource).get("attributes"))
        except (_Bad, AttributeError) as exc:
            raise OtlpDecodeError(f"cannot decode ExportTraceServiceRequest (JSON): resource: {exc}") from exc
        for scope_spans in _objects(resource_spans.get("scopeSpans"), "scopeSpans"):
            scope: Any = scope_spans.get("scope") or {}
            scope_name = cast("Mapping[str, Any]", scope).get("name") if isinstance(scope, Mapping) else ""
            envelope = Envelope(resource, scope_name if isinstance(scope_name, str) else "")
            for span in _objects(scope_spans.get("spans"), "spans"):
                try:
                    trace_id = _hex_id(span.get("traceId"), 16, "trace_id")
                    span_id = _hex_id(span.get("spanId"), 8, "span_id")
                    parent = _hex_id(span.get("parentSpanId"), 8, "parent_span_id", optional=True)
                    if trace_id == _ZERO_TRACE:
                        raise _Bad("invalid trace_id (must be 16 non-zero bytes)")
                    if span_id == _ZERO_SPAN:
                        raise _Bad("invalid span_id (must be 8 non-zero bytes)")
                    data = _json_span_data(span, trace_id, span_id, parent, envelope)
                except _Bad as exc:
                    result.rejected[str(exc)] += 1
                    continue
                result.spans.append(EncodedSpan(trace_id, span_id, parent, OTLP_JSON, data, envelope))
    return result


def _json_span_data(
    span: Mapping[str, Any], trace_id: bytes, span_id: bytes, parent: bytes, envelope: Envelope
) -> SpanData:
    """Validate and convert one OTLP/JSON span (done at ingest: the dict is already in memory)."""
    name = span.get("name", "")
    if not isinstance(name, str):
        raise _Bad("invalid name (not a string)")
    status: Any = span.get("status") or {}
    if not isinstance(status, Mapping):
        raise _Bad("invalid status (not an object)")
    status_map = cast("Mapping[str, Any]", status)
    message = status_map.get("message", "")
    if not isinstance(message, str):
        raise _Bad("invalid status.message (not a string)")
    events: list[SpanEvent] = []
    raw_events: Any = span.get("events") or []
    if not isinstance(raw_events, list):
        raise _Bad("invalid events (not a list)")
    for event in cast("list[Any]", raw_events):
        if not isinstance(event, Mapping):
            raise _Bad("invalid event (not an object)")
        e = cast("Mapping[str, Any]", event)
        event_name = e.get("name", "")
        if not isinstance(event_name, str):
            raise _Bad("invalid event name (not a string)")
        events.append(
            SpanEvent(
                event_name,
                _json_int(e.get("timeUnixNano"), "timeUnixNano", _UINT64),
                _json_attributes(e.get("attributes")),
            )
        )
    raw_links: Any = span.get("links")
    links: tuple[SpanLink, ...] = () if raw_links is None else _json_links(raw_links)
    return SpanData(
        trace_id=trace_id.hex(),
        span_id=span_id.hex(),
        parent_span_id=parent.hex() or None,
        name=name,
        kind=_kind(_json_enum(span.get("kind"), _KIND_NAMES, "kind")),
        start_time_unix_nano=_json_int(span.get("startTimeUnixNano"), "startTimeUnixNano", _UINT64),
        end_time_unix_nano=_json_int(span.get("endTimeUnixNano"), "endTimeUnixNano", _UINT64),
        attributes=_json_attributes(span.get("attributes")),
        status_code=_status(_json_enum(status_map.get("code"), _STATUS_NAMES, "status.code")),
        status_message=message,
        resource=envelope.resource,
        events=tuple(events),
        scope_name=envelope.scope_name,
        links=links,
    )


def _json_links(raw: Any) -> tuple[SpanLink, ...]:
    if type(raw) is not list:
        raise _Bad("invalid links (not a list)")
    links: list[SpanLink] = []
    for link in raw:
        if type(link) is not dict:
            raise _Bad("invalid link (not an object)")
        trace_state = link.get("traceState") or ""
        if type(trace_state) is not str:
            raise _Bad("invalid link traceState (not a string)")
        links.append(
            SpanLink(
                _hex_id(link.get("traceId"), 16, "link traceId").hex(),
                _hex_id(link.get("spanId"), 8, "link spanId").hex(),
                _json_attributes(link.get("attributes")),
                trace_state,
            )
        )
    return tuple(links)


def encoded_span(span: SpanData) -> EncodedSpan:
    """A span already in memory (our own, or converted from a reported Step) ready for the store.

    Raises:
        ValueError: If its ids are not 32/16 hex digits, or are all zero, or it holds what OTLP
            cannot (an integer beyond int64, a time beyond uint64, a value of another type, or
            nesting deeper than :data:`MAX_VALUE_DEPTH`): a durable store could not keep it.
    """
    trace_id, span_id = bytes.fromhex(span.trace_id), bytes.fromhex(span.span_id)
    parent = bytes.fromhex(span.parent_span_id) if span.parent_span_id else b""
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        raise ValueError(f"invalid trace_id {span.trace_id!r} (must be 32 hex digits, not all zero)")
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        raise ValueError(f"invalid span_id {span.span_id!r} (must be 16 hex digits, not all zero)")
    if parent and len(parent) != 8:
        raise ValueError(f"invalid parent_span_id {span.parent_span_id!r} (must be 16 hex digits)")
    problem = _unencodable(span)
    if problem is not None:
        raise ValueError(f"span {span.span_id}: {problem}")
    return EncodedSpan(trace_id, span_id, parent, OTLP_JSON, span, Envelope(span.resource, span.scope_name))


def _unencodable(span: SpanData) -> str | None:
    """Why OTLP protobuf cannot hold ``span`` (so a durable store could not either), or ``None``."""
    for field_name, value in (("start time", span.start_time_unix_nano), ("end time", span.end_time_unix_nano)):
        if not _UINT64[0] <= value <= _UINT64[1]:
            return f"{field_name} {value} is out of uint64 range"
    groups: list[tuple[str, Mapping[str, AttributeValue]]] = [
        ("attribute", span.attributes),
        ("resource attribute", span.resource),
    ]
    groups += [("event attribute", e.attributes) for e in span.events]
    groups += [("link attribute", link.attributes) for link in span.links]
    for what, attributes in groups:
        for key, value in attributes.items():
            problem = _unencodable_value(value, 0)
            if problem is not None:
                return f"{what} {key!r}: {problem}"
    return None


def _unencodable_value(value: object, depth: int) -> str | None:
    if value is None or isinstance(value, str | bool | float | bytes):
        return None
    if isinstance(value, int):
        return None if _INT64[0] <= value <= _INT64[1] else f"{value} is out of int64 range"
    if depth >= MAX_VALUE_DEPTH:
        return f"nested deeper than {MAX_VALUE_DEPTH} levels"
    items: Iterable[object]
    if isinstance(value, tuple):
        items = cast("tuple[object, ...]", value)
    elif isinstance(value, Mapping):
        items = cast("Mapping[str, object]", value).values()
    else:
        return f"{type(value).__name__} is not an OTLP value"
    for item in items:
        problem = _unencodable_value(item, depth + 1)
        if problem is not None:
            return problem
    return None


def _json_decoded(encoded: EncodedSpan) -> SpanData:
    return cast("SpanData", encoded.payload)


def _protobuf_dump(encoded: EncodedSpan) -> tuple[str, bytes]:
    payload = encoded.payload
    return OTLP_PROTOBUF.name, payload.SerializeToString() if isinstance(payload, Span) else cast("bytes", payload)


def _json_dump(encoded: EncodedSpan) -> tuple[str, bytes]:
    from coordbench.otlp.encode import span_message

    return OTLP_PROTOBUF.name, span_message(_json_decoded(encoded)).SerializeToString()


OTLP_PROTOBUF = SpanCodec("otlp/protobuf", _protobuf_span_data, _protobuf_dump)
"""Spans received as OTLP protobuf, kept as each span's bytes (and stored as they came)."""

OTLP_JSON = SpanCodec("otlp/json", _json_decoded, _json_dump)
"""Spans received as OTLP/JSON or built in memory (reported Steps), kept decoded; stored as protobuf."""

CODECS: Mapping[str, SpanCodec] = MappingProxyType({codec.name: codec for codec in (OTLP_PROTOBUF, OTLP_JSON)})
"""The codecs by name, for a durable store reading back what it stored (:class:`coordbench.store.SqlitePersistence`)."""
