"""What stored spans weigh, and batches grouped by trace: the store's accounting.

:func:`held_bytes` estimates the memory a stored span takes (the store's ``max_bytes`` bound);
:func:`group_by_trace` splits a batch by trace, first copy of each span kept, with each trace's
weight. Both take :class:`~coordbench.spans.EncodedSpan` and never decode it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypeAlias

from coordbench.spans import AttributeValue, SpanData
from coordbench.store.encoded import EncodedSpan

__all__ = [
    "ENCODED_SPAN_OVERHEAD",
    "Grouped",
    "Grouper",
    "group_by_trace",
    "held_bytes",
    "held_bytes_of",
]


ENCODED_SPAN_OVERHEAD = 330
"""Bytes a stored span takes besides its encoding (the tuple, its ids, the store's dict entry)."""


def _value_bytes(value: AttributeValue) -> int:
    if isinstance(value, str):
        return 49 + len(value)
    if isinstance(value, bytes):
        return 33 + len(value)
    if isinstance(value, tuple):
        return 56 + sum(8 + _value_bytes(v) for v in value)
    if isinstance(value, Mapping):
        return 232 + sum(64 + _value_bytes(v) for v in value.values())
    return 32


def held_bytes(span: EncodedSpan) -> int:
    """Approximate memory a stored span takes, for the store's ``max_bytes`` bound.

    A span kept as protobuf bytes takes its encoding plus :data:`ENCODED_SPAN_OVERHEAD`. A span
    kept decoded (OTLP/JSON, reported Steps) takes Python objects: a fixed cost, a cost per
    attribute and event entry, and its strings and containers. Both estimates were checked
    against measured RSS in the ingest benchmark (``benchmarks/ingest.py``).

    Example:
        >>> from coordbench.otlp import OTLP_PROTOBUF
        >>> from coordbench.store.encoded import EncodedSpan, Envelope
        >>> span = EncodedSpan(b"t" * 16, b"s" * 8, b"", OTLP_PROTOBUF, b"x" * 470, Envelope({}))
        >>> held_bytes(span)
        800
    """
    payload = span.payload
    if type(payload) is bytes:
        return len(payload) + ENCODED_SPAN_OVERHEAD
    if isinstance(payload, SpanData):
        total = 1400 + len(payload.name)
        for attributes in (payload.attributes, *(e.attributes for e in payload.events)):
            total += sum(64 + _value_bytes(v) for v in attributes.values())
        return total + 200 * (len(payload.events) + len(payload.links))
    return 2 * ENCODED_SPAN_OVERHEAD


_PAYLOAD = operator.itemgetter(4)


def held_bytes_of(spans: Collection[EncodedSpan]) -> int:
    """:func:`held_bytes` summed over ``spans`` (at C speed when every payload is bytes, as from OTLP/protobuf).

    Example:
        >>> from coordbench.otlp import OTLP_PROTOBUF
        >>> from coordbench.store.encoded import EncodedSpan, Envelope
        >>> span = EncodedSpan(b"t" * 16, b"s" * 8, b"", OTLP_PROTOBUF, b"x" * 470, Envelope({}))
        >>> held_bytes_of([span, span])
        1600
    """
    payloads = list(map(_PAYLOAD, spans))
    if set(map(type, payloads)) <= {bytes}:
        return sum(map(len, payloads)) + ENCODED_SPAN_OVERHEAD * len(payloads)
    return sum(map(held_bytes, spans))


Grouped: TypeAlias = tuple[dict[bytes, dict[bytes, EncodedSpan]], dict[bytes, int]]
"""Spans grouped by trace id then span id, and the bytes each trace's group holds."""

Grouper: TypeAlias = Callable[[list[EncodedSpan], int], Grouped | None]
"""A faster :func:`group_by_trace` for lists of spans: ``grouper(spans, ENCODED_SPAN_OVERHEAD)``
returns what :func:`group_by_trace` does, or ``None`` for a batch it leaves to the Python code
(the C extension's :func:`coordbench.otlp.native.group`, which the server passes to its store)."""


def group_by_trace(spans: Sequence[EncodedSpan], grouper: Grouper | None = None) -> Grouped:
    """Group a batch by trace id, then span id, keeping the first copy of a repeated span.

    Args:
        spans: The batch.
        grouper: A faster grouping to try first (:data:`Grouper`).

    Returns:
        ``(groups, sizes)``: ``groups[trace_id]`` maps each span id to its span, in the order
        the trace ids and spans first appear; ``sizes[trace_id]`` is :func:`held_bytes_of` the
        trace's group.

    Example:
        >>> from coordbench.otlp import OTLP_PROTOBUF
        >>> from coordbench.store.encoded import EncodedSpan, Envelope
        >>> a = EncodedSpan(b"t" * 16, b"a" * 8, b"", OTLP_PROTOBUF, b"x" * 470, Envelope({}))
        >>> b = a._replace(span_id=b"b" * 8)
        >>> groups, sizes = group_by_trace([a, b, a])
        >>> [len(g) for g in groups.values()], list(sizes.values())
        ([2], [1600])
    """
    if grouper is not None and isinstance(spans, list):
        grouped = grouper(spans, ENCODED_SPAN_OVERHEAD)
        if grouped is not None:
            return grouped
    groups: dict[bytes, dict[bytes, EncodedSpan]] = {}
    for span in spans:
        group = groups.get(span[0])  # trace_id
        if group is None:
            group = groups[span[0]] = {}
        if span[1] not in group:  # span_id
            group[span[1]] = span
    return groups, {trace_id: held_bytes_of(group.values()) for trace_id, group in groups.items()}
