"""TraceStore: grouping, duplicates, counters, completeness, waiting, bounds, listing."""

from __future__ import annotations

import asyncio

import pytest

from coordbench.otlp import decode_protobuf, export_request, native
from coordbench.spans import SpanData, StatusCode
from coordbench.store import BatchTooLargeError, StoreFullError, TraceStore
from coordbench.store.encoded import EncodedSpan
from coordbench.store.sizes import ENCODED_SPAN_OVERHEAD, Grouper, held_bytes
from support.faketime import FakeTime
from support.spans import TRACE, call, serve, sid, span

OTHER = "ab" * 16


def encoded(*spans: SpanData) -> list[EncodedSpan]:
    return decode_protobuf(export_request(spans).SerializeToString()).spans


def chain() -> list[SpanData]:
    """host root → client call → server span."""
    return [
        span("root", span_id=sid(1), service="host"),
        call("host", "B", parent=sid(1), span_id=sid(2)),
        serve("B", parent=sid(2), span_id=sid(3)),
    ]


@pytest.fixture(params=["native", "python"])
def grouping(request: pytest.FixtureRequest) -> Grouper | None:
    """Batches grouped by the C extension's ``group`` (when built) or by the Python code."""
    if request.param == "native" and not native.AVAILABLE:
        pytest.skip("coordbench.otlp._scan is not built (test_native.py::test_the_extension_is_built says why)")
    return None if request.param == "python" else native.group


async def test_groups_by_trace_and_keeps_duplicates_once(grouping: Grouper | None) -> None:
    store = TraceStore(grouper=grouping)
    first = await store.add(encoded(*chain(), span("x", trace_id=OTHER, span_id=sid(9))))
    again = await store.add(encoded(*chain()))
    assert (first.stored, first.duplicates, again.stored, again.duplicates) == (4, 0, 0, 3)
    snapshot = store.get(TRACE)
    assert snapshot is not None
    assert [s.name for s in snapshot.spans] == ["root", "invoke_agent B", "invoke_agent B"]
    stats = store.stats
    assert (stats.received, stats.stored, stats.duplicates, stats.rejected, stats.spans, stats.traces) == (
        7,
        7,
        3,
        0,
        4,
        2,
    )
    store.record_rejected(2, {"invalid trace_id": 2})
    stats = store.stats
    assert stats.received == stats.stored + stats.rejected == 9
    assert stats.rejected_reasons == {"invalid trace_id": 2}


async def test_duplicate_inside_one_batch(grouping: Grouper | None) -> None:
    store = TraceStore(grouper=grouping)
    one = span("root", span_id=sid(1))
    result = await store.add(encoded(one) + encoded(one))
    assert (result.stored, result.duplicates, store.stats.spans) == (1, 1, 1)


async def test_held_bytes_count_each_stored_span_once(grouping: Grouper | None) -> None:
    """Interleaved traces, repeats inside a batch and across batches: bytes are the stored spans' own."""
    first = encoded(*chain()[:2], span("x", trace_id=OTHER, span_id=sid(9)))
    second = encoded(chain()[2], span("y", trace_id=OTHER, span_id=sid(8)))
    batch = [first[0], second[1], first[2], first[1], second[0], first[0], second[1]]
    store = TraceStore(grouper=grouping)
    result = await store.add(batch)
    assert (result.stored, result.duplicates) == (5, 2)
    again = await store.add([*second, *first, first[1]])
    assert (again.stored, again.duplicates) == (0, 6)
    unique = {(s.trace_id, s.span_id): s for s in batch}
    assert store.stats.bytes == sum(held_bytes(s) for s in unique.values())
    assert store.stats.bytes == sum(len(s.payload) + ENCODED_SPAN_OVERHEAD for s in unique.values())
    assert (store.stats.spans, store.stats.traces) == (5, 2)


async def test_completeness_reports_orphans_and_unmatched_calls() -> None:
    store = TraceStore()
    root, client, server = chain()
    await store.add(encoded(client))
    report = store.get(TRACE).completeness  # type: ignore[union-attr]
    assert report.orphans == (sid(1),)
    assert report.unmatched_clients == (sid(2),)
    assert not report.complete
    await store.add(encoded(root, server))
    report = store.get(TRACE).completeness  # type: ignore[union-attr]
    assert (report.orphans, report.unmatched_clients, report.roots, report.complete) == ((), (), (sid(1),), True)


