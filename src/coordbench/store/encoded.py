"""A span as the trace store keeps it: the ids grouping needs, the rest still encoded, and how to read it.

Building a full :class:`~coordbench.spans.SpanData` costs far more than parsing the span
(figures in ``docs/benchmarks.md``, receiver ingest), so the receiver stores an
:class:`EncodedSpan` and decodes it on read. Each one carries the :class:`SpanCodec` that
reads and stores its payload, given to it by whoever decoded it (:mod:`coordbench.otlp.decode`
defines the OTLP codecs), so the store never sees protobuf and no codec is found through a
registry filled as a side effect of an import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from coordbench.spans import AttributeValue, SpanData

__all__ = ["EncodedSpan", "Envelope", "SpanCodec"]


@dataclass(frozen=True, slots=True)
class Envelope:
    """What the spans of one OTLP ``ScopeSpans`` share: their resource and instrumentation scope."""

    resource: Mapping[str, AttributeValue]
    scope_name: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class SpanCodec:
    """How the payloads of one encoding are read back and made durable.

    Attributes:
        name: The encoding's name, stored beside a durable span's bytes (``otlp/protobuf``).
        decode: The full span of an :class:`EncodedSpan` of this encoding.
        dump: The payload as bytes for storage, and the name of the codec that reads those
            bytes back (which may be another's: a span held decoded is stored as protobuf).
    """

    name: str
    decode: Callable[[EncodedSpan], SpanData]
    dump: Callable[[EncodedSpan], tuple[str, bytes]]

    def __repr__(self) -> str:
        """``SpanCodec('otlp/protobuf')``."""
        return f"SpanCodec({self.name!r})"


class EncodedSpan(NamedTuple):
    """A span as the trace store keeps it (a tuple: the C extension builds and groups these).

    Attributes:
        trace_id: 16 bytes.
        span_id: 8 bytes.
        parent_span_id: 8 bytes, or empty for a root span.
        codec: What reads and stores the payload.
        payload: The encoded span (codec-specific: for OTLP protobuf the span's bytes).
        envelope: Resource and scope shared with the other spans of the same scope.
    """

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    codec: SpanCodec
    payload: Any
    envelope: Envelope

    def decode(self) -> SpanData:
        """The full span."""
        return self.codec.decode(self)

    def dump(self) -> tuple[str, bytes]:
        """The payload as bytes, for storage, with the name of the codec that reads them back."""
        return self.codec.dump(self)
