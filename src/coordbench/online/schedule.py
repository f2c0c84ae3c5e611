"""When each trace is due for online evaluation: the scheduling state, apart from processes, queues and clocks.

:class:`Schedule` is pure bookkeeping: every method takes the time it is asked at (the store's
clock) and answers what the caller should do (evaluate these traces, wake the scheduler, count
these late spans, count an eviction). :class:`~coordbench.online.evaluator.OnlineEvaluator` owns
the queue, the worker processes and the metrics, and asks this module each decision, so the
rules below are tested with a hand-moved clock (``tests/online/test_schedule.py``).

- A trace is **growing** from each report of new spans until it has been quiet for ``quiet``
  seconds; it is then **due**. Growing traces are kept in the order they last grew, so finding
  the due ones stops at the first that is not.
- A trace found incomplete is **rechecked** at a set time (its last growth plus ``settle``), on a
  heap; a newer recheck, or new growth, supersedes an older one.
- A trace **queued** or being evaluated that grows again is due again once that evaluation ends
  (if its quiet period has passed meanwhile), not evaluated twice at once.
- Spans that arrive after the spans an evaluation was made of are **late**: counted; the first
  time, the trace is evaluated again once quiet (revision 2); after that they are only counted.
- A trace **dropped** (evicted) while waiting and never evaluated is counted as skipped.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["Grown", "Schedule"]

LAST_REVISION = 2
"""A trace is evaluated at most this many times: once complete, and once more if late spans came."""


@dataclass(frozen=True)
class Grown:
    """What a report of new spans asks of the caller.

    Attributes:
        late: Spans that came after an evaluation of the trace (to count).
        wake: The scheduler has a trace to watch it did not have (wake it).
    """

    late: int = 0
    wake: bool = False


_NOTHING = Grown()
_WAKE = Grown(wake=True)


class Schedule:
    """The scheduling state of online evaluation (see the module docstring).

    Args:
        quiet: Seconds without new spans after which a trace is due.
    """

    def __init__(self, quiet: float) -> None:
        """An empty schedule."""
        self.quiet = quiet
        self._growing: OrderedDict[bytes, float] = OrderedDict()  # trace -> last growth, oldest first
        self._rechecks: dict[bytes, float] = {}  # incomplete traces -> when to look again
        self._heap: list[tuple[float, bytes]] = []  # the rechecks by time (superseded entries are skipped)
        self._queued: set[bytes] = set()  # queued or being evaluated
        self._running: set[bytes] = set()  # their spans were copied for an evaluation that has not ended
        self._running_late: dict[bytes, int] = {}  # spans that came after that copy
        self._again: dict[bytes, float] = {}  # grew while queued or being evaluated -> when it last grew
        self._gone: set[bytes] = set()  # dropped while queued (already counted)
        self._revision: dict[bytes, tuple[int, int]] = {}  # evaluated traces -> (revision, span count)
        self._late: dict[bytes, int] = {}  # evaluated traces -> late spans so far

    # --- what the store reports ----------------------------------------------------------------

    def grown(self, trace_id: bytes, new_spans: int, now: float, *, known: tuple[int, int] | None = None) -> Grown:
        """The trace got ``new_spans`` spans at ``now``.

        Args:
            trace_id: The trace.
            new_spans: How many.
            now: When.
            known: (revision, span count) of an evaluation kept from before a restart: spans up to
                that count were judged already, the rest are late.
        """
        if known is not None and known[1] <= new_spans:
            self._revision[trace_id] = known
            new_spans -= known[1]
            if not new_spans:
                return _NOTHING
        late = 0
        done = self._revision.get(trace_id)
        if done is None and trace_id in self._running:  # after the spans being judged: late if that evaluation lands
            self._running_late[trace_id] = self._running_late.get(trace_id, 0) + new_spans
        elif done is not None:  # after the spans it was judged on
            late = new_spans
            self._late[trace_id] = self._late.get(trace_id, 0) + new_spans
            if done[0] >= LAST_REVISION:
                return Grown(late=late)
        if trace_id in self._queued:
            self._again[trace_id] = now
        self._growing[trace_id] = now
        self._growing.move_to_end(trace_id)
        self._rechecks.pop(trace_id, None)
        wake = len(self._growing) == 1
        if not late:  # the common case: no object made for each report
            return _WAKE if wake else _NOTHING
        return Grown(late=late, wake=wake)

    def dropped(self, trace_id: bytes, *, evicted: bool) -> bool:
        """Forget the trace; whether it counts as skipped (evicted while waiting, never evaluated)."""
        waiting = self._growing.pop(trace_id, None) is not None
        waiting = self._rechecks.pop(trace_id, None) is not None or waiting
        if trace_id in self._queued:
            waiting = True
            self._gone.add(trace_id)
        evaluated = trace_id in self._revision
        self._revision.pop(trace_id, None)
        self._late.pop(trace_id, None)
        self._running.discard(trace_id)
        self._running_late.pop(trace_id, None)
        self._again.pop(trace_id, None)
        return evicted and waiting and not evaluated

    # --- what is due ---------------------------------------------------------------------------

    def due(self, now: float) -> list[bytes]:
        """The traces to evaluate now: quiet long enough, or at their recheck, and neither queued nor done."""
        ready: list[bytes] = []
        for trace_id in self._quiet_or_rechecked(now):
            if self._revision.get(trace_id, (0, 0))[0] >= LAST_REVISION:
                continue  # re-evaluated once already (it grew during that evaluation): late spans are only counted
            if trace_id in self._queued:  # still being evaluated: looked at again once that ends
                self._again.setdefault(trace_id, now)
                continue
            ready.append(trace_id)
        return ready

    def _quiet_or_rechecked(self, now: float) -> list[bytes]:
        found: list[bytes] = []
        growing = self._growing
        while growing:
            trace_id, grew = next(iter(growing.items()))
            if grew + self.quiet > now:
                break
            growing.popitem(last=False)
            found.append(trace_id)
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, trace_id = heapq.heappop(heap)
            if self._rechecks.get(trace_id) == at:
                del self._rechecks[trace_id]
                found.append(trace_id)
        return found

    def next_wait(self, now: float) -> float | None:
        """Seconds until the next trace may be due (``None``: nothing to wait for)."""
        times: list[float] = []
        if self._growing:
            times.append(next(iter(self._growing.values())) + self.quiet)
        while self._heap and self._rechecks.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)  # superseded
        if self._heap:
            times.append(self._heap[0][0])
        return max(0.0, min(times) - now) if times else None

    def recheck(self, trace_id: bytes, at: float) -> bool:
        """Look at an incomplete trace again at ``at``; whether the scheduler must wake to see it."""
        if trace_id in self._growing:
            return False  # it grew meanwhile: the quiet period decides
        self._rechecks[trace_id] = at
        heapq.heappush(self._heap, (at, trace_id))
        return True

    @property
    def pending(self) -> int:
        """Traces waiting for their quiet period or their recheck."""
        return len(self._growing) + len(self._rechecks)

    # --- an evaluation's life ------------------------------------------------------------------

    def queued(self, trace_id: bytes) -> None:
        """The trace went into the queue."""
        self._queued.add(trace_id)

    def gone(self, trace_id: bytes) -> bool:
        """Whether the trace was dropped while queued (its evaluation is moot)."""
        return trace_id in self._gone

    def started(self, trace_id: bytes) -> None:
        """Its spans were copied for an evaluation: later spans are late if that evaluation lands."""
        self._running.add(trace_id)

    def evaluated(self, trace_id: bytes, span_count: int) -> tuple[int, int]:
        """An evaluation of ``span_count`` spans landed: its revision, and the spans that came while it ran."""
        revision = self._revision.get(trace_id, (0, 0))[0] + 1
        self._revision[trace_id] = (revision, span_count)
        missed = self._running_late.pop(trace_id, 0)
        if missed:
            self._late[trace_id] = self._late.get(trace_id, 0) + missed
        return revision, missed

    def late(self, trace_id: bytes) -> int:
        """Spans that arrived after the trace's evaluations so far."""
        return self._late.get(trace_id, 0)

    def finished(self, trace_id: bytes) -> bool:
        """The evaluation ended (landed, failed or moot); whether the scheduler must wake (it is due again)."""
        self._queued.discard(trace_id)
        self._running.discard(trace_id)
        self._running_late.pop(trace_id, None)
        gone = trace_id in self._gone
        self._gone.discard(trace_id)
        grew = self._again.pop(trace_id, None)
        if grew is None or gone or trace_id in self._growing:
            return False
        # it grew while being evaluated and its quiet period already passed: due again now
        self._growing[trace_id] = grew
        self._growing.move_to_end(trace_id)
        self._rechecks.pop(trace_id, None)  # growth decides now, not a settle recheck
        return True
