"""``ClickHouseStore``: the trace store kept in ClickHouse, in the exporter's tables.

A receiver or assessor started with ``--store clickhouse://…`` (or ``chdb://…``) holds nothing
itself:

- OTLP it receives is written as the Collector's ClickHouse exporter writes it (same tables,
  same rows), so traces from the Collector and from coordbench sit side by side;
- reads (``GET /v1/traces/{id}``, the listing, an assessor waiting for its scenario) come from
  ClickHouse through the trace-id index table;
- online evaluation learns of traces that grow by watching the index table: a trace whose
  index rows changed since the last look grew. Each look reads only the index rows of the
  last few minutes; the spans themselves are read once, when the trace is evaluated.

Several receivers may evaluate from one ClickHouse: ``shard=I/N`` in the URL gives each its part
of the traces (``cityHash64(TraceId) % N``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Collection, Sequence

from coordbench.clickhouse.connection import ClickHouseError, connect
from coordbench.clickhouse.rows import out_of_range
from coordbench.clickhouse.traces import Activity, ClickHouseTraces, check_trace_id
from coordbench.clickhouse.url import Shard, StoreUrl, parse_store_url
from coordbench.online.records import EvaluationRecord
from coordbench.spans import SpanData
from coordbench.store.base import (
    OUT_OF_RANGE,
    AddResult,
    Completeness,
    StoreStats,
    StoreUnavailableError,
    TraceSnapshot,
    TraceSummary,
    TraceWatcher,
    scoped_completeness,
)
from coordbench.store.encoded import EncodedSpan

__all__ = ["ClickHouseStore"]

logger = logging.getLogger(__name__)

_GIVE_UP = 3.0
"""Seconds a wait for a trace polls at most between looks (it starts at a tenth of a second)."""


class _Seen:
    __slots__ = ("evaluated", "last_growth", "last_start", "rows")

    def __init__(self, rows: int, last_start: int, last_growth: float) -> None:
        self.rows = rows
        self.last_start = last_start
        self.last_growth = last_growth
        self.evaluated = False


class ClickHouseStore:
    """Spans in ClickHouse (see the module's docs).

    Args:
        url: The store URL.
        encode: Makes a span read from the tables a stored span, as the receiver would have stored
            it (:func:`coordbench.otlp.encoded_span`): what online evaluation is handed.
        poll: Seconds between looks at the index table while online evaluation watches.
        window: Seconds of index rows each look reads (traces quiet longer than this are not watched).
        shard: The part of the traces this store's watcher is told of.
        evaluator_name: Written beside each evaluation (``Evaluator`` column): which receiver made it.
        clock: Monotonic clock.
    """

    max_spans = 0
    max_traces = 0
    max_bytes = 0

    def __init__(
        self,
        url: str | StoreUrl,
        *,
        encode: Callable[[SpanData], EncodedSpan],
        poll: float = 1.0,
        window: float = 300.0,
        shard: Shard | None = None,
        evaluator_name: str = "coordbench",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create the store; :meth:`check` or :meth:`open` connects.

        Raises:
            ValueError: If ``url`` is not a store URL.
        """
        self.url = url if isinstance(url, StoreUrl) else parse_store_url(url)
        self.encode = encode
        self.poll = poll
        self.window = window
        self.shard = shard or self.url.shard
        self.evaluator_name = evaluator_name
        self._clock = clock
        self._traces: ClickHouseTraces | None = None
        self._stats = StoreStats()
        self._watcher: TraceWatcher | None = None
        self._seen: dict[str, _Seen] = {}
        self._poller: asyncio.Task[None] | None = None
        self.polls = 0
        self.poll_failures = 0

    @property
    def traces(self) -> ClickHouseTraces:
        """The tables (after :meth:`open`)."""
        if self._traces is None:
            raise RuntimeError("the ClickHouse store is not open")
        return self._traces

    @property
    def blocking_reads(self) -> bool:
        """``True``: reads are queries."""
        return True

    # --- lifecycle -----------------------------------------------------------------------------

    def check(self) -> None:
        """Connect and make the evaluations table (and the exporter's, with ``create=true``) now.

        A server calls this before it serves, so a ClickHouse it cannot use stops it with the
        reason; :meth:`open` then keeps this connection.

        Raises:
            ClickHouseError: If ClickHouse cannot be reached or refuses the tables.
        """
        if self._traces is not None:
            return
        connection = connect(self.url)
        traces = ClickHouseTraces(connection)
        try:
            traces.ensure_schema()
        except ClickHouseError:
            connection.close()
            raise
        self._traces = traces

    async def open(self) -> None:
        """Connect as :meth:`check` does, unless it already has.

        Raises:
            ClickHouseError: If ClickHouse cannot be reached or refuses the tables.
        """
        await asyncio.to_thread(self.check)
        logger.info("trace store: ClickHouse at %s", self.url.shown)

    async def close(self) -> None:
        """Stop watching and disconnect."""
        self.watch(None)
        if self._traces is not None:
            traces, self._traces = self._traces, None
            await asyncio.to_thread(traces.connection.close)

    # --- writing -------------------------------------------------------------------------------

    def record_rejected(self, count: int, reasons: dict[str, int] | None = None) -> None:
        """Count spans the receiver refused before they reached :meth:`add`."""
        self._stats.received += count
        self._stats.rejected += count
        for reason, n in (reasons or {}).items():
            self._stats.rejected_reasons[reason] = self._stats.rejected_reasons.get(reason, 0) + n

    async def add(self, spans: Sequence[EncodedSpan]) -> AddResult:
        """Write a batch as the exporter would.

        Raises:
            StoreUnavailableError: ClickHouse refused it; the sender retries.
        """
        if not spans:
            return AddResult(0, 0)
        traces = self.traces
        count = len(spans)
        batch = list(spans)

        def write() -> int:
            decoded = [s.decode() for s in batch]
            kept = [s for s in decoded if not out_of_range(s)]
            traces.insert(kept)
            return len(decoded) - len(kept)

        try:  # decoded and written off the event loop: a large batch takes a while
            late = await asyncio.to_thread(write)
        except ClickHouseError as exc:
            logger.error("cannot write %d spans to ClickHouse: %s", count, exc)
            self._stats.received += count
            self._stats.rejected += count
            reasons = self._stats.rejected_reasons
            reasons["store_unavailable"] = reasons.get("store_unavailable", 0) + count
            raise StoreUnavailableError("ClickHouse refused the spans; retry later", retry_after=5.0) from exc
        if late:  # refused, counted and logged: ClickHouse's DateTime64(9) ends in 2262
            logger.warning("%d spans start (or hold an event) after 2262-04-11: ClickHouse cannot store them", late)
            self.record_rejected(late, {OUT_OF_RANGE: late})
        self._stats.received += count - late
        self._stats.stored += count - late
        return AddResult(count - late, 0)

    def write_evaluation(self, record: EvaluationRecord) -> None:
        """Put an online evaluation into the evaluations table (blocking)."""
        self.traces.write_evaluation(record, self.evaluator_name)
        seen = self._seen.get(record.trace_id)
        if seen is not None:
            seen.evaluated = True

    # --- watching ------------------------------------------------------------------------------

    def watch(self, watcher: TraceWatcher | None) -> None:
        """Tell ``watcher`` of traces whose index rows change, looking every :attr:`poll` seconds."""
        self._watcher = watcher
        if watcher is None:
            if self._poller is not None:
                self._poller.cancel()
                self._poller = None
            return
        if self._poller is None:
            self._poller = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        first = True
        while self._watcher is not None:
            try:
                found = await asyncio.to_thread(self.traces.activity, self.window, self.shard)
                done: set[str] = set()
                if first:
                    done = await asyncio.to_thread(self.traces.evaluated, [a.trace_id for a in found])
            except ClickHouseError as exc:
                self.poll_failures += 1
                logger.warning("cannot read the trace-id index table: %s", exc)
            else:
                self.polls += 1
                try:
                    self._saw(found, done)
                except Exception:  # never let one odd look stop the watch
                    logger.exception("online evaluation could not follow the index table's look")
                first = False
            await asyncio.sleep(self.poll)

    def _saw(self, found: list[Activity], done: set[str]) -> None:
        """Compare a look at the index table with the last: report growth, forget what left the window."""
        now = self._clock()
        watcher = self._watcher
        current = {a.trace_id for a in found}
        for gone in [t for t in self._seen if t not in current]:
            del self._seen[gone]
        for item in found:
            seen = self._seen.get(item.trace_id)
            if seen is None:
                seen = self._seen[item.trace_id] = _Seen(item.rows, item.last_start, now)
                if item.trace_id in done:  # evaluated before this process started: only new growth counts
                    seen.evaluated = True
                    continue
                if watcher is not None:
                    watcher.grown(bytes.fromhex(item.trace_id), item.rows, now)
                continue
            # A merge folds index rows together (fewer rows, not growth); an insert adds one, or moves the last start.
            grew = item.rows > seen.rows or item.last_start > seen.last_start
            if item.rows != seen.rows and not seen.evaluated:
                grew = True  # before its evaluation any change only postpones it: safe
            new_rows = max(1, item.rows - seen.rows)
            seen.rows, seen.last_start = item.rows, max(seen.last_start, item.last_start)
            if grew:
                seen.last_growth = now
                if watcher is not None:
                    watcher.grown(bytes.fromhex(item.trace_id), new_rows, now)
        self._stats.traces = len(self._seen)

    # --- reading -------------------------------------------------------------------------------

    def describe(self) -> dict[str, object]:
        """What ``GET /v1/stats`` shows under ``clickhouse``: the store, and the index table's watch."""
        return {
            "store": self.url.shown,
            "shard": str(self.shard),
            "polls": self.polls,
            "poll_failures": self.poll_failures,
            "watched": len(self._seen),
        }

    @property
    def stats(self) -> StoreStats:
        """Counters of what this process wrote and refused; ``traces``: those the watcher follows."""
        s = self._stats
        return StoreStats(
            received=s.received,
            stored=s.stored,
            rejected=s.rejected,
            traces=len(self._seen),
            rejected_reasons=dict(s.rejected_reasons),
        )

    def now(self) -> float:
        """The store's clock."""
        return self._clock()

    def __contains__(self, trace_id: str) -> bool:
        """Whether the watcher has seen the trace in the index table lately (no query)."""
        return trace_id.strip().lower() in self._seen

    def _idle(self, trace_id: str) -> float:
        seen = self._seen.get(trace_id)
        return max(0.0, self._clock() - seen.last_growth) if seen is not None else self.window

    def encoded(self, trace_id: bytes) -> tuple[list[EncodedSpan], float] | None:
        """The trace's spans (a query: call it off the event loop) and the seconds since it last grew."""
        return self.encoded_many([trace_id]).get(trace_id)

    def encoded_many(self, trace_ids: Sequence[bytes]) -> dict[bytes, tuple[list[EncodedSpan], float]]:
        """:meth:`encoded` of several traces, read in one query (what evaluation reads: no events or links)."""
        out: dict[bytes, tuple[list[EncodedSpan], float]] = {}
        for key, spans in self.traces.traces([t.hex() for t in trace_ids], for_evaluation=True).items():
            held: list[EncodedSpan] = []
            for span in spans:
                try:
                    held.append(self.encode(span))
                except ValueError as exc:
                    logger.warning("trace %s: span %s cannot be evaluated (%s); left out", key, span.span_id, exc)
            if held:
                out[bytes.fromhex(key)] = held, self._idle(key)
        return out

    def snapshot_builder(self, trace_id: str) -> Callable[[], TraceSnapshot] | None:
        """Reads the trace when called (off the event loop); an unknown trace gives an empty snapshot.

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
        """
        key = check_trace_id(trace_id)

        def build() -> TraceSnapshot:
            spans = self.traces.trace(key)
            return TraceSnapshot(key, *scoped_completeness(key, spans, self._idle(key)))

        return build

    async def wait_complete(
        self,
        trace_id: str,
        *,
        quiet: float = 2.0,
        timeout: float = 30.0,  # noqa: ASYNC109 - the store's own deadline
        open_spans: Collection[str] = (),
        within: str | None = None,
    ) -> TraceSnapshot:
        """Wait until the trace (or the subtree ``within``) is complete and its index rows unchanged for ``quiet``.

        ClickHouse tells no one when rows arrive, so this looks at the trace's index rows, a tenth
        of a second apart at first and up to three seconds apart while nothing changes.

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
        """
        key = check_trace_id(trace_id)
        traces = self.traces
        deadline = self._clock() + timeout
        last: tuple[int, int, int] | None = None
        changed = self._clock()
        pause = 0.1
        while True:
            bounds = await asyncio.to_thread(traces.bounds, key)
            now = self._clock()
            if bounds != last:
                last, changed, pause = bounds, now, 0.1
            quiet_now = bounds is not None and now - changed >= quiet
            if quiet_now or now >= deadline:
                if bounds is None:
                    return TraceSnapshot(key, [], Completeness(trace_id=key, span_count=0, timed_out=True))
                spans = await asyncio.to_thread(traces.trace, key)
                subtree, report = scoped_completeness(key, spans, now - changed, open_spans, within)
                if quiet_now and report.complete:
                    return TraceSnapshot(key, subtree, report)
                if now >= deadline:
                    return TraceSnapshot(key, subtree, dataclasses.replace(report, timed_out=True))
            wait = min(pause, max(0.0, deadline - now))
            if bounds is not None and now - changed < quiet:
                wait = min(wait, quiet - (now - changed))
            await asyncio.sleep(max(wait, 0.01))
            pause = min(pause * 2, _GIVE_UP)

    def list_traces(self, *, limit: int = 50, cursor: str | None = None) -> tuple[list[TraceSummary], str | None]:
        """Traces by latest span start, newest first (a query: the read API calls it off the event loop).

        Raises:
            ValueError: For a bad ``limit`` or ``cursor``.
        """
        if not 1 <= limit <= 1000:
            raise ValueError(f"limit must be between 1 and 1000, got {limit}")
        before = _parse_cursor(cursor) if cursor else None
        page = self.traces.recent(limit + 1, before)
        more = len(page) > limit
        page = page[:limit]
        if not page:
            return [], None
        first = min(p[1] for p in page)
        last = max(p[2] for p in page)
        details = self.traces.summaries([p[0] for p in page], first, last)
        out: list[TraceSummary] = []
        for trace_id, start, end in page:
            count, services, root = details.get(trace_id, (0, [], ""))
            out.append(
                TraceSummary(
                    trace_id=trace_id,
                    span_count=count,
                    services=tuple(services),
                    first_seen_unix_nano=start * 1_000_000_000,
                    last_growth_unix_nano=end * 1_000_000_000,
                    root=root or None,
                )
            )
        return out, (f"{page[-1][2]}.{page[-1][0]}" if more else None)


def _parse_cursor(cursor: str) -> tuple[int, str]:
    end, _, trace_id = cursor.partition(".")
    if not end.isdigit() or len(end) > 12:
        raise ValueError(f"bad cursor {cursor[:80]!r}: give the 'next' value of the previous page")
    try:
        return int(end), check_trace_id(trace_id)
    except ValueError as exc:
        raise ValueError(f"bad cursor {cursor[:80]!r}: give the 'next' value of the previous page") from exc
