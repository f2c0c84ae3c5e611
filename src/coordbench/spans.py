"""The domain span: what coordbench keeps of an OpenTelemetry span, independent of its source.

Spans reach coordbench from the OpenTelemetry SDK (in-process tests and the pytest plugin),
from OTLP protobuf or JSON (the receiver) and from traceability Step reports. Everything
downstream (:mod:`coordbench.steps`, the span tree, the agent graph) works on
:class:`SpanData`, so no protobuf or SDK class crosses into evaluation code.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

from coordbench import semconv

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = [
    "AttributeValue",
    "SpanData",
    "SpanEvent",
    "SpanKind",
    "SpanLink",
    "StatusCode",
    "jsonable",
    "span_data_from_readable",
    "span_from_dict",
    "span_to_dict",
    "spans_from_readable",
]

AttributeValue: TypeAlias = (
    "str | bool | int | float | bytes | tuple[AttributeValue, ...] | Mapping[str, AttributeValue] | None"
)
"""An attribute value as OTLP's ``AnyValue`` allows: scalars, bytes, arrays and key-value lists."""


class SpanKind(IntEnum):
    """Span kind, numbered as in OTLP (``opentelemetry.proto.trace.v1.Span.SpanKind``)."""

    UNSPECIFIED = 0
    INTERNAL = 1
    SERVER = 2
    CLIENT = 3
    PRODUCER = 4
    CONSUMER = 5


class StatusCode(IntEnum):
    """Span status code, numbered as in OTLP."""

    UNSET = 0
    OK = 1
    ERROR = 2


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A timestamped event recorded on a span (for example an exception)."""

    name: str
    time_unix_nano: int
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])


@dataclass(frozen=True, slots=True)
class SpanLink:
    """A link from a span to another span, possibly of another trace (a follow-up, a batch)."""

    trace_id: str
    span_id: str
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])
    trace_state: str = ""


_NO_ATTRIBUTES: Mapping[str, AttributeValue] = MappingProxyType({})


class SpanData(NamedTuple):
    """One finished span (immutable).

    A named tuple rather than a frozen dataclass: evaluations build one per stored span, and a
    frozen dataclass's ``__init__`` (``object.__setattr__`` per field) is several times slower,
    which showed in the evaluation benchmark (``docs/benchmarks.md``).

    Attributes:
        trace_id: 32 lower-case hex digits.
        span_id: 16 lower-case hex digits.
        parent_span_id: The parent's span id, or ``None`` for a root span.
        name: Span name.
        kind: Span kind (OTLP numbering).
        start_time_unix_nano: Start time, nanoseconds since the Unix epoch.
        end_time_unix_nano: End time, nanoseconds since the Unix epoch.
        attributes: Span attributes.
        status_code: Span status code.
        status_message: Status description (set with ``ERROR``).
        resource: Attributes of the resource that produced the span (``service.name``...).
        events: Span events, in the order recorded.
        scope_name: Name of the instrumentation scope that created the span.
        links: Links to other spans, in the order recorded.
    """

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: SpanKind
    start_time_unix_nano: int
    end_time_unix_nano: int
    attributes: Mapping[str, AttributeValue] = _NO_ATTRIBUTES
    status_code: StatusCode = StatusCode.UNSET
    status_message: str = ""
    resource: Mapping[str, AttributeValue] = _NO_ATTRIBUTES
    events: tuple[SpanEvent, ...] = ()
    scope_name: str = ""
    links: tuple[SpanLink, ...] = ()

    @property
    def service_name(self) -> str | None:
        """The ``service.name`` resource attribute, if it is a string."""
        value = self.resource.get(semconv.SERVICE_NAME)
        return value if isinstance(value, str) else None

    @property
    def duration_ms(self) -> float:
        """Duration in milliseconds (0 when the end precedes the start)."""
        return max(0, self.end_time_unix_nano - self.start_time_unix_nano) / 1e6

    def attribute_str(self, key: str) -> str | None:
        """An attribute as a non-empty string, or ``None``."""
        value = self.attributes.get(key)
        return value if isinstance(value, str) and value else None


def _freeze(value: Any) -> AttributeValue:
    if isinstance(value, str | bool | int | float | bytes) or value is None:
        return value
    if isinstance(value, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        return {str(k): _freeze(v) for k, v in mapping.items()}
    if isinstance(value, Sequence):
        sequence = cast("Sequence[Any]", value)
        return tuple(_freeze(v) for v in sequence)
    return str(value)


def span_data_from_readable(span: ReadableSpan) -> SpanData:
    """Convert a finished OpenTelemetry SDK span into a :class:`SpanData`.

    Args:
        span: A span from the SDK (for example from an ``InMemorySpanExporter``).

    Returns:
        The domain span.

    Raises:
        ValueError: If the span has no valid span context (it was never recorded).
    """
    ctx = span.get_span_context()
    if ctx is None or not ctx.is_valid:
        raise ValueError(f"span {span.name!r} has no valid span context")
    parent = span.parent
    return SpanData(
        trace_id=format(ctx.trace_id, "032x"),
        span_id=format(ctx.span_id, "016x"),
        parent_span_id=format(parent.span_id, "016x") if parent is not None and parent.is_valid else None,
        name=span.name,
        kind=SpanKind(span.kind.value + 1),
        start_time_unix_nano=span.start_time or 0,
        end_time_unix_nano=span.end_time or span.start_time or 0,
        attributes={k: _freeze(v) for k, v in (span.attributes or {}).items()},
        status_code=StatusCode(span.status.status_code.value),
        status_message=span.status.description or "",
        resource={k: _freeze(v) for k, v in span.resource.attributes.items()},
        events=tuple(
            SpanEvent(e.name, e.timestamp, {k: _freeze(v) for k, v in (e.attributes or {}).items()})
            for e in span.events
        ),
        scope_name=span.instrumentation_scope.name if span.instrumentation_scope is not None else "",
        links=tuple(
            SpanLink(
                format(link.context.trace_id, "032x"),
                format(link.context.span_id, "016x"),
                {k: _freeze(v) for k, v in (link.attributes or {}).items()},
                link.context.trace_state.to_header() if link.context.trace_state else "",
            )
            for link in span.links
        ),
    )


def spans_from_readable(spans: Iterable[ReadableSpan]) -> list[SpanData]:
    """Convert SDK spans, skipping none; see :func:`span_data_from_readable`."""
    return [span_data_from_readable(s) for s in spans]


def jsonable(value: AttributeValue) -> Any:
    """An attribute value as plain JSON (tuples as lists, bytes as hex, NaN and infinities as ``None``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def span_to_dict(span: SpanData) -> dict[str, Any]:
    """The span as plain JSON (what the read API returns)."""
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "kind": span.kind.name,
        "start_time_unix_nano": span.start_time_unix_nano,
        "end_time_unix_nano": span.end_time_unix_nano,
        "attributes": {k: jsonable(v) for k, v in span.attributes.items()},
        "status": {"code": span.status_code.name, "message": span.status_message},
        "resource": {k: jsonable(v) for k, v in span.resource.items()},
        "events": [
            {
                "name": e.name,
                "time_unix_nano": e.time_unix_nano,
                "attributes": {k: jsonable(v) for k, v in e.attributes.items()},
            }
            for e in span.events
        ],
        "scope": span.scope_name,
        "links": [
            {
                "trace_id": link.trace_id,
                "span_id": link.span_id,
                "trace_state": link.trace_state,
                "attributes": {k: jsonable(v) for k, v in link.attributes.items()},
            }
            for link in span.links
        ],
    }


