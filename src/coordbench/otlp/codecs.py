"""Spans built in memory, made ready for the store; the codecs a durable store reads back with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import cast

from coordbench.otlp.decode import OTLP_PROTOBUF
from coordbench.otlp.jsondecode import OTLP_JSON, OTLP_JSON_TEXT
from coordbench.otlp.model import INT64, MAX_VALUE_DEPTH, UINT64, id_problem
from coordbench.spans import AttributeValue, SpanData
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec

__all__ = ["CODECS", "encoded_span"]


def encoded_span(span: SpanData) -> EncodedSpan:
    """A span already in memory (our own, or converted from a reported Step) ready for the store.

    Raises:
        ValueError: If its ids are not 32/16 hex digits, or are all zero, or it holds what OTLP
            cannot (an integer beyond int64, a time beyond uint64, a value of another type, or
            nesting deeper than :data:`MAX_VALUE_DEPTH`): a durable store could not keep it.
    """
    trace_id, span_id = bytes.fromhex(span.trace_id), bytes.fromhex(span.span_id)
    parent = bytes.fromhex(span.parent_span_id) if span.parent_span_id else b""
    problem = id_problem(trace_id, span_id, parent)
    if problem is not None:
        ids = f"trace {span.trace_id!r}, span {span.span_id!r}, parent {span.parent_span_id!r}"
        raise ValueError(f"{problem}: {ids}")
    problem = _unencodable(span)
    if problem is not None:
        raise ValueError(f"span {span.span_id}: {problem}")
    return EncodedSpan(trace_id, span_id, parent, OTLP_JSON, span, Envelope(span.resource, span.scope_name))


def _unencodable(span: SpanData) -> str | None:
    """Why OTLP protobuf cannot hold ``span`` (so a durable store could not either), or ``None``."""
    for field_name, value in (("start time", span.start_time_unix_nano), ("end time", span.end_time_unix_nano)):
        if not UINT64[0] <= value <= UINT64[1]:
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
        return None if INT64[0] <= value <= INT64[1] else f"{value} is out of int64 range"
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


CODECS: Mapping[str, SpanCodec] = MappingProxyType(
    {codec.name: codec for codec in (OTLP_PROTOBUF, OTLP_JSON, OTLP_JSON_TEXT)}
)
"""The codecs by name, for a durable store reading back what it stored (:class:`coordbench.store.SqlitePersistence`)."""