async def test_failed_call_needs_no_server_span() -> None:
    store = TraceStore()
    await store.add(encoded(span("root", span_id=sid(1)), call("a", "down", parent=sid(1), status=StatusCode.ERROR)))
    assert store.get(TRACE).completeness.complete  # type: ignore[union-attr]


async def test_wait_complete_waits_for_the_missing_span_and_the_quiet_period() -> None:
    time = FakeTime()
    store = TraceStore(clock=time.clock, sleep=time.sleep)
    root, client, server = chain()
    await store.add(encoded(root, client))
    waiting = asyncio.create_task(store.wait_complete(TRACE, quiet=0.2, timeout=5))
    await time.advance(0.2)
    assert not waiting.done()  # quiet, but the server span is missing
    await store.add(encoded(server))  # at 0.2
    await time.advance(0.19)
    assert not waiting.done()  # complete, not yet quiet
    await time.advance(0.01)
    snapshot = waiting.result()  # quiet at 0.4: 0.2 until the span arrived, then 0.2 of quiet
    assert snapshot.completeness.complete and not snapshot.completeness.timed_out
    assert len(snapshot.spans) == 3


async def test_wait_complete_times_out_with_a_report() -> None:
    time = FakeTime(autojump=True)
    store = TraceStore(clock=time.clock, sleep=time.sleep)
    root, client, _server = chain()
    await store.add(encoded(root, client))
    snapshot = await store.wait_complete(TRACE, quiet=0.05, timeout=0.3)
    assert time.now == pytest.approx(0.3)  # it gave up at its deadline, not before
    report = snapshot.completeness
    assert (report.timed_out, report.complete, report.unmatched_clients) == (True, False, (sid(2),))
    assert len(snapshot.spans) == 2
    missing = await store.wait_complete(OTHER, timeout=0.1)
    assert (missing.spans, missing.completeness.timed_out, missing.completeness.span_count) == ([], True, 0)


async def test_wait_complete_accepts_a_parent_that_is_still_open() -> None:
    """Mid-assessment the root span has not ended: its children are not orphans when it is named open."""
    time = FakeTime(autojump=True)
    store = TraceStore(clock=time.clock, sleep=time.sleep)
    _root, client, server = chain()
    await store.add(encoded(client, server))
    blocked = await store.wait_complete(TRACE, quiet=0.01, timeout=0.2)
    assert (blocked.completeness.timed_out, blocked.completeness.orphans) == (True, (sid(1),))
    snapshot = await store.wait_complete(TRACE, quiet=0.01, timeout=5, open_spans={sid(1)})
    assert snapshot.completeness.complete and not snapshot.completeness.timed_out
    assert snapshot.completeness.orphans == ()


async def test_wait_complete_within_a_subtree() -> None:
    """One scenario of a running assessment: root open, scenario 1 stuck, scenario 2 complete."""
    time = FakeTime(autojump=True)
    store = TraceStore(clock=time.clock, sleep=time.sleep)
    scenario1 = span("scenario 1", span_id=sid(2), parent=sid(1), service="host")
    stuck = call("host", "B", parent=sid(2), span_id=sid(3))  # B's server span never comes
    scenario2 = span("scenario 2", span_id=sid(4), parent=sid(1), service="host")
    call2 = call("host", "B", parent=sid(4), span_id=sid(5))
    served2 = serve("B", parent=sid(5), span_id=sid(6))
    await store.add(encoded(scenario1, stuck, scenario2, call2, served2))
    snapshot = await store.wait_complete(TRACE, quiet=0.01, timeout=5, within=sid(4))
    assert snapshot.completeness.complete and not snapshot.completeness.timed_out
    assert sorted(s.span_id for s in snapshot.spans) == [sid(4), sid(5), sid(6)]
    assert snapshot.completeness.span_count == 3
    first = await store.wait_complete(TRACE, quiet=0.01, timeout=0.2, within=sid(2))
    assert (first.completeness.timed_out, first.completeness.unmatched_clients) == (True, (sid(3),))
    # a span hanging from a parent that has not arrived might belong to the subtree: wait for it
    loose = serve("C", parent=sid(9), span_id=sid(7))
    await store.add(encoded(loose))
    blocked = await store.wait_complete(TRACE, quiet=0.01, timeout=0.2, within=sid(4))
    assert (blocked.completeness.timed_out, blocked.completeness.orphans) == (True, (sid(9),))
    # a subtree whose top span has not arrived is not complete
    missing = await store.wait_complete(TRACE, quiet=0.01, timeout=0.1, within=sid(8))
    assert (missing.spans, missing.completeness.complete) == ([], False)


