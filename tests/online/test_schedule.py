"""The scheduling rules of online evaluation, on a clock moved by hand: no process, no wait, no poll.

Each test states the rule it holds (``coordbench.online.schedule``'s docstring lists them); the
last one runs random sequences of reports, evaluations and evictions and checks what must hold
whatever the order: a trace is never handed out twice at once, and no trace that grew is lost.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coordbench.online.schedule import Grown, Schedule

A, B, C = b"a" * 16, b"b" * 16, b"c" * 16
QUIET = 2.0


def test_a_trace_is_due_once_quiet_and_traces_come_in_the_order_they_last_grew() -> None:
    schedule = Schedule(QUIET)
    assert schedule.next_wait(0.0) is None  # nothing to wait for
    assert schedule.grown(A, 3, 0.0) == Grown(late=0, wake=True)  # the first growing trace wakes the scheduler
    assert schedule.grown(B, 1, 0.5) == Grown(late=0, wake=False)
    assert schedule.grown(A, 1, 1.0) == Grown()  # A grew again: its quiet period starts over, after B's
    assert schedule.next_wait(1.0) == 1.5  # B is due at 2.5
    assert schedule.due(2.4) == []
    assert schedule.due(2.5) == [B]
    assert schedule.pending == 1
    assert schedule.due(3.0) == [A]
    assert schedule.pending == 0 and schedule.next_wait(3.0) is None


def test_an_incomplete_trace_is_rechecked_at_its_settle_time_unless_it_grows() -> None:
    schedule = Schedule(QUIET)
    schedule.grown(A, 2, 0.0)
    assert schedule.due(2.0) == [A]
    schedule.queued(A)
    schedule.started(A)
    assert schedule.finished(A) is False  # the worker found it incomplete: nothing grew meanwhile
    assert schedule.recheck(A, 30.0) is True
    assert schedule.next_wait(10.0) == 20.0
    assert schedule.recheck(A, 40.0) is True  # a later recheck supersedes the first
    assert schedule.due(35.0) == []
    assert schedule.next_wait(35.0) == 5.0  # the superseded entry is passed over
    assert schedule.due(40.0) == [A]
    schedule.recheck(A, 70.0)
    schedule.grown(A, 1, 50.0)  # growth: the quiet period decides again, not the recheck
    assert schedule.due(52.0) == [A]
    assert schedule.due(70.0) == []
    assert schedule.recheck(A, 90.0) is True
    schedule.grown(A, 1, 80.0)
    assert schedule.recheck(A, 100.0) is False  # growing: a recheck asked now is moot


def test_a_trace_that_grows_while_evaluated_is_due_again_when_that_ends() -> None:
    schedule = Schedule(QUIET)
    schedule.grown(A, 2, 0.0)
    (due,) = schedule.due(2.0)
    schedule.queued(due)
    schedule.grown(A, 1, 2.5)  # still queued: not handed out twice
    assert schedule.due(10.0) == []
    schedule.started(A)
    schedule.grown(A, 1, 11.0)  # came after its spans were copied: late, if that evaluation lands
    assert schedule.evaluated(A, 3) == (1, 1)
    assert schedule.late(A) == 1
    assert schedule.finished(A) is False  # its last growth (11.0) is still in the growing order
    assert schedule.due(13.0) == [A]  # and it is due when quiet: the second evaluation


def test_a_trace_whose_quiet_period_passed_while_queued_is_due_the_moment_its_evaluation_ends() -> None:
    schedule = Schedule(QUIET)
    schedule.grown(A, 2, 0.0)
    schedule.queued(*schedule.due(2.0))
    schedule.grown(A, 1, 3.0)
    assert schedule.due(6.0) == []  # quiet, but queued: looked at again once that ends
    schedule.started(A)
    schedule.evaluated(A, 2)
    assert schedule.finished(A) is True  # wake the scheduler: it is due now
    assert schedule.due(6.0) == [A]


def test_late_spans_are_counted_and_bring_one_more_evaluation_then_only_counted() -> None:
    schedule = Schedule(QUIET)
    schedule.grown(A, 4, 0.0)
    schedule.queued(*schedule.due(2.0))
    schedule.started(A)
    assert schedule.evaluated(A, 4) == (1, 0)
    schedule.finished(A)
    assert schedule.grown(A, 2, 5.0) == Grown(late=2, wake=True)
    schedule.queued(*schedule.due(7.0))
    schedule.started(A)
    assert schedule.evaluated(A, 6) == (2, 0)
    schedule.finished(A)
    assert schedule.grown(A, 3, 9.0) == Grown(late=3, wake=False)  # revision 2: counted, never scheduled
    assert schedule.due(100.0) == [] and schedule.pending == 0
    assert schedule.late(A) == 5


def test_an_evaluation_kept_from_before_a_restart_makes_only_later_spans_late() -> None:
    schedule = Schedule(QUIET)
    assert schedule.grown(A, 5, 0.0, known=(1, 5)) == Grown()  # as evaluated: nothing to do
    assert schedule.due(10.0) == []
    assert schedule.grown(B, 7, 0.0, known=(1, 5)) == Grown(late=2, wake=True)  # two came after: re-evaluated
    assert schedule.due(2.0) == [B]
    assert schedule.grown(C, 3, 0.0, known=(1, 5)) == Grown(late=0, wake=True)  # fewer than judged: a new trace
    assert schedule.due(2.0) == [C]


def test_an_eviction_counts_only_for_a_trace_waiting_and_never_evaluated() -> None:
    schedule = Schedule(QUIET)
    schedule.grown(A, 1, 0.0)
    assert schedule.dropped(A, evicted=True) is True
    assert schedule.due(10.0) == []
    schedule.grown(B, 1, 0.0)
    assert schedule.dropped(B, evicted=False) is False  # dropped on purpose (deleted), not lost to room
    schedule.grown(C, 1, 0.0)
    schedule.queued(*schedule.due(2.0))
    assert schedule.dropped(C, evicted=True) is True  # queued counts as waiting
    assert schedule.gone(C)
    assert schedule.finished(C) is False and not schedule.gone(C)
    schedule.grown(A, 1, 20.0)
    schedule.queued(*schedule.due(22.0))
    schedule.started(A)
    schedule.evaluated(A, 1)
    schedule.finished(A)
    assert schedule.dropped(A, evicted=True) is False  # evaluated: nothing was lost


operations = st.lists(
    st.tuples(
        st.sampled_from(["grow", "due", "finish", "drop", "recheck"]),
        st.sampled_from([A, B, C]),
        st.integers(1, 4),
        st.floats(0, 5),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_no_trace_is_handed_out_twice_at_once_and_none_that_grew_is_lost(
    ops: list[tuple[str, bytes, int, float]],
) -> None:
    schedule = Schedule(QUIET)
    now = 0.0
    out: set[bytes] = set()  # handed out, not finished
    revisions: dict[bytes, int] = {}
    for op, trace, spans, step in ops:
        now += step
        if op == "grow":
            schedule.grown(trace, spans, now)
        elif op == "due":
            for found in schedule.due(now):
                assert found not in out, "handed out while its evaluation runs"
                out.add(found)
                schedule.queued(found)
                schedule.started(found)
        elif op == "finish" and trace in out:
            out.discard(trace)
            if not schedule.gone(trace):
                revisions[trace] = schedule.evaluated(trace, spans)[0]
            schedule.finished(trace)
        elif op == "drop":
            schedule.dropped(trace, evicted=True)
            revisions.pop(trace, None)
        elif op == "recheck" and trace not in out:
            schedule.recheck(trace, now + spans)
    for trace in list(out):  # every running evaluation ends
        if not schedule.gone(trace):
            revisions[trace] = schedule.evaluated(trace, 1)[0]
        schedule.finished(trace)
    # then, quiet long enough, whatever still waits comes out, and only traces below their last revision
    late = schedule.due(now + 1000.0)
    assert len(late) == len(set(late))
    assert all(revisions.get(t, 0) < 2 for t in late)
    assert schedule.pending == 0 and schedule.next_wait(now + 1000.0) is None
