"""Encoding domain spans as OTLP: protobuf ``ExportTraceServiceRequest`` and OTLP/JSON.

Used to persist spans, to replay ground-truth scenarios through the real receiver, and by
anything that forwards spans (tests, the green assessor's ground-truth mode).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span

from coordbench.spans import AttributeValue, SpanData, jsonable

__all__ = ["export_request", "export_request_json", "span_message"]


def _fill(target: AnyValue, value: AttributeValue) -> None:
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bytes):
        target.bytes_value = value
    elif isinstance(value, tuple):
        for item in value:
            _fill(target.array_value.values.add(), item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            kv = target.kvlist_value.values.add()
            kv.key = key
            _fill(kv.value, item)


def _key_values(attributes: Mapping[str, AttributeValue]) -> list[KeyValue]:
    out: list[KeyValue] = []
    for key, value in attributes.items():
        kv = KeyValue(key=key)
        _fill(kv.value, value)
        out.append(kv)
    return out


def span_message(span: SpanData) -> Span:
    """The OTLP protobuf ``Span`` for ``span`` (resource and scope are not part of it)."""
    message = Span(
        trace_id=bytes.fromhex(span.trace_id),
        span_id=bytes.fromhex(span.span_id),
        parent_span_id=bytes.fromhex(span.parent_span_id) if span.parent_span_id else b"",
        name=span.name,
        kind=int(span.kind),  # pyright: ignore[reportArgumentType]
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )
    message.attributes.extend(_key_values(span.attributes))
    message.status.code = int(span.status_code)  # pyright: ignore[reportAttributeAccessIssue]
    message.status.message = span.status_message
    for event in span.events:
        added = message.events.add(name=event.name, time_unix_nano=event.time_unix_nano)
        added.attributes.extend(_key_values(event.attributes))
    for link in span.links:
        linked = message.links.add(
            trace_id=bytes.fromhex(link.trace_id), span_id=bytes.fromhex(link.span_id), trace_state=link.trace_state
        )
        linked.attributes.extend(_key_values(link.attributes))
    return message


def _resource_key(span: SpanData) -> tuple[str, str]:
    return json.dumps(jsonable(dict(span.resource)), sort_keys=True), span.scope_name


def export_request(spans: Iterable[SpanData]) -> ExportTraceServiceRequest:
    """One ``ExportTraceServiceRequest`` carrying ``spans``, grouped by resource and scope."""
    request = ExportTraceServiceRequest()
    groups: dict[tuple[str, str], tuple[ResourceSpans, Any]] = {}
    for span in spans:
        key = _resource_key(span)
        group = groups.get(key)
        if group is None:
            resource_spans = request.resource_spans.add()
            resource_spans.resource.attributes.extend(_key_values(span.resource))
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.name = span.scope_name
            group = groups[key] = (resource_spans, scope_spans)
        group[1].spans.append(span_message(span))
    return request


def _json_value(value: AttributeValue) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, tuple):
        return {"arrayValue": {"values": [_json_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _json_attributes(value)}}
    return {}


def _json_attributes(attributes: Mapping[str, AttributeValue]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _json_value(v)} for k, v in attributes.items()]


def export_request_json(spans: Iterable[SpanData]) -> dict[str, Any]:
    """The same request as OTLP/JSON (hex ids, integer enums, 64-bit integers as strings)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    resource_spans: list[dict[str, Any]] = []
    for span in spans:
        key = _resource_key(span)
        members = groups.get(key)
        if members is None:
            members = []
            scope: dict[str, Any] = {"scope": {"name": span.scope_name}, "spans": members}
            resource_spans.append({"resource": {"attributes": _json_attributes(span.resource)}, "scopeSpans": [scope]})
            groups[key] = members
        entry: dict[str, Any] = {
            "traceId": span.trace_id,
            "spanId": span.span_id,
            "name": span.name,
            "kind": int(span.kind),
            "startTimeUnixNano": str(span.start_time_unix_nano),
            "endTimeUnixNano": str(span.end_time_unix_nano),
            "attributes": _json_attributes(span.attributes),
            "status": {"code": int(span.status_code), "message": span.status_message},
        }
        if span.parent_span_id:
            entry["parentSpanId"] = span.parent_span_id
        if span.events:
            entry["events"] = [
                {"name": e.name, "timeUnixNano": str(e.time_unix_nano), "attributes": _json_attributes(e.attributes)}
                for e in span.events
            ]
        if span.links:
            entry["links"] = [
                {
                    "traceId": link.trace_id,
                    "spanId": link.span_id,
                    "traceState": link.trace_state,
                    "attributes": _json_attributes(link.attributes),
                }
                for link in span.links
            ]
        members.append(entry)
    return {"resourceSpans": resource_spans}