async def test_a_parent_cycle_in_the_trace_does_not_hang_a_scoped_wait() -> None:
    """Spans that are each other's parents (bad input) hang from nothing: they are outside every subtree."""
    store = TraceStore()
    scenario = span("scenario", span_id=sid(2), parent=sid(1), service="host")
    asked = call("host", "B", parent=sid(2), span_id=sid(3))
    answered = serve("B", parent=sid(3), span_id=sid(4))
    own_parent = span("own parent", span_id=sid(5), parent=sid(5), service="B")
    loop = [span("loop a", span_id=sid(6), parent=sid(7), service="B"), span("loop b", span_id=sid(7), parent=sid(6))]
    await store.add(encoded(scenario, asked, answered, own_parent, *loop))
    snapshot = await asyncio.wait_for(store.wait_complete(TRACE, quiet=0.01, timeout=5, within=sid(2)), 10)
    assert snapshot.completeness.complete and not snapshot.completeness.timed_out
    assert sorted(s.span_id for s in snapshot.spans) == [sid(2), sid(3), sid(4)]


async def test_wait_complete_for_a_trace_that_arrives_later() -> None:
    time = FakeTime()
    store = TraceStore(clock=time.clock, sleep=time.sleep)
    waiting = asyncio.create_task(store.wait_complete(TRACE, quiet=0.1, timeout=5))
    await time.advance(1.0)
    assert not waiting.done()  # no such trace yet
    await store.add(encoded(*chain()))  # at 1.0
    await time.advance(0.1)
    snapshot = waiting.result()
    assert snapshot.completeness.complete and len(snapshot.spans) == 3


async def test_bounds_evict_finished_traces_first_and_refuse_otherwise() -> None:
    now = [0.0]
    store = TraceStore(max_spans=4, max_traces=2, evict_after=10, clock=lambda: now[0])
    await store.add(encoded(*chain()))  # 3 spans, trace TRACE
    with pytest.raises(StoreFullError) as full:
        await store.add(encoded(span("a", trace_id=OTHER, span_id=sid(20)), span("b", trace_id=OTHER, span_id=sid(21))))
    assert 1 <= full.value.retry_after <= 10
    now[0] = 11.0  # TRACE has been idle for longer than evict_after: it may go
    await store.add(encoded(span("a", trace_id=OTHER, span_id=sid(20)), span("b", trace_id=OTHER, span_id=sid(21))))
    stats = store.stats
    assert (stats.evicted, stats.spans, stats.traces, stats.rejected) == (3, 2, 1, 2)
    assert TRACE not in store and OTHER in store
    assert stats.received == stats.stored + stats.rejected


async def test_a_trace_the_batch_adds_to_is_not_evicted_to_make_room_for_it(grouping: Grouper | None) -> None:
    """A retry that also carries a new span: the retried spans stay stored, another trace makes room."""
    now = [0.0]
    store = TraceStore(max_spans=3, evict_after=1, clock=lambda: now[0], grouper=grouping)
    sent = encoded(span("root", span_id=sid(1)), span("child", span_id=sid(2), parent=sid(1)))
    await store.add(sent)
    now[0] = 1.0
    await store.add(encoded(span("x", trace_id=OTHER, span_id=sid(9))))  # full: 3 of 3 spans
    now[0] = 5.0  # both traces idle: either may be evicted
    result = await store.add([*sent, *encoded(span("late", span_id=sid(3), parent=sid(1)))])
    assert (result.stored, result.duplicates) == (1, 2)
    snapshot = store.get(TRACE)
    assert snapshot is not None
    assert sorted(s.name for s in snapshot.spans) == ["child", "late", "root"]
    assert snapshot.completeness.orphans == ()
    assert OTHER not in store
    stats = store.stats
    assert (stats.spans, stats.traces, stats.evicted) == (3, 1, 1)


