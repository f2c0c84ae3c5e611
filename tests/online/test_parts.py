"""The online evaluator's parts on their own: judge sample and rate, team and scenario, label bounds, the log."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from coordbench.meters import KNOWN_REJECTIONS, OTHER, PROMETHEUS, BackendMeters, BoundedLabels, ScenarioFigures
from coordbench.online.evaluator import _Bucket, judge_sampled
from coordbench.online.job import may_hold_agent_calls, quality_label, rows_of, scenario_label, team_of
from coordbench.online.records import EvaluationLog, EvaluationRecord, ScenarioSummary
from coordbench.otlp import decode_json, export_request_json, native
from coordbench.server.evaluations_api import parse_since
from coordbench.spans import SpanData
from store.test_faults import fill, free, needs_mount, small_disk
from support.spans import call, sid, span


def test_the_judge_sample_is_a_hash_of_the_trace_id() -> None:
    ids = [hashlib.sha256(str(n).encode()).digest()[:16] for n in range(4000)]
    picked = [judge_sampled(t, 0.25) for t in ids]
    assert 0.22 < sum(picked) / len(ids) < 0.28  # a quarter, give or take the binomial spread (sd 0.007)
    assert picked == [judge_sampled(t, 0.25) for t in ids]  # the same traces every time
    # by hand: the first 8 bytes of SHA-256, as a fraction of 2^64
    for t in ids[:50]:
        share = int.from_bytes(hashlib.sha256(t).digest()[:8], "big") / 2**64
        assert judge_sampled(t, 0.25) == (share < 0.25)
    assert not any(judge_sampled(t, 0) for t in ids) and all(judge_sampled(t, 1) for t in ids)
    # a larger sample holds the smaller one: raising the rate never drops a trace already judged
    assert all(judge_sampled(t, 0.5) for t, p in zip(ids, picked, strict=True) if p)


def test_the_judge_rate_limit_is_a_token_bucket() -> None:
    now = [0.0]
    bucket = _Bucket(6.0, lambda: now[0])  # six a minute, six saved up at most
    assert [bucket.take() for _ in range(7)] == [True] * 6 + [False]
    now[0] += 10.0  # one token comes back every ten seconds
    assert [bucket.take(), bucket.take()] == [True, False]
    now[0] += 3600.0  # never more than six saved
    assert sum(bucket.take() for _ in range(10)) == 6
    zero = _Bucket(0.0, lambda: now[0])  # a zero rate: the one token it starts with, then none ever
    assert zero.take() and not zero.take()
    now[0] += 3600.0
    assert not zero.take()


def test_team_and_scenario_come_from_the_root_span() -> None:
    root = span("invoke_workflow travel", span_id=sid(1), service="planner", **{"gen_ai.workflow.name": "travel"})
    child = span("invoke_agent flights", span_id=sid(2), parent=sid(1), service="flights")
    assert team_of([child, root]) == "planner"  # no namespace: the root's service
    spaced = root._replace(resource={**root.resource, "service.namespace": " bookings "})
    assert team_of([child, spaced]) == "bookings"
    assert team_of([child, spaced], "deployment.environment") == "planner"
    assert team_of([child]) == "flights"  # the root never arrived: the earliest loose span
    assert team_of([]) == "unknown"
    assert scenario_label([root, child], root.trace_id) == "travel"
    assert scenario_label([root._replace(attributes={}), child], root.trace_id) == "invoke_workflow travel"
    assert scenario_label([root, child], "checkout#2") == "checkout"  # an assessment's scenario, its run dropped


def test_an_assessment_trace_belongs_to_the_team_its_request_named() -> None:
    def assessed(config: str, namespace: str | None = None) -> SpanData:
        found = span("assessment a1", span_id=sid(1), service="coordbench-green",
                     **{"coordbench.assessment.config": config})  # fmt: skip
        return found._replace(resource={**found.resource, "service.namespace": namespace}) if namespace else found

    child = span("invoke_agent coordinator", span_id=sid(2), parent=sid(1), service="coordinator")
    assert team_of([assessed(json.dumps({"team": "star", "timeout": 60})), child]) == "star"
    assert team_of([assessed(json.dumps({"timeout": 60})), child]) == "coordbench-green"  # none named
    # a name no request could give (markup, too long), or a record that is not JSON, is not read
    assert team_of([assessed(json.dumps({"team": "<b>x</b>"}), "ops"), child]) == "ops"
    assert team_of([assessed(json.dumps({"team": "t" * 65}), "ops"), child]) == "ops"
    assert team_of([assessed('{"team": "star"', "ops"), child]) == "ops"
    assert team_of([assessed(json.dumps([{"team": "star"}]), "ops"), child]) == "ops"


def test_quality_labels() -> None:
    assert [quality_label(v) for v in (1.0, 0.75, 0.7499, 0.5, 0.4999, 0.0)] == [
        "good", "good", "fair", "fair", "poor", "poor"
    ]  # fmt: skip


def test_label_values_are_bounded_in_number_and_length() -> None:
    labels = BoundedLabels(limit=3, max_chars=10)
    assert [labels("team", t) for t in ("a", "b", "c", "d", "a", "e")] == ["a", "b", "c", OTHER, "a", OTHER]
    assert labels("hub", "x" * 50) == "x" * 10  # another label has its own bound; values are cut
    assert labels("hub", "") == "unknown"


def test_prometheus_names_follow_the_exporter() -> None:
    assert PROMETHEUS["coordbench.spans.received"] == "coordbench_spans_received_total"
    assert PROMETHEUS["coordbench.store.bytes"] == "coordbench_store_bytes"
    assert PROMETHEUS["coordbench.trace.critical_path"] == "coordbench_trace_critical_path_seconds"
    assert PROMETHEUS["coordbench.evaluation.score"] == "coordbench_evaluation_score"


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("0", 0),
        ("1764170000.5", 1_764_170_000_500_000_000),
        ("2026-11-26T18:00:00Z", 1_795_716_000_000_000_000),
        ("2026-11-26T19:00:00+01:00", 1_795_716_000_000_000_000),
    ],
)
def test_since_takes_unix_seconds_or_rfc3339(text: str, nanos: int) -> None:
    assert parse_since(text) == nanos


def _record(n: int, team: str = "t", revision: int = 1) -> EvaluationRecord:
    return EvaluationRecord(
        trace_id=f"{n:032x}", team=team, evaluated_unix_nano=n, span_count=3, complete=True, revision=revision,
        late_spans=0, judge=False, scenarios=(ScenarioSummary("s", 0.5, False, None, 0.5, ("a.b",)),),
        line=f'{{"evaluations":[],"trace_id":"{n:032x}"}}',
    )  # fmt: skip


def test_the_log_keeps_the_newest_and_reloads_them(tmp_path: Path) -> None:
    log = EvaluationLog(3, tmp_path)
    for n in range(1, 6):
        log.put(_record(n, team="even" if n % 2 == 0 else "odd"))
    log.put(_record(3, revision=2))  # re-evaluated: replaced, and now the newest
    assert [r.trace_id[-1] for r in log.newest()] == ["3", "5", "4"]
    assert [r.trace_id[-1] for r in log.newest(team="even")] == ["4"]
    assert [r.trace_id[-1] for r in log.newest(since_unix_nano=4)] == ["5", "4"]
    log.close()
    again = EvaluationLog(3, tmp_path)
    assert [(r.trace_id[-1], r.revision) for r in again.newest()] == [("3", 2), ("5", 1), ("4", 1)]
    assert again.get(f"{3:032X}") == _record(3, revision=2)  # ids in either case
    assert again.get(f"{3:032x}").to_json().endswith(',"evaluation":' + _record(3).line + "}")  # type: ignore[union-attr]
    rows = sqlite3.connect(tmp_path / "evaluations.sqlite").execute("SELECT count(*) FROM evaluations").fetchone()
    assert rows == (3,)  # the bound holds on disk too


@needs_mount
def test_a_full_disk_keeps_evaluations_in_memory_and_counts_them() -> None:
    with small_disk("1m") as disk:
        log = EvaluationLog(100, disk)
        log.put(_record(1))
        fill(disk)
        log.put(dataclasses.replace(_record(2), line='{"pad":"' + "y" * 400_000 + '"}'))
        assert log.unsaved == 1 and log.get(f"{2:032x}") is not None  # still readable
        free(disk)
        log.put(_record(3))
        assert log.unsaved == 1
        log.close()
        reopened = EvaluationLog(100, disk)
        assert {r.trace_id[-1] for r in reopened.newest()} == {"1", "3"}  # the unsaved one is not on disk
        reopened.close()
        fill(disk)
        (disk / "evaluations.sqlite").unlink()
        crippled = EvaluationLog(100, disk)  # cannot even create its file: it runs in memory, it says so
        crippled.put(_record(4))
        assert crippled.get(f"{4:032x}") is not None
        free(disk)


def test_a_trace_without_agent_calls_is_told_apart_in_every_encoding() -> None:
    """The cheap byte test before a worker: exact on protobuf and JSON text, a maybe on escaped JSON."""
    calls = [span("root", span_id=sid(1)), call("host", "B", parent=sid(1), span_id=sid(2))]
    plain = [span("root", span_id=sid(1)), span("work", parent=sid(1), span_id=sid(2))]
    for spans, expected in ((calls, True), (plain, False)):
        body = json.dumps(export_request_json(spans)).encode()
        assert may_hold_agent_calls(rows_of(decode_json(body).spans)) is expected
    # "invoke_agent" written with an escape: the bytes do not hold it, the span does
    escaped = json.dumps(export_request_json(calls)).replace("invoke_agent", "\\u0069nvoke_agent").encode()
    kept = decode_json(escaped).spans
    assert any(s.decode().attributes.get("gen_ai.operation.name") == "invoke_agent" for s in kept)
    if native.JSON_AVAILABLE:  # kept as their JSON text (else decoded, and stored as protobuf)
        assert b"invoke_agent" not in b"".join(row.payload for row in rows_of(kept))
    assert may_hold_agent_calls(rows_of(kept))


def _exposition(meters: BackendMeters) -> str:
    body, _ = meters.exposition("text/plain")
    return body.decode()


def test_a_healthy_team_and_a_clean_receiver_have_a_series_on_every_panel_that_counts_faults() -> None:
    """Counters of faults start at zero: a first rejection, and a scenario where nothing fired, are series too.

    A counter with no series until its first increase hides that increase from ``increase()`` and
    ``rate()``: the ingest-rejection alert missed the first burst, and the evidence panel showed
    nothing at all for a team that coordinated well.
    """
    from coordbench.store import TraceStore

    meters = BackendMeters(TraceStore())
    before = _exposition(meters)
    for reason in KNOWN_REJECTIONS:
        assert f'coordbench_spans_rejected_by_reason_total{{reason="{reason}"}} 0.0' in before
    clean = ScenarioFigures("s1", 0.9, True, 0.9, 0.95, 0.5, 0.6, 0.2, (), (("coordinator", 0.05),))
    faulty = dataclasses.replace(clean, scenario="s2", fired=("parallelism.serialised_work",))
    meters.evaluated("healthy", [clean, faulty], revision=1, since_last_span=1.0, run=0.1)
    after = _exposition(meters)
    assert 'evidence="none",scenario="s1",team="healthy"} 1.0' in after
    assert 'evidence="parallelism.serialised_work",scenario="s2",team="healthy"} 1.0' in after
    assert 'evidence="none",scenario="s2"' not in after
    meters.shutdown()


def test_a_hub_that_starts_the_trace_is_timed_by_its_root_span() -> None:
    """In production nothing calls the coordinator over A2A: the trace starts in it; its root span is its request."""
    from coordbench.online.job import JobRequest, run_job
    from coordbench.otlp import encoded_span
    from evals.traces import client, server

    root = span("invoke_workflow plan", span_id=sid(1), service="coordinator", start_ms=0, end_ms=400)
    spans = [root]
    for i, worker in enumerate(("researcher", "analyst", "writer")):
        spans += [client("coordinator", worker, sid(10 + 2 * i), sid(1), 10 + i, 300 + i, request=f"part {i}",
                         reply=f"{worker} answered part {i}"),
                  server(worker, sid(11 + 2 * i), sid(10 + 2 * i), 11 + i, 299 + i)]  # fmt: skip
    rows = rows_of([encoded_span(s) for s in spans])
    result = run_job(JobRequest(trace_id=root.trace_id, rows=rows, idle_seconds=60.0, settle=30.0))
    assert result.outcome == "evaluated"
    (figures,) = result.figures
    assert figures.hubs == (("coordinator", 0.4),)
