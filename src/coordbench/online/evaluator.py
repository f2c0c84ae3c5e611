"""``OnlineEvaluator``: every trace that completes in the store is evaluated once, off the ingest path.

How a trace moves:

1. The store reports each growth (:class:`~coordbench.store.TraceWatcher`). The trace waits in
   growth order until it has been quiet for ``quiet`` seconds.
2. It then goes into a bounded queue. When the queue is full it is *skipped* and counted
   (``coordbench.traces.skipped{reason="queue_full"}``): ingest never waits for evaluation.
3. A worker copies its stored spans and evaluates them in a separate process (decoding,
   completeness, the evaluators: none of it holds the receivers' event loop or its GIL). A
   trace that is not complete yet (a client span whose callee's spans have not arrived) goes
   back to wait; once it has been quiet for ``settle`` seconds it is evaluated as it is, and
   the evaluation says it was incomplete. A trace with no A2A call is counted, not evaluated.
4. Spans arriving after the evaluation are counted (``coordbench.evaluation.late_spans``); the
   first time, the trace is re-evaluated once it is quiet again (revision 2); after that, late
   spans are only counted. A trace evicted before its evaluation is counted as skipped
   (``reason="evicted"``); an evaluation that fails or crashes its worker, as ``"failed"``.

The LLM judge takes part only when configured (``AGENTBEATS_LLM_API_KEY``), on the traces a
hash of the trace id picks (``judge_sample`` of them: every receiver and every re-run picks the
same ones), at most ``judge_per_minute``; the rule-based judge answers for the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from coordbench.meters import BackendMeters
from coordbench.online.events import EvaluationEvents
from coordbench.online.job import JobRequest, JobResult, may_hold_agent_calls, rows_of
from coordbench.online.records import EvaluationLog, EvaluationRecord, ScenarioSummary
from coordbench.online.schedule import Schedule
from coordbench.online.worker import WorkerDiedError, WorkerProcess, WorkerTimeoutError
from coordbench.store import SpanStore
from coordbench.store.encoded import EncodedSpan

__all__ = ["SKIP_REASONS", "OnlineEvaluator", "OnlineSettings", "judge_sampled"]

SKIP_REASONS = ("queue_full", "evicted", "failed", "timed_out")
"""Why a trace goes unevaluated (the ``reason`` of ``coordbench.traces.skipped``)."""

logger = logging.getLogger(__name__)

READ_BATCH = 32
"""Most traces a worker reads in one query from a database store (ClickHouse): its share of those waiting."""


def judge_sampled(trace_id: bytes, fraction: float) -> bool:
    """Whether the trace is in the judge's sample: the first 8 bytes of its id's SHA-256 below ``fraction``."""
    if fraction <= 0:
        return False
    if fraction >= 1:
        return True
    return int.from_bytes(hashlib.sha256(trace_id).digest()[:8], "big") < fraction * 2**64


class _Bucket:
    """A token bucket: ``per_minute`` tokens a minute, at most ``max(1, per_minute)`` saved up."""

    def __init__(self, per_minute: float, clock: Callable[[], float]) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, per_minute)
        self.tokens = self.capacity
        self.clock = clock
        self.at = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass(frozen=True)
class OnlineSettings:
    """How online evaluation runs: the receiver's ``COORDBENCH_EVALUATE_*`` settings.

    The defaults live in :class:`~coordbench.settings.Settings` alone; the app that mounts online
    evaluation makes these from it (:func:`coordbench.server.app.online_settings`).

    Attributes:
        quiet: Seconds without new spans after which a trace is looked at.
        settle: Seconds without new spans after which an incomplete trace is evaluated as it is.
        queue: Most traces waiting for a worker; more are skipped (and counted).
        workers: Evaluations at once, each in its own process.
        timeout: Seconds one evaluation may take; past it the worker is killed and the trace skipped.
        judge_sample: Share of traces the LLM judge sees (when one is configured).
        judge_per_minute: Most LLM judgements a minute.
        team_attribute: The root span's resource attribute that names a trace's team.
        nice: How much lower the worker processes' CPU priority is (a Unix nice increment, 0-19):
            evaluation is background work, so on a machine short of cores ingest goes first.
    """

    quiet: float
    settle: float
    queue: int
    workers: int
    timeout: float
    judge_sample: float
    judge_per_minute: float
    team_attribute: str
    nice: int


@dataclass
class _Counts:
    evaluated: int = 0
    reevaluated: int = 0
    incomplete_evaluated: int = 0
    incomplete_checks: int = 0
    without_agent_calls: int = 0
    late_spans: int = 0
    skipped: dict[str, int] = field(default_factory=dict[str, int])
    judged: int = 0
    judge_rate_limited: int = 0


class OnlineEvaluator:
    """Evaluates every completed trace of ``store`` (see the module docstring).

    Args:
        store: The trace store to watch.
        log: Where evaluations are kept.
        meters: Where their metrics go.
        settings: Quiet period, queue, workers, judge sample.
        events: Where ``gen_ai.evaluation.result`` events go (default: nowhere).
        judge_configured: Whether an LLM judge is configured (default: ``AGENTBEATS_LLM_API_KEY`` is set).
    """

    def __init__(
        self,
        store: SpanStore,
        log: EvaluationLog,
        meters: BackendMeters,
        settings: OnlineSettings,
        *,
        events: EvaluationEvents | None = None,
        judge_configured: bool | None = None,
    ) -> None:
        """Create the evaluator; :meth:`start` begins watching."""
        self.store = store
        self.log = log
        self.meters = meters
        self.settings = settings
        self.events = events
        if judge_configured is None:
            from coordbench.evals.config import JudgeConfig

            judge_configured = JudgeConfig.from_env().api_key is not None
        self.judge_configured = judge_configured
        self.counts = _Counts()
        self._bucket = _Bucket(self.settings.judge_per_minute, store.now)
        self.schedule = Schedule(self.settings.quiet)
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=self.settings.queue)
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._workers = [WorkerProcess(nice=self.settings.nice) for _ in range(self.settings.workers)]
        self._starting = False
        self._changed = asyncio.Event()  # set (and replaced) whenever a trace's evaluation ends or is skipped
        for reason in SKIP_REASONS:  # every series from the start: a counter first seen at 1 hides that increase
            meters.add("coordbench.traces.skipped", {"reason": reason}, 0)
        meters.queue_size = lambda: (self._queue.qsize(), self.settings.queue, self.schedule.pending)

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Watch the store (after it is open) and start the scheduler and workers."""
        self._starting = True
        try:
            self.store.watch(self)
        finally:
            self._starting = False
        self._tasks.append(asyncio.create_task(self._schedule(), name="online-evaluation-scheduler"))
        for n, worker in enumerate(self._workers):
            self._tasks.append(asyncio.create_task(self._work(worker), name=f"online-evaluation-worker-{n}"))

    async def stop(self) -> None:
        """Stop watching, cancel the tasks and end the worker processes."""
        self.store.watch(None)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await asyncio.gather(*(asyncio.to_thread(worker.stop) for worker in self._workers))
        if self.events is not None:
            await asyncio.to_thread(self.events.shutdown)

    # --- the store's reports (on the loop, cheap) ----------------------------------------------

    def grown(self, trace_id: bytes, new_spans: int, now: float) -> None:
        """Schedule the trace (or count late spans of an evaluated one)."""
        known: tuple[int, int] | None = None
        if self._starting:  # a trace loaded from durable storage: evaluated before, as it is now?
            record = self.log.get(trace_id.hex())
            if record is not None:
                known = (record.revision, record.span_count)
        grown = self.schedule.grown(trace_id, new_spans, now, known=known)
        if grown.late:
            self._count_late(trace_id, grown.late)
        if grown.wake:
            self._wake.set()

    def _count_late(self, trace_id: bytes, spans: int) -> None:
        self.counts.late_spans += spans
        record = self.log.get(trace_id.hex())
        team = self.meters.labels("team", record.team if record else "unknown")
        self.meters.add("coordbench.evaluation.late_spans", {"team": team}, spans)

    def dropped(self, trace_id: bytes, *, evicted: bool) -> None:
        """Forget the trace; an eviction before its evaluation is counted."""
        if self.schedule.dropped(trace_id, evicted=evicted):
            self._skip("evicted")

    def _skip(self, reason: str, traces: int = 1) -> None:
        self.counts.skipped[reason] = self.counts.skipped.get(reason, 0) + traces
        self.meters.add("coordbench.traces.skipped", {"reason": reason}, traces)
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    # --- scheduling -------------------------------------------------------------------------

    async def _schedule(self) -> None:
        while True:
            full = 0  # counted once a pass: under a burst, thousands of traces find the queue full at once
            for trace_id in self.schedule.due(self.store.now()):
                try:
                    self._queue.put_nowait(trace_id)
                except asyncio.QueueFull:
                    full += 1
                    continue
                self.schedule.queued(trace_id)
            if full:
                self._skip("queue_full", full)
            wait = self.schedule.next_wait(self.store.now())
            self._wake.clear()
            if wait is None:
                await self._wake.wait()
            elif wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)

    # --- evaluating -------------------------------------------------------------------------

    def worker_pids(self) -> list[int]:
        """The worker processes running now."""
        return [pid for pid in (w.pid for w in self._workers) if pid is not None]

    def _wants_judge(self, trace_id: bytes) -> bool:
        if not self.judge_configured or not judge_sampled(trace_id, self.settings.judge_sample):
            return False
        if self._bucket.take():
            self.counts.judged += 1
            return True
        self.counts.judge_rate_limited += 1
        self.meters.add("coordbench.judge.skipped")
        return False

    async def _work(self, worker: WorkerProcess) -> None:
        while True:
            batch = [await self._queue.get()]
            read: dict[bytes, tuple[list[EncodedSpan], float]] | None = None
            if self.store.blocking_reads:  # a database: the traces waiting are read in one query, off the loop
                # this worker's share of the queue, so the other workers are not left idle beside it
                share = min(READ_BATCH, -(-(self._queue.qsize() + 1) // len(self._workers)))
                while len(batch) < share and not self._queue.empty():
                    batch.append(self._queue.get_nowait())
                wanted = [t for t in batch if not self.schedule.gone(t)]
                try:
                    read = await asyncio.to_thread(self.store.encoded_many, wanted) if wanted else {}
                except Exception:  # each trace is read again on its own below, and fails there if it must
                    logger.exception("reading %d traces for online evaluation failed", len(wanted))
            for trace_id in batch:
                try:
                    await self._evaluate(trace_id, worker, read)
                except asyncio.CancelledError:
                    raise
                except Exception:  # never let one trace stop the worker
                    logger.exception("online evaluation of trace %s failed", trace_id.hex())
                    self._skip("failed")
                finally:
                    if self.schedule.finished(trace_id):
                        self._wake.set()
                    self._notify()

    async def _evaluate(
        self, trace_id: bytes, worker: WorkerProcess, read: dict[bytes, tuple[list[EncodedSpan], float]] | None = None
    ) -> None:
        if self.schedule.gone(trace_id):
            return
        if read is not None:  # read with the traces queued beside it
            held = read.get(trace_id)
        elif self.store.blocking_reads:  # a database read: off the loop
            held = await asyncio.to_thread(self.store.encoded, trace_id)
        else:
            held = self.store.encoded(trace_id)
        if held is None:
            self._skip("evicted")
            return
        spans, idle = held
        self.schedule.started(trace_id)
        asked = self.store.now()
        rows = await asyncio.to_thread(rows_of, spans)  # off the loop: a large trace's copy takes a while
        if not may_hold_agent_calls(rows):
            await self._record(trace_id, JobResult("no_agent_calls", len(rows)), last_growth=asked - idle, judge=False)
            return
        request = JobRequest(
            trace_id=trace_id.hex(),
            rows=[],
            idle_seconds=idle,
            settle=self.settings.settle,
            judge=self._wants_judge(trace_id),
            team_attribute=self.settings.team_attribute,
        )
        try:
            result = await asyncio.to_thread(worker.call, request, rows, self.settings.timeout)
        except WorkerTimeoutError:
            logger.warning(
                "the evaluation of trace %s took over %g s: its worker was killed",
                trace_id.hex(),
                self.settings.timeout,
            )
            self._skip("timed_out")
            return
        except WorkerDiedError as exc:
            logger.error("the evaluation worker died evaluating trace %s (%s); a new one starts", trace_id.hex(), exc)
            self._skip("failed")
            return
        if self.schedule.gone(trace_id):
            return
        await self._record(trace_id, result, last_growth=asked - idle, judge=request.judge)

    async def _record(self, trace_id: bytes, result: JobResult, *, last_growth: float, judge: bool) -> None:
        if result.outcome == "incomplete":
            self.counts.incomplete_checks += 1
            if self.schedule.recheck(trace_id, last_growth + self.settings.settle):
                self._wake.set()
            return
        if result.outcome == "no_agent_calls":
            self.counts.without_agent_calls += 1
            self.meters.add("coordbench.traces.without_agent_calls")
            return
        revision, missed = self.schedule.evaluated(trace_id, result.span_count)
        if missed:  # spans that came while this evaluation ran: it did not see them
            self._count_late(trace_id, missed)
        self.counts.evaluated += 1
        self.counts.reevaluated += revision > 1
        self.counts.incomplete_evaluated += not result.complete
        record = EvaluationRecord(
            trace_id=trace_id.hex(),
            team=result.team,
            evaluated_unix_nano=time.time_ns(),
            span_count=result.span_count,
            complete=result.complete,
            revision=revision,
            late_spans=self.schedule.late(trace_id),
            judge=judge,
            scenarios=tuple(
                ScenarioSummary(
                    f.scenario,
                    f.score,
                    f.passed,
                    f.answer_quality,
                    f.coordination_quality,
                    f.fired,
                    *(f.blamed or (None, None)),
                )
                for f in result.figures
            ),
            line=result.line,
        )
        await asyncio.to_thread(self.log.put, record)
        self.meters.evaluated(
            result.team,
            result.figures,
            revision=revision,
            since_last_span=max(0.0, self.store.now() - last_growth),
            run=result.seconds,
        )
        if self.events is not None:
            self.events.emit(record.trace_id, result.root_span_id, result.events)

    async def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:  # noqa: ASYNC109 - its own deadline
        """Wait until ``done()`` holds, checked each time an evaluation ends or a trace is skipped.

        Returns:
            Whether it held before ``timeout`` seconds passed.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not done():
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=left)
        return True

    def describe(self) -> dict[str, object]:
        """The counters, as ``GET /v1/stats`` shows them under ``evaluations``."""
        c = self.counts
        return {
            "evaluated": c.evaluated,
            "reevaluated": c.reevaluated,
            "evaluated_incomplete": c.incomplete_evaluated,
            "found_incomplete": c.incomplete_checks,
            "without_agent_calls": c.without_agent_calls,
            "late_spans": c.late_spans,
            "skipped": dict(sorted(c.skipped.items())),
            "judged": c.judged,
            "judge_rate_limited": c.judge_rate_limited,
            "queued": self._queue.qsize(),
            "pending": self.schedule.pending,
            "kept": len(self.log),
            "unsaved": self.log.unsaved,
            "unexported": self.log.unexported,
        }
