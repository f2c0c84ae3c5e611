"""Spans as rows of the exporter's ``otel_traces`` table, and back.

Writing follows the OpenTelemetry Collector ClickHouse exporter field by field
(``exporter_traces.go``, ``internal.AttributesToMap``):

- ``Timestamp`` is the span's start, ``Duration`` its end minus its start in nanoseconds
  (as ``uint64``: an end before the start wraps, as the exporter's subtraction does);
- ids are lower-case hex, an absent parent the empty string;
- ``SpanKind`` and ``StatusCode`` are pdata's names (``Client``, ``Error``);
- ``ServiceName`` is the resource's ``service.name``; the scope's name and version have columns;
- every attribute value becomes a string as pdata's ``Value.AsString`` makes it: ``true``,
  ``42``, a double as JavaScript prints it (``0.5``, ``1e+21``), bytes in base64, arrays and
  maps as Go's ``encoding/json`` writes them;
- events and links are the ``Events.*`` and ``Links.*`` arrays, in order.

Reading back cannot know an attribute's type from its string, so :func:`span_of_row` gives
back the types :data:`coordbench.semconv.ATTRIBUTE_TYPES` declares for the attributes
coordbench reads (tokens as ``int``, participants as a list...) and leaves every other value a
string. Evaluation reads only declared attributes as anything but strings, so a trace read
from ClickHouse evaluates byte for byte as it did when received over OTLP.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

from coordbench import semconv
from coordbench.clickhouse.connection import JsonNumber
from coordbench.spans import AttributeValue, SpanData, SpanEvent, SpanKind, SpanLink, StatusCode

__all__ = [
    "EVALUATION_COLUMNS",
    "MAX_TIME_UNIX_NANO",
    "READ_COLUMNS",
    "WRITE_COLUMNS",
    "go_float",
    "go_json",
    "out_of_range",
    "span_of_row",
    "span_row",
    "time_number",
    "value_string",
]

_KIND_NAMES = ("Unspecified", "Internal", "Server", "Client", "Producer", "Consumer")
_STATUS_NAMES = ("Unset", "Ok", "Error")
_KINDS = {name: SpanKind(i) for i, name in enumerate(_KIND_NAMES)} | {
    f"SPAN_KIND_{k.name}": k for k in SpanKind
}  # the exporter's names before 0.100 (traceutil.SpanKindStr)
_STATUSES = {name: StatusCode(i) for i, name in enumerate(_STATUS_NAMES)} | {
    f"STATUS_CODE_{c.name}": c for c in StatusCode
}
_UINT64 = 1 << 64

WRITE_COLUMNS = (
    "Timestamp",
    "TraceId",
    "SpanId",
    "ParentSpanId",
    "TraceState",
    "SpanName",
    "SpanKind",
    "ServiceName",
    "ResourceAttributes",
    "ScopeName",
    "ScopeVersion",
    "SpanAttributes",
    "Duration",
    "StatusCode",
    "StatusMessage",
    "Events.Timestamp",
    "Events.Name",
    "Events.Attributes",
    "Links.TraceId",
    "Links.SpanId",
    "Links.TraceState",
    "Links.Attributes",
)
"""The exporter's insert columns, in its order (``traces_insert.sql``)."""

READ_COLUMNS = (
    "toUnixTimestamp64Nano(Timestamp)",
    "TraceId",
    "SpanId",
    "ParentSpanId",
    "SpanName",
    "SpanKind",
    "ResourceAttributes",
    "ScopeName",
    "SpanAttributes",
    "Duration",
    "StatusCode",
    "StatusMessage",
    "arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`)",
    "`Events.Name`",
    "`Events.Attributes`",
    "`Links.TraceId`",
    "`Links.SpanId`",
    "`Links.TraceState`",
    "`Links.Attributes`",
)
"""What :func:`span_of_row` reads, as SQL select expressions (times as integer nanoseconds)."""

EVALUATION_COLUMNS = (
    *READ_COLUMNS[:12],
    "[]::Array(UInt64)",
    "[]::Array(String)",
    "[]::Array(Map(String, String))",
    "[]::Array(String)",
    "[]::Array(String)",
    "[]::Array(String)",
    "[]::Array(Map(String, String))",
)
""":data:`READ_COLUMNS` without the spans' events and links, which no evaluator reads: what evaluation reads."""


# --- writing: pdata's Value.AsString ------------------------------------------------------------


