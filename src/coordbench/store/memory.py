"""``TraceStore``: spans grouped by trace, bounded, optionally durable.

All methods run on the event loop that serves the receivers; durable writes run on one
worker thread, and a batch is acknowledged only once it is written.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import dataclasses
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor

from coordbench import semconv
from coordbench.spans import SpanData
from coordbench.store.base import (
    FULL,
    TOO_LARGE,
    UNWRITTEN,
    AddResult,
    BatchTooLargeError,
    Completeness,
    Persistence,
    StoreFullError,
    StoreStats,
    StoreUnavailableError,
    TraceSnapshot,
    TraceSummary,
    TraceWatcher,
    completeness_of,
    scoped_completeness,
)
from coordbench.store.encoded import EncodedSpan
from coordbench.store.sizes import Grouper, group_by_trace, held_bytes

__all__ = ["AddResult", "TraceStore", "TraceWatcher"]

logger = logging.getLogger(__name__)


class _Trace:
    __slots__ = (
        "_grew",
        "decoded",
        "first_seen",
        "held",
        "keys",
        "last_growth",
        "last_growth_wall",
        "seq",
        "spans",
        "trace_id",
    )

    def __init__(
        self, trace_id: bytes, now: float, wall: int, seq: int, spans: dict[bytes, EncodedSpan] | None = None
    ) -> None:
        self.trace_id = trace_id
        self.seq = seq  # creation order: the listing's order and cursor
        self.held = 0  # approximate bytes its spans take (held_bytes)
        self.spans: dict[bytes, EncodedSpan] = {} if spans is None else spans
        self.keys: list[int] = []
        self.decoded: dict[bytes, SpanData] = {}
        self.first_seen = wall
        self.last_growth = now
        self.last_growth_wall = wall
        self._grew: asyncio.Event | None = None  # made on first wait: an Event per trace costs at ingest

    @property
    def grew(self) -> asyncio.Event:
        """Set when spans are added (created lazily, for waiters)."""
        if self._grew is None:
            self._grew = asyncio.Event()
        return self._grew

    def notify(self) -> None:
        if self._grew is not None:
            self._grew.set()

    def decode_new(self) -> None:
        """Decode the spans that arrived since the last call (each span is decoded once).

        Spans are only ever added to a trace, and decoded in arrival order, so the new ones are
        those after the first ``len(decoded)``.
        """
        decoded = self.decoded
        if len(decoded) != len(self.spans):
            for span_id, encoded in itertools.islice(self.spans.items(), len(decoded), None):
                decoded[span_id] = encoded.decode()

    def span_data(self) -> list[SpanData]:
        self.decode_new()
        return sorted(self.decoded.values(), key=start_order)


def start_order(span: SpanData) -> int:
    """Sort key: start time, then span id, packed in one integer.

    The same order as ``(start, span_id)`` for the store's spans (their ids are 16 lower-case
    hex digits), but one int comparison instead of a tuple's: sorting many spans holds the GIL
    about a third as long, which matters when a read runs beside the receivers' loop.
    """
    return (span.start_time_unix_nano << 64) | int(span.span_id, 16)


def _trace_key(trace_id: str) -> bytes:
    try:
        raw = bytes.fromhex(trace_id)
    except ValueError:
        raise ValueError(f"trace id must be 32 hex digits, got {trace_id!r}") from None
    if len(raw) != 16:
        raise ValueError(f"trace id must be 32 hex digits, got {trace_id!r}")
    return raw


class TraceStore:
    """Spans grouped by trace id.

    Args:
        max_spans: Most spans held at once.
        max_traces: Most traces held at once.
        max_bytes: Most memory the held spans may take, approximately
            (:func:`~coordbench.store.sizes.held_bytes`): large spans (captured prompts, say) reach
            it before ``max_spans`` does.
        evict_after: Seconds without growth after which a trace counts as finished and may be
            evicted (least recently grown first) to make room. Unfinished traces are never
            evicted: when nothing can go, :meth:`add` raises :class:`StoreFullError` and the
            receiver answers 503 with ``Retry-After``.
        persistence: Durable storage (``None``: memory only, the default).
        clock: Monotonic clock (seconds), replaceable in tests.
        sleep: How :meth:`wait_complete` waits out a quiet period or its deadline (default
            ``asyncio.sleep``); a test gives one that advances its ``clock``, so waits take no time.
        grouper: A faster grouping of each batch by trace (the C extension's
            :func:`coordbench.otlp.native.group`, which the servers pass); ``None``: Python's.
    """

    def __init__(
        self,
        *,
        max_spans: int = 1_000_000,
        max_traces: int = 100_000,
        max_bytes: int = 1 << 30,
        evict_after: float = 60.0,
        persistence: Persistence | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        grouper: Grouper | None = None,
    ) -> None:
        """Create an empty store; call :meth:`open` before use when ``persistence`` is given."""
        if max_spans < 1 or max_traces < 1 or max_bytes < 1:
            raise ValueError("max_spans, max_traces and max_bytes must be at least 1")
        self.max_spans = max_spans
        self.max_traces = max_traces
        self.max_bytes = max_bytes
        self.evict_after = evict_after
        self._persistence = persistence
        self._clock = clock
        self._sleep = sleep
        self._grouper = grouper
        self._traces: OrderedDict[bytes, _Trace] = OrderedDict()  # least recently grown first
        self._created: dict[bytes, _Trace] = {}  # oldest first: the listing walks it backwards, no sort
        self._seq = 0
        self._span_count = 0
        self._byte_count = 0
        self._stats = StoreStats()
        self._lock = asyncio.Lock()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trace-store") if persistence else None
        self._any_growth = asyncio.Event()
        self._watcher: TraceWatcher | None = None

    def watch(self, watcher: TraceWatcher | None) -> None:
        """Tell ``watcher`` of every trace that grows or goes from now on (``None``: stop).

        Traces already held (loaded from durable storage, say) are reported as grown at once.
        """
        self._watcher = watcher
        if watcher is not None:
            for trace_id, trace in self._traces.items():
                watcher.grown(trace_id, len(trace.spans), trace.last_growth)

    # --- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> None:
        """Load what the persistence holds (no-op in memory mode)."""
        if self._persistence is None or self._writer is None:
            return
        persistence = self._persistence
        loaded = await asyncio.get_running_loop().run_in_executor(self._writer, lambda: list(persistence.load()))
        now = self._clock()
        for item in loaded:
            span = item.span
            trace = self._traces.get(span.trace_id)
            if trace is None:
                trace = self._new_trace(span.trace_id, now, item.received_unix_nano)
            if span.span_id in trace.spans:
                continue
            trace.spans[span.span_id] = span
            trace.keys.append(item.key)
            trace.last_growth_wall = max(trace.last_growth_wall, item.received_unix_nano)
            size = held_bytes(span)
            trace.held += size
            self._byte_count += size
            self._span_count += 1
        if loaded:
            logger.info("trace store loaded %d spans in %d traces", self._span_count, len(self._traces))

    async def close(self) -> None:
        """Close the persistence."""
        if self._persistence is not None and self._writer is not None:
            await asyncio.get_running_loop().run_in_executor(self._writer, self._persistence.close)
            self._writer.shutdown(wait=True)

    # --- writing -----------------------------------------------------------------------------

    def record_rejected(self, count: int, reasons: dict[str, int] | None = None) -> None:
        """Count spans the receiver refused before they reached :meth:`add` (malformed)."""
        self._stats.received += count
        self._stats.rejected += count
        for reason, n in (reasons or {}).items():
            self._stats.rejected_reasons[reason] = self._stats.rejected_reasons.get(reason, 0) + n

    def _evict_for(
        self, spans_needed: int, traces_needed: int, bytes_needed: int, keep: Collection[bytes] = ()
    ) -> None:
        """Evict the least recently grown idle traces until the batch fits (never one in ``keep``)."""
        if spans_needed > self.max_spans or traces_needed > self.max_traces or bytes_needed > self.max_bytes:
            raise BatchTooLargeError(
                f"the batch (spans {spans_needed}, new traces {traces_needed}, ~{bytes_needed} bytes) is larger "
                f"than the whole trace store (max_spans {self.max_spans}, max_traces {self.max_traces}, "
                f"max_bytes {self.max_bytes})"
            )
        now = self._clock()
        while (
            self._span_count + spans_needed > self.max_spans
            or len(self._traces) + traces_needed > self.max_traces
            or self._byte_count + bytes_needed > self.max_bytes
        ):
            # the traces the batch adds to stay: their spans were just counted as already stored
            trace_id, trace = next(((k, t) for k, t in self._traces.items() if k not in keep), (None, None))
            if trace_id is None or trace is None or now - trace.last_growth < self.evict_after:
                retry = 1.0 if trace is None else max(1.0, self.evict_after - (now - trace.last_growth))
                raise StoreFullError(
                    f"trace store is full ({self._span_count} of {self.max_spans} spans, "
                    f"{len(self._traces)} of {self.max_traces} traces, ~{self._byte_count} of {self.max_bytes} "
                    f"bytes) and no trace has been idle for {self.evict_after:g} s",
                    retry_after=min(retry, 30.0),
                )
            self._drop(trace_id, trace, evicted=True)

    def _new_trace(
        self, trace_id: bytes, now: float, wall: int, spans: dict[bytes, EncodedSpan] | None = None
    ) -> _Trace:
        self._seq += 1
        trace = self._traces[trace_id] = self._created[trace_id] = _Trace(trace_id, now, wall, self._seq, spans)
        return trace

    def _drop(self, trace_id: bytes, trace: _Trace, *, evicted: bool) -> None:
        del self._traces[trace_id]
        del self._created[trace_id]
        self._span_count -= len(trace.spans)
        self._byte_count -= trace.held
        if evicted:
            self._stats.evicted += len(trace.spans)
        if self._watcher is not None:
            self._watcher.dropped(trace_id, evicted=evicted)
        if trace.keys and self._persistence is not None and self._writer is not None:
            self._writer.submit(self._persistence.delete, list(trace.keys))

    async def add(self, spans: Sequence[EncodedSpan]) -> AddResult:
        """Store a batch: all of it, or (when full) none of it.

        Spans already stored (same trace and span id) are accepted and kept once.

        Raises:
            StoreFullError: Nothing can be evicted to make room; the whole batch is refused
                (and counted as rejected), so a retry loses nothing.
            BatchTooLargeError: The batch alone exceeds a bound; it is refused (and counted
                as rejected) and a retry would fail the same way.
        """
        async with self._lock:
            traces = self._traces
            # One dict per trace, first copy of each span id kept (in C for OTLP/protobuf batches:
            # this runs for every span the receivers take); then the spans already stored go.
            groups, sizes = group_by_trace(spans, self._grouper)
            new_traces = 0
            growing: list[bytes] = []
            for trace_id, group in groups.items():
                trace = traces.get(trace_id)
                if trace is None:
                    new_traces += 1
                    continue
                growing.append(trace_id)
                for span_id in group.keys() & trace.spans.keys():
                    sizes[trace_id] -= held_bytes(group.pop(span_id))
                if not group:
                    del sizes[trace_id]
            count = sum(map(len, groups.values()))
            duplicates = len(spans) - count
            self._stats.received += len(spans)
            try:
                self._evict_for(count, new_traces, sum(sizes.values()), keep=frozenset(growing))
            except (StoreFullError, BatchTooLargeError) as exc:
                reason = FULL if isinstance(exc, StoreFullError) else TOO_LARGE
                self._stats.rejected += len(spans)
                self._stats.rejected_reasons[reason] = self._stats.rejected_reasons.get(reason, 0) + len(spans)
                raise
            keys: list[int] = []
            if count and self._persistence is not None and self._writer is not None:
                persistence, wall = self._persistence, time.time_ns()
                new = [span for group in groups.values() for span in group.values()]
                try:
                    keys = await asyncio.get_running_loop().run_in_executor(self._writer, persistence.append, new, wall)
                except Exception as exc:  # a full disk, a file size limit, a read-only file system...
                    logger.warning("durable trace storage failed; the batch is refused (503): %s", exc)
                    self._stats.rejected += len(spans)
                    reason = UNWRITTEN
                    self._stats.rejected_reasons[reason] = self._stats.rejected_reasons.get(reason, 0) + len(spans)
                    raise StoreUnavailableError(f"durable trace storage failed: {exc}") from exc
            self._insert(groups, keys, sizes)
            self._stats.stored += len(spans)
            self._stats.duplicates += duplicates
            return AddResult(stored=count, duplicates=duplicates)

    def _insert(
        self, groups: dict[bytes, dict[bytes, EncodedSpan]], keys: Sequence[int], sizes: dict[bytes, int]
    ) -> None:
        """Add each trace's new spans (``keys``: their persistence keys in the same order, if durable)."""
        now, wall = self._clock(), time.time_ns()
        traces = self._traces
        watcher = self._watcher
        offset = 0
        for trace_id, group in groups.items():
            if not group:
                continue
            trace = traces.get(trace_id)
            if trace is None:
                trace = self._new_trace(trace_id, now, wall, group)  # the batch's dict becomes the trace's
            else:
                trace.spans.update(group)
            trace.held += sizes[trace_id]
            self._span_count += len(group)
            self._byte_count += sizes[trace_id]
            if keys:
                trace.keys.extend(keys[offset : offset + len(group)])
                offset += len(group)
            trace.last_growth, trace.last_growth_wall = now, wall
            traces.move_to_end(trace_id)
            trace.notify()
            if watcher is not None:
                watcher.grown(trace_id, len(group), now)
        if sizes:
            self._any_growth.set()

    async def delete(self, trace_id: str) -> bool:
        """Drop a trace (for example after it has been evaluated); ``False`` if unknown."""
        key = _trace_key(trace_id)
        async with self._lock:
            trace = self._traces.get(key)
            if trace is None:
                return False
            self._drop(key, trace, evicted=False)
            return True

    # --- reading -----------------------------------------------------------------------------

    @property
    def blocking_reads(self) -> bool:
        """``False``: every read is of memory, on the event loop."""
        return False

    @property
    def stats(self) -> StoreStats:
        """A copy of the counters."""
        s = self._stats
        return dataclasses.replace(
            s,
            spans=self._span_count,
            traces=len(self._traces),
            bytes=self._byte_count,
            rejected_reasons=dict(s.rejected_reasons),
        )

    def __contains__(self, trace_id: str) -> bool:
        """Whether the trace is stored (a malformed id is simply not)."""
        try:
            return _trace_key(trace_id) in self._traces
        except ValueError:
            return False

    def get(self, trace_id: str) -> TraceSnapshot | None:
        """The trace's spans and completeness, or ``None`` if unknown.

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
        """
        build = self.snapshot_builder(trace_id)
        return build() if build is not None else None

    def snapshot_builder(self, trace_id: str) -> Callable[[], TraceSnapshot] | None:
        """What :meth:`get` returns, as a function to run on another thread (or ``None`` if unknown).

        The trace's spans are copied now, on the store's loop; decoding them and working out
        the completeness, the slow part for a large trace, happen when the function runs and
        touch nothing the loop changes. Spans decoded this way are not cached in the store, so
        reading a trace does not grow the store's memory.

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
        """
        trace = self._traces.get(_trace_key(trace_id))
        if trace is None:
            return None
        encoded = list(trace.spans.values())
        decoded = dict(trace.decoded)
        hex_id = trace.trace_id.hex()
        idle = max(0.0, self._clock() - trace.last_growth)

        def build() -> TraceSnapshot:
            spans = [decoded.get(span.span_id) or span.decode() for span in encoded]
            spans.sort(key=start_order)
            return TraceSnapshot(trace_id.lower(), spans, completeness_of(hex_id, spans, idle))

        return build

    def now(self) -> float:
        """The store's clock (monotonic seconds): the time :class:`TraceWatcher` calls are given in."""
        return self._clock()

    def encoded(self, trace_id: bytes) -> tuple[list[EncodedSpan], float] | None:
        """A copy of the trace's spans as stored, and the seconds since it last grew (``None``: not held).

        For a reader that decodes them elsewhere (online evaluation, in its worker process).
        """
        trace = self._traces.get(trace_id)
        if trace is None:
            return None
        return list(trace.spans.values()), max(0.0, self._clock() - trace.last_growth)

    def encoded_many(self, trace_ids: Sequence[bytes]) -> dict[bytes, tuple[list[EncodedSpan], float]]:
        """:meth:`encoded` of each trace held."""
        out: dict[bytes, tuple[list[EncodedSpan], float]] = {}
        for trace_id in trace_ids:
            held = self.encoded(trace_id)
            if held is not None:
                out[trace_id] = held
        return out

    def _scoped(
        self, trace: _Trace, open_spans: Collection[str], within: str | None
    ) -> tuple[list[SpanData], Completeness]:
        idle = max(0.0, self._clock() - trace.last_growth)
        return scoped_completeness(trace.trace_id.hex(), trace.span_data(), idle, open_spans, within)

    async def wait_complete(
        self,
        trace_id: str,
        *,
        quiet: float = 2.0,
        timeout: float = 30.0,  # noqa: ASYNC109 - the store's own deadline
        open_spans: Collection[str] = (),
        within: str | None = None,
    ) -> TraceSnapshot:
        """Wait until the trace is complete and has not grown for ``quiet`` seconds.

        Args:
            trace_id: The trace (32 hex digits).
            quiet: Seconds without new spans that make a complete trace final.
            timeout: Seconds to wait at most.
            open_spans: Span ids still running by design (the caller's own enclosing span):
                their children do not count as orphans.
            within: Only the subtree under this span id matters: its spans are returned, and
                it is complete when it has no unmatched client span and no loose span (one
                hanging from a parent not yet arrived) could still belong to it. For one
                scenario of a longer assessment, say.

        Returns:
            The snapshot; if the deadline passed first, its completeness says
            ``timed_out=True`` and what is missing (the spans so far are still returned).

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
        """
        key = _trace_key(trace_id)
        deadline = self._clock() + timeout
        while True:
            trace = self._traces.get(key)
            now = self._clock()
            if trace is not None:
                # Completeness is worked out only once the trace has been quiet: doing it on every
                # batch re-sorted and re-scanned the whole trace each time (quadratic in its size).
                # Spans are still decoded as they arrive, so the final snapshot is cheap.
                trace.decode_new()
                idle = now - trace.last_growth
                wake: asyncio.Event | None = None
                if idle < quiet:
                    wait = quiet - idle  # growth only moves the quiet point: sleep until it, then look
                else:
                    spans, report = self._scoped(trace, open_spans, within)
                    if report.complete:
                        return TraceSnapshot(trace_id.lower(), spans, report)
                    wake = trace.grew  # quiet but incomplete: wait for the missing spans
                    wake.clear()
                    wait = deadline - now
            else:
                wake = self._any_growth
                wake.clear()
                wait = deadline - now
            wait = min(wait, deadline - now)
            if wait <= 0:
                if trace is None:
                    empty = Completeness(trace_id=trace_id.lower(), span_count=0, timed_out=True)
                    return TraceSnapshot(trace_id.lower(), [], empty)
                spans, report = self._scoped(trace, open_spans, within)
                return TraceSnapshot(trace_id.lower(), spans, dataclasses.replace(report, timed_out=True))
            await self._wait(wake, wait)

    async def _wait(self, wake: asyncio.Event | None, seconds: float) -> None:
        """Wait ``seconds`` (on :attr:`_sleep`'s time), or until ``wake`` is set, whichever comes first."""
        if wake is None:
            await self._sleep(seconds)
            return
        if self._sleep is asyncio.sleep:  # the loop's own clock: one timer, no extra task
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=seconds)
            return
        woken, slept = asyncio.ensure_future(wake.wait()), asyncio.ensure_future(self._sleep(seconds))
        try:
            await asyncio.wait({woken, slept}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (woken, slept):
                task.cancel()

    def list_traces(self, *, limit: int = 50, cursor: str | None = None) -> tuple[list[TraceSummary], str | None]:
        """Traces, newest first, a page at a time.

        Args:
            limit: Page size (1 to 1000).
            cursor: The ``next`` cursor of the previous page.

        Returns:
            The page and the cursor of the next one (``None`` at the end).

        Raises:
            ValueError: For a bad ``limit`` or ``cursor``.
        """
        if not 1 <= limit <= 1000:
            raise ValueError(f"limit must be between 1 and 1000, got {limit}")
        after = _parse_cursor(cursor) if cursor else None
        page: list[TraceSummary] = []
        last_seq = 0
        for trace in reversed(self._created.values()):  # newest first, without sorting every trace
            if after is not None and trace.seq >= after:
                continue
            if len(page) == limit:
                return page, _make_cursor(last_seq)
            last_seq = trace.seq
            services = sorted(
                {
                    str(v)
                    for s in trace.spans.values()
                    if (v := s.envelope.resource.get(semconv.SERVICE_NAME)) is not None
                }
            )
            root, assessment, scenarios = _describe_roots(trace)
            page.append(
                TraceSummary(
                    trace_id=trace.trace_id.hex(),
                    span_count=len(trace.spans),
                    services=tuple(services),
                    first_seen_unix_nano=trace.first_seen,
                    last_growth_unix_nano=trace.last_growth_wall,
                    root=root,
                    assessment_id=assessment,
                    scenarios=scenarios,
                )
            )
        return page, None


_LISTED_CHILDREN = 100
"""Root spans, and children of the root, read per listed trace (an assessment's scenario spans): bounded work."""


def _describe_roots(trace: _Trace) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The root span's name, and the assessment and scenario ids an assessor's trace records."""
    roots = list(itertools.islice((s for s in trace.spans.values() if not s.parent_span_id), _LISTED_CHILDREN))
    if not roots:
        return None, None, ()
    try:
        top = min((r.decode() for r in roots), key=lambda r: (r.start_time_unix_nano, r.span_id))
    except (KeyError, ValueError):
        return None, None, ()
    assessment = top.attribute_str(semconv.COORDBENCH_ASSESSMENT_ID)
    scenarios: list[str] = []
    if assessment is not None:
        parent = bytes.fromhex(top.span_id)
        children = [s for s in trace.spans.values() if s.parent_span_id == parent][:_LISTED_CHILDREN]
        for child in children:
            with contextlib.suppress(KeyError, ValueError):
                scenario = child.decode().attribute_str(semconv.COORDBENCH_SCENARIO_ID)
                if scenario is not None:
                    scenarios.append(scenario)
    return top.name, assessment, tuple(sorted(scenarios))


def _make_cursor(seq: int) -> str:
    """An opaque cursor: the creation number of the last trace listed (it survives evictions)."""
    return base64.urlsafe_b64encode(f"v2:{seq}".encode()).decode().rstrip("=")


def _parse_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        version, seq = raw.split(":", 1)
        if version != "v2" or not seq.isdigit():
            raise ValueError(cursor)
        return int(seq)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ValueError(f"invalid cursor {cursor!r}") from None
