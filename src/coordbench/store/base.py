"""Trace store vocabulary: counters, summaries, errors, persistence.

Completeness and subtrees are the trace's shape (:mod:`coordbench.spantree`); they are
re-exported here for the store's users.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from coordbench.errors import CoordbenchError
from coordbench.spans import SpanData
from coordbench.spantree import Completeness, completeness_of, subtree_of
from coordbench.store.encoded import EncodedSpan

__all__ = [
    "Completeness",
    "Persistence",
    "StoreFullError",
    "StoreStats",
    "StoreUnavailableError",
    "StoredSpan",
    "TraceSnapshot",
    "TraceSummary",
    "completeness_of",
    "subtree_of",
]


class StoreUnavailableError(CoordbenchError):
    """The store cannot take spans right now; the sender should retry later."""

    default_message = "trace store unavailable"

    def __init__(self, message: str | None = None, *, retry_after: float = 2.0) -> None:
        """Create the error.

        Args:
            message: What went wrong.
            retry_after: Seconds after which a retry may succeed.
        """
        super().__init__(message)
        self.retry_after = retry_after


class StoreFullError(StoreUnavailableError):
    """The store's bounds are reached and no finished trace can be evicted."""

    default_message = "trace store is full"


class BatchTooLargeError(CoordbenchError):
    """One batch is larger than the whole store may hold: retrying it can never succeed."""

    default_message = "batch larger than the trace store"


@dataclass(frozen=True)
class TraceSnapshot:
    """A trace as read from the store: its spans (by start time) and its completeness."""

    trace_id: str
    spans: list[SpanData]
    completeness: Completeness


@dataclass(frozen=True)
class TraceSummary:
    """One line of the trace listing.

    Attributes:
        trace_id: The trace.
        span_count: Spans held.
        services: ``service.name`` of the processes that sent them, sorted.
        first_seen_unix_nano: When its first span arrived.
        last_growth_unix_nano: When it last grew.
        root: Name of its root span, if it arrived.
        assessment_id: The assessment it records, for an assessor's trace.
        scenarios: The scenario ids it records (the assessor's scenario spans under the root).
    """

    trace_id: str
    span_count: int
    services: tuple[str, ...]
    first_seen_unix_nano: int
    last_growth_unix_nano: int
    root: str | None = None
    assessment_id: str | None = None
    scenarios: tuple[str, ...] = ()


@dataclass
class StoreStats:
    """Span counters. ``received == stored + rejected`` always holds.

    Attributes:
        received: Spans that reached the store's doors (including those the decoder rejected).
        stored: Spans accepted; a span re-sent on retry is accepted again but kept once
            (``duplicates`` counts those).
        duplicates: Accepted spans that were already stored.
        rejected: Spans refused: malformed (decoder) or no room (store full).
        evicted: Stored spans dropped later to make room (their traces were finished).
        spans: Spans held now.
        traces: Traces held now.
        bytes: Approximate memory the held spans take (see
            :func:`~coordbench.store.sizes.held_bytes`), which ``max_bytes`` bounds.
    """

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    evicted: int = 0
    spans: int = 0
    traces: int = 0
    bytes: int = 0
    rejected_reasons: dict[str, int] = field(default_factory=dict[str, int])


@dataclass(frozen=True)
class StoredSpan:
    """A span loaded back from persistent storage, with its storage key."""

    key: int
    span: EncodedSpan
    received_unix_nano: int


class Persistence(Protocol):
    """Where a durable store writes accepted spans before acknowledging them.

    Calls come from one thread at a time (the store serialises them).
    """

    def load(self) -> Iterable[StoredSpan]:
        """Every span stored so far, in arrival order."""
        ...

    def append(self, spans: Sequence[EncodedSpan], received_unix_nano: int) -> list[int]:
        """Store ``spans`` durably (they survive a crash of the process once this returns); their keys."""
        ...

    def delete(self, keys: Sequence[int]) -> None:
        """Forget the spans with these keys."""
        ...

    def close(self) -> None:
        """Release the storage."""
        ...