def go_float(value: float) -> str:
    """A double as pdata writes it: JavaScript's number formatting (Go's ``float64AsString``).

    >>> [go_float(v) for v in (1.0, 0.5, -0.0, 1e21, 1.5e-7, 123456789.125, 1e-6)]
    ['1', '0.5', '-0', '1e+21', '1.5e-7', '123456789.125', '0.000001']
    """
    if math.isnan(value) or math.isinf(value):
        shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        return f"json: unsupported value: {shown}"
    shortest = Decimal(repr(value)).normalize()
    size = abs(value)
    if size != 0 and (size < 1e-6 or size >= 1e21):
        sign, digits, exponent = shortest.as_tuple()
        text = "".join(map(str, digits))
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        power = int(exponent) + len(text) - 1
        # Go's 'e' format pads the exponent to two digits, then float64AsString turns e-07 into e-7
        shown = f"{abs(power):02d}" if power >= 0 or power <= -10 else str(-power)
        return f"{'-' if sign else ''}{mantissa}e{'+' if power >= 0 else '-'}{shown}"
    return format(shortest, "f")


_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")


def _go_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    return _GO_ESCAPED.sub(lambda m: _GO_ESCAPES[m.group()], encoded)


def go_json(value: AttributeValue) -> str:
    r"""An attribute value as Go's ``encoding/json`` writes pdata's ``AsRaw`` of it (arrays, maps).

    HTML characters are escaped, maps' keys sorted, bytes in base64, a non-finite double fails
    the whole value (``json.Marshal`` errors and pdata keeps the empty string).

    >>> go_json(("a<b", 1, 0.5, True, None, {"z": 1, "a": b"\x01"}))
    '["a\\u003cb",1,0.5,true,null,{"a":"AQ==","z":1}]'
    """
    try:
        return _go_json(value)
    except ValueError:
        return ""