async def test_max_traces() -> None:
    store = TraceStore(max_traces=1, evict_after=3600)
    await store.add(encoded(span("a", span_id=sid(1))))
    with pytest.raises(StoreFullError, match="1 of 1 traces"):
        await store.add(encoded(span("b", trace_id=OTHER, span_id=sid(2))))


async def test_max_bytes_bounds_large_spans() -> None:
    """Spans carrying 20 kB prompts reach the byte bound long before the span count."""
    now = [0.0]
    store = TraceStore(max_spans=1_000, max_bytes=50_000, evict_after=10, clock=lambda: now[0])
    prompt = "x" * 20_000
    first = encoded(span("a", span_id=sid(1), prompt=prompt), span("b", span_id=sid(2), prompt=prompt))
    await store.add(first)
    # the bound counts each protobuf span as its encoding plus a fixed overhead (independent sum)
    assert store.stats.bytes == sum(len(s.payload) + ENCODED_SPAN_OVERHEAD for s in first)
    third = encoded(span("c", trace_id=OTHER, span_id=sid(3), prompt=prompt))
    with pytest.raises(StoreFullError, match=r"~\d+ of 50000 bytes"):
        await store.add(third)  # 2 x ~20 kB held + ~20 kB > 50 kB, and TRACE is not idle yet
    now[0] = 11.0
    await store.add(third)  # TRACE is finished now: evicted to make room
    assert (store.stats.spans, store.stats.evicted) == (1, 2)
    assert store.stats.bytes == len(third[0].payload) + ENCODED_SPAN_OVERHEAD


async def test_a_batch_larger_than_the_store_is_refused_for_good() -> None:
    store = TraceStore(max_spans=2, max_bytes=1 << 20)
    with pytest.raises(BatchTooLargeError, match=r"the batch \(spans 3, new traces 1, ~\d+ bytes\) is larger than"):
        await store.add(encoded(*chain()))
    stats = store.stats
    assert (stats.received, stats.rejected, stats.spans) == (3, 3, 0)
    assert stats.rejected_reasons == {"batch larger than the store": 3}


async def test_listing_pages_newest_first() -> None:
    store = TraceStore()
    ids = [f"{i:032x}" for i in range(1, 6)]
    for trace_id in ids:
        await store.add(encoded(span("s", trace_id=trace_id, span_id=sid(1), service=f"svc{trace_id[-1]}")))
    page, cursor = store.list_traces(limit=2)
    seen = [t.trace_id for t in page]
    while cursor:
        page, cursor = store.list_traces(limit=2, cursor=cursor)
        seen += [t.trace_id for t in page]
    assert seen == list(reversed(ids))
    assert page[-1].services == ("svc1",)
    with pytest.raises(ValueError, match="invalid cursor"):
        store.list_traces(cursor="not-a-cursor")
    with pytest.raises(ValueError, match="limit must be between 1 and 1000"):
        store.list_traces(limit=0)


async def test_listing_is_by_creation_and_its_cursor_survives_growth_and_eviction() -> None:
    store = TraceStore()
    ids = [f"{i:032x}" for i in range(1, 8)]
    for trace_id in ids:
        await store.add(encoded(span("s", trace_id=trace_id, span_id=sid(1))))
    page, cursor = store.list_traces(limit=3)
    assert [t.trace_id for t in page] == ids[:3:-1]  # 7, 6, 5
    await store.add(encoded(span("later", trace_id=ids[0], span_id=sid(2))))  # the oldest grows...
    assert await store.delete(ids[3])  # ...and the next one due on the next page goes
    rest: list[str] = []
    while cursor:
        page, cursor = store.list_traces(limit=3, cursor=cursor)
        rest += [t.trace_id for t in page]
    assert rest == [ids[2], ids[1], ids[0]]  # growth does not reorder; the deleted trace is skipped
    first = store.list_traces(limit=10)[0]
    assert [t.trace_id for t in first] == [i for i in reversed(ids) if i != ids[3]]
    assert first[-1].span_count == 2


async def test_delete_and_bad_ids() -> None:
    store = TraceStore()
    await store.add(encoded(*chain()))
    assert await store.delete(TRACE) is True
    assert await store.delete(TRACE) is False
    assert store.get(TRACE) is None
    with pytest.raises(ValueError, match="trace id must be 32 hex digits"):
        store.get("xyz")
    assert "xyz" not in store
