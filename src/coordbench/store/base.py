"""Trace store vocabulary: completeness reports, counters, summaries, errors, persistence."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from coordbench import semconv
from coordbench.errors import CoordbenchError
from coordbench.spans import EncodedSpan, SpanData, SpanKind, StatusCode
from coordbench.spantree import answer_of

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
class Completeness:
    """Whether a trace looks whole, and why not.

    Attributes:
        trace_id: The trace.
        span_count: Spans stored.
        orphans: Parent span ids that spans point to but that never arrived, sorted.
        unmatched_clients: A2A CLIENT spans (not failed) with no SERVER span below them, also
            through spans of other instrumentations between the two (httpx's CLIENT span, a
            proxy's): the callee is uninstrumented, or its spans have not arrived.
        roots: Span ids of root spans (no parent), sorted.
        idle_seconds: Seconds since the trace last grew.
        complete: No orphans and no unmatched client spans (and at least one span).
        timed_out: ``wait_complete`` gave up before the trace was complete and quiet.
    """

    trace_id: str
    span_count: int
    orphans: tuple[str, ...] = ()
    unmatched_clients: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    idle_seconds: float = 0.0
    complete: bool = False
    timed_out: bool = False


def completeness_of(
    trace_id: str, spans: Sequence[SpanData], idle_seconds: float, *, open_spans: Collection[str] = ()
) -> Completeness:
    """Work out the completeness of a trace from its spans.

    Args:
        trace_id: The trace.
        spans: Its spans.
        idle_seconds: Seconds since it last grew.
        open_spans: Span ids known to be still running (an assessment's root span, say):
            children pointing at them are not orphans.
    """
    ids = {s.span_id for s in spans}
    ids.update(open_spans)
    orphans = sorted({s.parent_span_id for s in spans if s.parent_span_id is not None and s.parent_span_id not in ids})
    children: dict[str, list[SpanData]] = {}
    for span in spans:
        if span.parent_span_id is not None:
            children.setdefault(span.parent_span_id, []).append(span)
    for siblings in children.values():
        siblings.sort(key=lambda s: (s.start_time_unix_nano, s.span_id))

    def children_of(span_id: str) -> Sequence[SpanData]:
        return children.get(span_id, ())

    unmatched = sorted(
        s.span_id
        for s in spans
        if s.kind is SpanKind.CLIENT
        and semconv.A2A_METHOD in s.attributes
        and s.status_code is not StatusCode.ERROR
        and answer_of(s, children_of, any_server=True) is None
    )
    roots = sorted(s.span_id for s in spans if s.parent_span_id is None)
    return Completeness(
        trace_id=trace_id,
        span_count=len(spans),
        orphans=tuple(orphans),
        unmatched_clients=tuple(unmatched),
        roots=tuple(roots),
        idle_seconds=idle_seconds,
        complete=bool(spans) and not orphans and not unmatched,
    )


def subtree_of(
    spans: Sequence[SpanData], root: str, *, open_spans: Collection[str] = ()
) -> tuple[list[SpanData], list[SpanData]]:
    """The spans under ``root`` (itself included), and the loose ones that might belong there.

    Loose spans hang (directly or through other spans) from a parent that has not arrived,
    so where they belong is not known yet: a subtree is complete only without any. Spans
    hanging from one of ``open_spans`` (known to be still running, so not sent yet) and from
    ``root``'s own parent are not loose: they are known to be elsewhere. Spans whose parents
    loop back to themselves (bad input) hang from nothing and are in neither list.

    Returns:
        ``(subtree, loose)``, each in the order of ``spans``.
    """
    by_id = {s.span_id: s for s in spans}
    top = by_id.get(root)
    elsewhere = set(open_spans)
    if top is not None and top.parent_span_id is not None:
        elsewhere.add(top.parent_span_id)
    verdict: dict[str, str] = {}  # span id -> "in", "out" or "loose"

    def classify(span: SpanData) -> str:
        path: list[str] = []
        on_path: set[str] = set()
        current: SpanData | None = span
        result = "out"
        while current is not None:
            known = verdict.get(current.span_id)
            if known is not None:
                result = known
                break
            if current.span_id in on_path:
                break  # a parent cycle (bad input): it hangs from nothing, so it is outside
            on_path.add(current.span_id)
            path.append(current.span_id)
            if current.span_id == root:
                result = "in"
                break
            parent = current.parent_span_id
            if parent is None:
                break
            current = by_id.get(parent)
            if current is None and parent not in elsewhere:
                result = "loose"
        for span_id in path:
            verdict[span_id] = result
        return result

    subtree: list[SpanData] = []
    loose: list[SpanData] = []
    for span in spans:
        where = classify(span)
        if where == "in":
            subtree.append(span)
        elif where == "loose":
            loose.append(span)
    return subtree, loose


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
            :func:`~coordbench.spans.held_bytes`), which ``max_bytes`` bounds.
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
