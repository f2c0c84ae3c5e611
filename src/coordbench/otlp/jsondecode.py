"""Decoding OTLP/JSON trace exports into encoded domain spans. Pure: no I/O.

OTLP/JSON is not the protobuf JSON mapping: ids are hex, enums are integers, 64-bit integers
may be strings, and unknown fields must be ignored, so it is walked directly rather than
parsed with ``google.protobuf.json_format`` (which also runs at a fraction of the speed). Each
span is validated as it is read (a malformed span is rejected, the rest of the request kept).

Where the native scanner is built (:func:`coordbench.otlp.native.scan_json`) it checks the
body and its spans in C and keeps each span's JSON text (:data:`OTLP_JSON_TEXT`), decoded by
this module's code when the span is read, as protobuf spans are; what it is not sure of goes
through the walk here, which decides. Without it every span is walked here at ingest and kept
decoded (:data:`OTLP_JSON`).
"""

# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false, reportUnknownMemberType=false
# This module walks json.loads output, which is untyped (Any) by nature; the hot path checks
# exact types instead of casting, so these three rules are relaxed for this module only.

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, cast

from coordbench import jsontext
from coordbench.errors import CoordbenchError
from coordbench.otlp import native
from coordbench.otlp.decode import OTLP_PROTOBUF
from coordbench.otlp.model import (
    INT32,
    INT64,
    KINDS,
    MAX_VALUE_DEPTH,
    STATUSES,
    UINT64,
    DecodeResult,
    OtlpDecodeError,
    id_problem,
    kind_of,
    status_of,
)
from coordbench.spans import AttributeValue, SpanData, SpanEvent, SpanLink
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec

__all__ = ["OTLP_JSON", "OTLP_JSON_TEXT", "decode_json"]


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


def _json_int(value: Any, field_name: str, bounds: tuple[int, int] = INT64) -> int:
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
        kind = "int64" if bounds is INT64 else "uint64" if bounds is UINT64 else "int32"
        raise _Bad(f"invalid {field_name} (out of {kind} range)")
    return number


_KIND_NAMES = {f"SPAN_KIND_{kind.name}": index for index, kind in enumerate(KINDS)}
_STATUS_NAMES = {f"STATUS_CODE_{code.name}": index for index, code in enumerate(STATUSES)}


