"""What every OTLP decoder shares: the result, the error, the one rule for ids, value bounds, enums.

:func:`id_problem` is the receiver's one rule for span ids (the protobuf walk, the JSON
decoder and spans built in memory all apply it; the native scanner applies the same rule in C
and reports it with the same words, :data:`coordbench.otlp.native.REJECTION_REASONS`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from coordbench.errors import CoordbenchError
from coordbench.otlp import native
from coordbench.spans import SpanKind, StatusCode
from coordbench.store.encoded import EncodedSpan

__all__ = [
    "INT32",
    "INT64",
    "MAX_VALUE_DEPTH",
    "UINT64",
    "DecodeResult",
    "OtlpDecodeError",
    "id_problem",
    "kind_of",
    "status_of",
]

_ZERO_TRACE = bytes(16)
_ZERO_SPAN = bytes(8)

INT64 = (-(2**63), 2**63 - 1)
"""The range of an OTLP ``int64`` (attribute integers)."""
UINT64 = (0, 2**64 - 1)
"""The range of an OTLP ``fixed64``/``uint64`` (times)."""
INT32 = (-(2**31), 2**31 - 1)
"""The range of an OTLP enum."""

MAX_VALUE_DEPTH = 64
"""Deepest nesting of array and key-value-list attribute values accepted in OTLP/JSON (and kept).

Protobuf refuses messages nested deeper than 100 levels in all (about 45 levels of nested
arrays in a span attribute); JSON gets an explicit bound of its own rather than Python's
recursion limit.
"""


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


def id_problem(trace_id: bytes, span_id: bytes, parent: bytes) -> str | None:
    """Why these ids make a span unacceptable (in the native scanner's words), or ``None``.

    Example:
        >>> id_problem(bytes(16), bytes([1]) * 8, b"")
        'invalid trace_id (must be 16 non-zero bytes)'
        >>> id_problem(bytes([1]) * 16, bytes([1]) * 8, b"") is None
        True
    """
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        return native.REJECTION_REASONS[0]
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return native.REJECTION_REASONS[1]
    if parent and len(parent) != 8:
        return native.REJECTION_REASONS[2]
    return None


KINDS = tuple(SpanKind)
STATUSES = tuple(StatusCode)


def kind_of(value: int) -> SpanKind:
    """The span kind OTLP numbers ``value`` (``UNSPECIFIED`` for a number it does not know)."""
    return KINDS[value] if 0 <= value <= 5 else SpanKind.UNSPECIFIED  # a tuple lookup: cheaper than SpanKind(value)


def status_of(value: int) -> StatusCode:
    """The status code OTLP numbers ``value`` (``UNSET`` for a number it does not know)."""
    return STATUSES[value] if 0 <= value <= 2 else StatusCode.UNSET
