"""Trace store vocabulary: counters, summaries, errors, persistence.

Completeness and subtrees are the trace's shape (:mod:`coordbench.spantree`); they are
re-exported here for the store's users.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from coordbench.errors import CoordbenchError
from coordbench.spans import SpanData
from coordbench.spantree import Completeness, completeness_of, subtree_of
from coordbench.store.encoded import EncodedSpan

__all__ = [
    "FULL",
    "OUT_OF_RANGE",
    "REJECTION_REASONS",
    "TOO_LARGE",
    "UNWRITTEN",
    "AddResult",
    "Completeness",
    "Persistence",
    "StoreFullError",
    "StoreStats",
    "StoreUnavailableError",
    "StoredSpan",
    "TraceSnapshot",
    "TraceSummary",
    "TraceWatcher",
    "completeness_of",
    "scoped_completeness",
    "subtree_of",
]


FULL = "store full"
TOO_LARGE = "batch larger than the store"
UNWRITTEN = "durable storage failed"
OUT_OF_RANGE = "time_out_of_range"
REJECTION_REASONS = (FULL, TOO_LARGE, UNWRITTEN, OUT_OF_RANGE)
"""Why a store refuses spans (``StoreStats.rejected_reasons``' keys besides the decoders' reasons)."""


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


@dataclass(frozen=True)
class AddResult:
    """What :meth:`TraceStore.add` did with a batch."""

    stored: int
    duplicates: int


class TraceWatcher(Protocol):
    """Told of every trace that grows or goes (online evaluation schedules traces from this).

    Both calls come on the store's event loop, inside the store's bookkeeping: they must be
    cheap and must not call back into the store.
    """

    def grown(self, trace_id: bytes, new_spans: int, now: float) -> None:
        """``new_spans`` spans (never re-sent ones) were added to the trace at ``now`` (the store's clock)."""
        ...

    def dropped(self, trace_id: bytes, *, evicted: bool) -> None:
        """The trace left the store: evicted to make room, or deleted."""
        ...


def scoped_completeness(
    trace_id: str, spans: list[SpanData], idle: float, open_spans: Collection[str] = (), within: str | None = None
) -> tuple[list[SpanData], Completeness]:
    """A trace's spans and completeness, or only the subtree under span ``within`` and its completeness.

    The subtree is complete when it has no unmatched client span and no loose span (one hanging
    from a parent not yet arrived) could still belong to it; its top's parent counts as open.

    Args:
        trace_id: The trace (32 hex digits).
        spans: Its spans.
        idle: Seconds since it last grew.
        open_spans: Span ids still running by design: their children are no orphans.
        within: The subtree's top span id (``None``: the whole trace).
    """
    if within is None:
        return spans, completeness_of(trace_id, spans, idle, open_spans=open_spans)
    subtree, loose = subtree_of(spans, within, open_spans=open_spans)
    top = next((s for s in subtree if s.span_id == within), None)
    allowed = set(open_spans)
    if top is not None and top.parent_span_id is not None:
        allowed.add(top.parent_span_id)
    report = completeness_of(trace_id, subtree + loose, idle, open_spans=allowed)
    if top is None:
        report = dataclasses.replace(report, complete=False)
    return subtree, dataclasses.replace(report, span_count=len(subtree))


class SpanStore(Protocol):
    """What the receivers, the read API, the assessor and online evaluation ask of a trace store.

    :class:`~coordbench.store.TraceStore` holds spans in this process;
    :class:`~coordbench.clickhouse.ClickHouseStore` keeps them in ClickHouse.
    """

    max_spans: int
    max_traces: int
    max_bytes: int

    @property
    def stats(self) -> StoreStats:
        """The span counters."""
        ...

    @property
    def blocking_reads(self) -> bool:
        """Whether :meth:`encoded` blocks (a database read): its callers then call it off the event loop."""
        ...

    async def open(self) -> None:
        """Get ready (load durable spans, connect)."""
        ...

    async def close(self) -> None:
        """Release what :meth:`open` took."""
        ...

    async def add(self, spans: Sequence[EncodedSpan]) -> AddResult:
        """Store a batch; raises :class:`StoreUnavailableError` or :class:`BatchTooLargeError` when it cannot."""
        ...

    def record_rejected(self, count: int, reasons: dict[str, int] | None = None) -> None:
        """Count spans the receiver refused before they reached :meth:`add`."""
        ...

    def watch(self, watcher: TraceWatcher | None) -> None:
        """Tell ``watcher`` of every trace that grows or goes (``None``: stop)."""
        ...

    def now(self) -> float:
        """The store's clock (monotonic seconds), as :class:`TraceWatcher` calls give it."""
        ...

    def __contains__(self, trace_id: str) -> bool:
        """Whether the store knows the trace (32 hex digits) without reading anything slow."""
        ...

    def encoded(self, trace_id: bytes) -> tuple[list[EncodedSpan], float] | None:
        """The trace's spans and the seconds since it last grew (``None``: not held)."""
        ...

    def encoded_many(self, trace_ids: Sequence[bytes]) -> dict[bytes, tuple[list[EncodedSpan], float]]:
        """:meth:`encoded` of several traces at once (a database reads them in one query); those held."""
        ...

    def snapshot_builder(self, trace_id: str) -> Callable[[], TraceSnapshot] | None:
        """A function building the trace's snapshot off the event loop (``None``: surely not held)."""
        ...

    async def wait_complete(
        self,
        trace_id: str,
        *,
        quiet: float = 2.0,
        timeout: float = 30.0,  # noqa: ASYNC109 - the store's own deadline
        open_spans: Collection[str] = (),
        within: str | None = None,
    ) -> TraceSnapshot:
        """Wait until the trace (or the subtree ``within``) is complete and quiet; see :class:`TraceStore`."""
        ...

    def list_traces(self, *, limit: int = 50, cursor: str | None = None) -> tuple[list[TraceSummary], str | None]:
        """Traces, newest first, a page at a time."""
        ...