def _json_enum(value: Any, names: Mapping[str, int], field_name: str) -> int:
    """An OTLP/JSON enum: an integer as OTLP says, or its protobuf name as protobuf JSON writes it."""
    if type(value) is str and value in names:
        return names[value]
    return _json_int(value, field_name, INT32)


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

    With the native scanner (:func:`coordbench.otlp.native.scan_json`) each span it takes keeps
    its JSON text, read by :data:`OTLP_JSON_TEXT` when someone reads the span; the spans it
    marks, and bodies it leaves to Python, are decoded here, with the same result.

    Args:
        body: The (decompressed) request body.

    Returns:
        The spans with valid ids and well-formed fields, and the rejected ones by reason.

    Raises:
        OtlpDecodeError: If the body is not JSON or not shaped like an export request.
    """
    body = body if type(body) is bytes else bytes(body)  # the store keeps slices of it: immutable bytes
    if native.JSON_AVAILABLE:
        try:
            scanned = native.scan_json(body, OTLP_JSON_TEXT, _envelope)
        except OtlpDecodeError:
            scanned = None  # a resource Python refuses: the whole body again, for the exact error
        if scanned is not None:
            spans, marked = scanned
            result = DecodeResult(spans)
            if marked:
                result.spans = []
                for span in spans:
                    if span.trace_id:
                        result.spans.append(span)
                    else:  # marked (its ids are None): Python stores it or says why not
                        _take(jsontext.loads(span.payload), span.envelope, result)
            return result
    return _decode_document(body)


def _decode_document(body: bytes) -> DecodeResult:
    """:func:`decode_json` in Python alone: the whole body parsed, then walked."""
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
                _take(span, envelope, result)
    return result


def _take(span: Mapping[str, Any], envelope: Envelope, result: DecodeResult) -> None:
    """Validate one decoded span object: kept decoded in ``result.spans``, or counted as rejected."""
    try:
        trace_id = _hex_id(span.get("traceId"), 16, "trace_id")
        span_id = _hex_id(span.get("spanId"), 8, "span_id")
        parent = _hex_id(span.get("parentSpanId"), 8, "parent_span_id", optional=True)
        problem = id_problem(trace_id, span_id, parent)  # all zero: the widths are checked above
        if problem is not None:
            raise _Bad(problem)
        data = _json_span_data(span, trace_id, span_id, parent, envelope)
    except _Bad as exc:
        result.rejected[str(exc)] += 1
        return
    result.spans.append(EncodedSpan(trace_id, span_id, parent, OTLP_JSON, data, envelope))


_ENVELOPES: dict[tuple[bytes | None, bytes | None], Envelope] = {}
_ENVELOPE_BYTES = [0]
_MAX_ENVELOPE_BYTES = 16 << 20


def _envelope(resource: bytes | None, scope: bytes | None) -> Envelope:
    """The envelope of a ``resource`` and ``scope`` object's JSON text, for the native scan.

    As on the protobuf path, envelopes are kept across requests (a sender repeats the same few)
    and shared by the spans of one scope; up to 16 MiB of their text, then the cache starts over.

    Raises:
        OtlpDecodeError: If the resource's attributes are malformed (the caller then decodes
            the whole body in Python, which says where).
    """
    key = (resource, scope)
    envelope = _ENVELOPES.get(key)
    if envelope is None:
        raw_resource: Any = jsontext.loads(resource) if resource is not None else {}
        try:
            attributes = _json_attributes(raw_resource.get("attributes"))
        except _Bad as exc:
            raise OtlpDecodeError(f"cannot decode ExportTraceServiceRequest (JSON): resource: {exc}") from exc
        raw_scope: Any = jsontext.loads(scope) if scope is not None else {}
        name = raw_scope.get("name")
        envelope = Envelope(attributes, name if isinstance(name, str) else "")
        size = len(resource or b"") + len(scope or b"")
        if _ENVELOPE_BYTES[0] + size > _MAX_ENVELOPE_BYTES:
            _ENVELOPES.clear()
            _ENVELOPE_BYTES[0] = 0
        _ENVELOPES[key] = envelope
        _ENVELOPE_BYTES[0] += size
    return envelope


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
                _json_int(e.get("timeUnixNano"), "timeUnixNano", UINT64),
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
        kind=kind_of(_json_enum(span.get("kind"), _KIND_NAMES, "kind")),
        start_time_unix_nano=_json_int(span.get("startTimeUnixNano"), "startTimeUnixNano", UINT64),
        end_time_unix_nano=_json_int(span.get("endTimeUnixNano"), "endTimeUnixNano", UINT64),
        attributes=_json_attributes(span.get("attributes")),
        status_code=status_of(_json_enum(status_map.get("code"), _STATUS_NAMES, "status.code")),
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


def _json_decoded(encoded: EncodedSpan) -> SpanData:
    return cast("SpanData", encoded.payload)


def _json_dump(encoded: EncodedSpan) -> tuple[str, bytes]:
    from coordbench.otlp.encode import span_message

    return OTLP_PROTOBUF.name, span_message(_json_decoded(encoded)).SerializeToString()


OTLP_JSON = SpanCodec("otlp/json", _json_decoded, _json_dump)
"""Spans received as OTLP/JSON and decoded at once, or built in memory (reported Steps); stored as protobuf."""


def _text_decoded(encoded: EncodedSpan) -> SpanData:
    span = jsontext.loads(encoded.payload)
    return _json_span_data(span, encoded.trace_id, encoded.span_id, encoded.parent_span_id, encoded.envelope)


def _text_dump(encoded: EncodedSpan) -> tuple[str, bytes]:
    return OTLP_JSON_TEXT.name, encoded.payload


OTLP_JSON_TEXT = SpanCodec("otlp/json-text", _text_decoded, _text_dump)
"""Spans received as OTLP/JSON and taken by the native scanner: the payload is the span's JSON
text as sent, decoded on read by the same code as :data:`OTLP_JSON` spans, and stored as it is."""