def _go_json(value: AttributeValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("unsupported value")
        return go_float(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, bytes):
        return '"' + base64.b64encode(value).decode("ascii") + '"'
    if isinstance(value, Mapping):
        items = sorted(value.items())
        return "{" + ",".join(f"{_go_string(k)}:{_go_json(v)}" for k, v in items) + "}"
    return "[" + ",".join(_go_json(v) for v in value) + "]"


def value_string(value: AttributeValue) -> str:
    """An attribute value as the exporter stores it (pdata's ``Value.AsString``).

    >>> [value_string(v) for v in ("x", True, 42, 2.5, b"hi", ("a", 1), None)]
    ['x', 'true', '42', '2.5', 'aGk=', '["a",1]', '']
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return go_json(value)


def _strings(attributes: Mapping[str, AttributeValue]) -> dict[str, str]:
    return {key: value_string(value) for key, value in attributes.items()}


MAX_TIME_UNIX_NANO = 2**63 - 1
"""The latest time a ``DateTime64(9)`` holds (2262-04-11): a span starting later cannot be stored."""


def time_number(unix_nano: int) -> JsonNumber:
    """A ``DateTime64(9)`` as seconds with nine decimals, unquoted (what JSONEachRow reads exactly)."""
    return JsonNumber(f"{unix_nano // 1_000_000_000}.{unix_nano % 1_000_000_000:09d}")


def out_of_range(span: SpanData) -> bool:
    """Whether a time of ``span`` (its start, an event's) is past what ``DateTime64(9)`` holds."""
    return span.start_time_unix_nano > MAX_TIME_UNIX_NANO or any(
        e.time_unix_nano > MAX_TIME_UNIX_NANO for e in span.events
    )


def span_row(span: SpanData, scope_version: str = "") -> dict[str, Any]:
    """The exporter's row for ``span`` (keys: :data:`WRITE_COLUMNS`), ready for JSONEachRow."""
    service = span.resource.get(semconv.SERVICE_NAME)
    return {
        "Timestamp": time_number(span.start_time_unix_nano),
        "TraceId": span.trace_id,
        "SpanId": span.span_id,
        "ParentSpanId": span.parent_span_id or "",
        "TraceState": "",
        "SpanName": span.name,
        "SpanKind": _KIND_NAMES[span.kind],
        "ServiceName": value_string(service) if service is not None else "",
        "ResourceAttributes": _strings(span.resource),
        "ScopeName": span.scope_name,
        "ScopeVersion": scope_version,
        "SpanAttributes": _strings(span.attributes),
        "Duration": (span.end_time_unix_nano - span.start_time_unix_nano) % _UINT64,
        "StatusCode": _STATUS_NAMES[span.status_code],
        "StatusMessage": span.status_message,
        "Events.Timestamp": [time_number(e.time_unix_nano) for e in span.events],
        "Events.Name": [e.name for e in span.events],
        "Events.Attributes": [_strings(e.attributes) for e in span.events],
        "Links.TraceId": [link.trace_id for link in span.links],
        "Links.SpanId": [link.span_id for link in span.links],
        "Links.TraceState": [link.trace_state for link in span.links],
        "Links.Attributes": [_strings(link.attributes) for link in span.links],
    }


# --- reading: the declared types back -----------------------------------------------------------

_INT = re.compile(r"-?(0|[1-9][0-9]{0,18})")
_DECLARED = semconv.ATTRIBUTE_TYPES.keys()
_NON_FINITE = {
    "json: unsupported value: NaN": math.nan,
    "json: unsupported value: +Inf": math.inf,
    "json: unsupported value: -Inf": -math.inf,
}


def _typed(key: str, text: str) -> AttributeValue:
    """``text`` as the type :data:`~coordbench.semconv.ATTRIBUTE_TYPES` declares for ``key`` (else as it is)."""
    kind = semconv.ATTRIBUTE_TYPES.get(key)
    if kind is None:
        return text
    if kind == "int":
        return int(text) if _INT.fullmatch(text) else text
    if kind == "double":
        if text in _NON_FINITE:
            return _NON_FINITE[text]
        try:
            return float(text)
        except ValueError:
            return text
    if kind == "boolean":
        return {"true": True, "false": False}.get(text, text)
    try:
        items: Any = json.loads(text)
    except ValueError:
        return text
    if not isinstance(items, list):
        return text
    listed = cast("list[Any]", items)
    if kind == "string[]" and all(isinstance(v, str) for v in listed):
        return tuple(cast("list[str]", listed))
    if kind == "int[]" and all(isinstance(v, int) and not isinstance(v, bool) for v in listed):
        return tuple(cast("list[int]", listed))
    return text


def _attributes(stored: Mapping[str, str]) -> dict[str, AttributeValue]:
    # most attributes are undeclared strings: copy the map whole, then type the declared ones
    out: dict[str, AttributeValue] = dict(stored)
    declared = _DECLARED
    for key, value in stored.items():
        if key in declared:
            out[key] = _typed(key, value)
    return out


def span_of_row(row: Sequence[Any]) -> SpanData:
    """The span a row holds (the values of :data:`READ_COLUMNS`, in order, as JSON gives them).

    Raises:
        ValueError: If the row is not such a row (ids not hex, an unknown kind, arrays of unequal length).
    """
    (
        start,
        trace_id,
        span_id,
        parent,
        name,
        kind,
        resource,
        scope,
        attributes,
        duration,
        status,
        message,
        event_times,
        event_names,
        event_attributes,
        link_traces,
        link_spans,
        link_states,
        link_attributes,
    ) = row
    if len(event_times) != len(event_names) or len(link_traces) != len(link_spans):
        raise ValueError(f"span {span_id!r}: its Events or Links arrays differ in length")
    begin = int(start)
    elapsed = int(duration)
    if elapsed >= 1 << 63:  # the exporter's uint64 of an end before the start
        elapsed -= _UINT64
    span_kind = _KINDS.get(kind)
    status_code = _STATUSES.get(status)
    if span_kind is None or status_code is None:
        raise ValueError(f"span {span_id!r}: unknown SpanKind {kind!r} or StatusCode {status!r}")
    # positional, in SpanData's field order: a span is built per row, and binding keywords costs more
    return SpanData(
        str(trace_id),
        str(span_id),
        str(parent) or None,
        str(name),
        span_kind,
        begin,
        begin + elapsed,
        _attributes(attributes),
        status_code,
        str(message),
        _attributes(resource),
        tuple(
            SpanEvent(str(n), int(t), _attributes(a))
            for t, n, a in zip(event_times, event_names, event_attributes, strict=False)
        )
        if event_times
        else (),
        str(scope),
        tuple(
            SpanLink(str(t), str(s), _attributes(a), str(st))
            for t, s, st, a in zip(link_traces, link_spans, link_states, link_attributes, strict=False)
        )
        if link_traces
        else (),
    )