def _from_jsonable(value: Any) -> AttributeValue:
    if isinstance(value, list):
        return tuple(_from_jsonable(v) for v in cast("list[Any]", value))
    if isinstance(value, dict):
        return {str(k): _from_jsonable(v) for k, v in cast("dict[str, Any]", value).items()}
    return cast("AttributeValue", value)


def span_from_dict(data: Mapping[str, Any]) -> SpanData:
    """Read back what :func:`span_to_dict` wrote (lists become tuples; bytes stay hex strings).

    Raises:
        KeyError: If a required field is missing.
        ValueError: If a kind or status code is unknown.
    """
    status = cast("Mapping[str, Any]", data.get("status") or {})
    return SpanData(
        trace_id=str(data["trace_id"]),
        span_id=str(data["span_id"]),
        parent_span_id=data.get("parent_span_id"),
        name=str(data.get("name", "")),
        kind=SpanKind[str(data.get("kind", "UNSPECIFIED"))],
        start_time_unix_nano=int(data["start_time_unix_nano"]),
        end_time_unix_nano=int(data["end_time_unix_nano"]),
        attributes={k: _from_jsonable(v) for k, v in cast("Mapping[str, Any]", data.get("attributes") or {}).items()},
        status_code=StatusCode[str(status.get("code", "UNSET"))],
        status_message=str(status.get("message", "")),
        resource={k: _from_jsonable(v) for k, v in cast("Mapping[str, Any]", data.get("resource") or {}).items()},
        events=tuple(
            SpanEvent(
                str(e["name"]), int(e["time_unix_nano"]), {k: _from_jsonable(v) for k, v in e["attributes"].items()}
            )
            for e in cast("list[dict[str, Any]]", data.get("events") or [])
        ),
        scope_name=str(data.get("scope", "")),
        links=tuple(
            SpanLink(
                str(link["trace_id"]),
                str(link["span_id"]),
                {k: _from_jsonable(v) for k, v in cast("dict[str, Any]", link.get("attributes") or {}).items()},
                str(link.get("trace_state", "")),
            )
            for link in cast("list[dict[str, Any]]", data.get("links") or [])
        ),
    )
