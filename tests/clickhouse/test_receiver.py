"""``coordbench receiver --store chdb://…`` as a process: spans kept in the exporter's tables, evaluated from them.

The receiver holds nothing itself: what it receives goes into the ClickHouse engine (chdb) as the
Collector's exporter would write it, its read API reads from there, and online evaluation learns
of traces that grow from the exporter's trace-id index table. Each evaluation must be the very
bytes the same spans give when evaluated as received over OTLP (``evals.replay.replay``,
what a receiver holding them in memory runs), and land in ``coordbench_evaluations``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from coordbench.clickhouse import connect
from coordbench.evals.replay import replay_sync
from coordbench.spans import SpanData, span_to_dict
from online.traces import CRASHED, FAILING, GOOD, evaluation, post, stats, team_trace, trace_id, until
from support.commands import ServerProcess

pytestmark = pytest.mark.slow

COMMAND = [sys.executable, "-m", "coordbench.cli"]


def _now(spans: list[SpanData], at: int) -> list[SpanData]:
    """The spans moved to start at ``at`` (the index table looks at recent traces)."""
    return [
        s._replace(start_time_unix_nano=s.start_time_unix_nano + at, end_time_unix_nano=s.end_time_unix_nano + at)
        for s in spans
    ]


def _store_stats(url: str) -> dict[str, object]:
    return httpx.get(f"{url}/v1/stats", timeout=30).json()["clickhouse"]


def test_receiver_on_clickhouse_stores_reads_and_evaluates_from_the_exporters_tables(tmp_path: Path) -> None:
    store = f"chdb://{tmp_path / 'ch'}?create=true"
    env = {**os.environ, "COORDBENCH_EVALUATE_QUIET": "0.5", "COORDBENCH_EVALUATE_SETTLE": "3"}
    at = time.time_ns()
    traces = {
        trace_id(1): _now(team_trace(1, GOOD, namespace="travel"), at),
        trace_id(2): _now(team_trace(2, FAILING, namespace="travel"), at),
        trace_id(3): _now(team_trace(3, CRASHED, namespace="billing"), at),
    }
    with ServerProcess("receiver", "--evaluate", "--no-grpc", "--store", store, env=env) as receiver:
        for spans in traces.values():
            post(receiver.url, spans)
        # the read API reads ClickHouse: the same spans, the declared attribute types given back
        for key, spans in traces.items():
            document = httpx.get(f"{receiver.url}/v1/traces/{key}", timeout=30).json()
            assert document["spans"] == [span_to_dict(s) for s in sorted(spans, key=_order)]
        listing = httpx.get(f"{receiver.url}/v1/traces", params={"limit": 2}, timeout=30).json()
        rest = httpx.get(f"{receiver.url}/v1/traces", params={"limit": 2, "cursor": listing["next"]}, timeout=30)
        listed = {t["trace_id"]: t for t in listing["traces"] + rest.json()["traces"]}
        assert sorted(listed) == sorted(traces) and rest.json()["next"] is None
        assert {k: (t["span_count"], t["root"]) for k, t in listed.items()} == {
            k: (len(spans), "scenario s1") for k, spans in traces.items()
        }

        # bad input gets its status, an unknown trace 404
        for path, status, says in (
            (f"/v1/traces/{'z' * 32}", 400, "trace id must be 32 hex digits"),
            (f"/v1/traces/{trace_id(99)}", 404, f"trace {trace_id(99)} not found"),
            ("/v1/traces?cursor=12.nothex", 400, "bad cursor"),
            ("/v1/traces?cursor=" + "9" * 20 + "." + trace_id(1), 400, "bad cursor"),
        ):
            answer = httpx.get(f"{receiver.url}{path}", timeout=30)
            assert (answer.status_code, says in answer.json()["detail"]) == (status, True), (path, answer.text)

        # complete traces are evaluated once quiet; the crashed team's once it has settled, incomplete
        records = {key: evaluation(receiver.url, key) for key in traces}
        for key, spans in traces.items():
            assert json.dumps(records[key]["evaluation"], separators=(",", ":"), sort_keys=True) == json.dumps(
                json.loads(replay_sync(key, spans).to_json()), separators=(",", ":"), sort_keys=True
            )
            raw = httpx.get(f"{receiver.url}/v1/traces/{key}/evaluation", timeout=30).text
            assert raw.endswith(',"evaluation":' + replay_sync(key, spans).to_json() + "}")  # byte for byte
        assert [records[k]["complete"] for k in traces] == [True, True, False]
        assert records[trace_id(3)]["team"] == "billing"
        assert records[trace_id(2)]["scenarios"][0]["score"] < records[trace_id(1)]["scenarios"][0]["score"]

        # the live UI reads the same store: a run's page draws its spans from ClickHouse beside its evaluation
        page = httpx.get(f"{receiver.url}/ui/traces/{trace_id(2)}", timeout=60)
        assert page.status_code == 200 and 'class="lanes"' in page.text and 'class="waterfall"' in page.text
        assert f"{len(traces[trace_id(2)])} spans held" in page.text
        assert 'data-team="billing"' in httpx.get(f"{receiver.url}/ui/", timeout=60).text

        # a late span, started two seconds after the others: the trace's last start in the index table
        # moves (a new index row alone could be merged away before the next look), so it is evaluated again
        last = traces[trace_id(1)][-1]
        late = last._replace(
            span_id="00000000000000fe",
            name="late work",
            start_time_unix_nano=last.start_time_unix_nano + 2_000_000_000,
            end_time_unix_nano=last.start_time_unix_nano + 2_001_000_000,
        )
        post(receiver.url, [late])
        again = evaluation(receiver.url, trace_id(1), revision=2)
        assert (again["revision"], again["late_spans"]) == (2, 1)
        assert again["span_count"] == len(traces[trace_id(1)]) + 1
        counters = stats(receiver.url)
        assert (counters["evaluated"], counters["reevaluated"], counters["unexported"]) == (4, 1, 0)

    # evaluations are in coordbench_evaluations, one row per scenario, the newest revision winning
    connection = connect(store)
    try:
        rows = connection.rows(
            "SELECT TraceId, Revision, Team, Complete, Score, Evaluation FROM otel.coordbench_evaluations FINAL "
            "ORDER BY TraceId"
        )
        joined = connection.rows(
            "SELECT e.TraceId, count() FROM otel.coordbench_evaluations AS e FINAL "
            "JOIN otel.otel_traces AS t ON t.TraceId = e.TraceId GROUP BY e.TraceId ORDER BY e.TraceId"
        )
    finally:
        connection.close()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (trace_id(1), 2, "travel", True),
        (trace_id(2), 1, "travel", True),
        (trace_id(3), 1, "billing", False),
    ]
    assert rows[0][4] == again["scenarios"][0]["score"] and json.loads(rows[0][5]) == again["evaluation"]
    # scores join with the spans they judge (what Grafana's ClickHouse source and SQL users do)
    assert joined == [
        [trace_id(1), len(traces[trace_id(1)]) + 1],
        [trace_id(2), len(traces[trace_id(2)])],
        [
            trace_id(3),
            len(traces[trace_id(3)]),
        ],
    ]

    # coordbench evaluate reads the trace from the store: the receiver's line, byte for byte
    done = subprocess.run(
        [*COMMAND, "evaluate", "--store", store, "--trace-id", trace_id(2)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == replay_sync(trace_id(2), traces[trace_id(2)]).to_json() + "\n"

    # and coordbench report draws it from the store
    page = tmp_path / "report.html"
    done = subprocess.run(
        [*COMMAND, "report", "--store", store, "--trace-id", trace_id(1), "--output", str(page)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert trace_id(1) in page.read_text()

    # restarted on the same store: what was evaluated is not evaluated again
    with ServerProcess("receiver", "--evaluate", "--no-grpc", "--store", store, env=env) as receiver:
        until(lambda: int(_store_stats(receiver.url)["polls"]) >= 3, "the index table was looked at")  # type: ignore[arg-type]
        assert stats(receiver.url)["evaluated"] == 0


def _order(span: SpanData) -> tuple[int, str]:
    return span.start_time_unix_nano, span.span_id


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--store", "mysql://db/otel"], "a store URL starts clickhouse:// or chdb://"),
        (["--store", "chdb:///tmp/x?table=otel-traces"], "table must be letters, digits and _"),
        (["--store", "chdb:///tmp/x?shard=3/3"], "shard is I/N with 0 <= I < N <= 1024"),
        (["--store", "chdb:///tmp/x?sharding=1"], "unknown store URL option 'sharding'"),
        (["--store", "chdb://host/x"], "a chdb URL names a directory"),
        (["--store", "clickhouse:///otel"], "a clickhouse URL names its server"),
        (["--store", "chdb:///tmp/x", "--data-dir", "/tmp/y"], "give --store or --data-dir, not both"),
        (["--store", "clickhouse://127.0.0.1:9/otel"], "cannot reach ClickHouse at clickhouse://127.0.0.1:9/otel"),
    ],
)
def test_a_store_that_cannot_be_used_stops_the_receiver_saying_why(arguments: list[str], message: str) -> None:
    done = subprocess.run(
        [*COMMAND, "receiver", "--no-grpc", "--port", "0", *arguments], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 2, done.stderr
    assert message in " ".join(done.stderr.split())


def test_a_password_in_the_store_url_is_never_shown() -> None:
    done = subprocess.run(
        [*COMMAND, "receiver", "--no-grpc", "--port", "0", "--store", "clickhouse://bot:s3cret-pw@127.0.0.1:9/otel"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2
    assert "s3cret-pw" not in done.stderr and "bot:REDACTED@127.0.0.1:9" in " ".join(done.stderr.split())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--trace-id", "00" * 16, "--store", "chdb:///tmp/x", "--receiver", "http://a"], "not both"),
        (["--trace-id", "zz", "--store", "STORE"], "trace id must be 32 hex digits"),
        (["--trace-id", "ab" * 16, "--store", "STORE"], f"trace {'ab' * 16} is not in chdb://"),
    ],
)
def test_evaluate_from_a_store_says_what_is_wrong(tmp_path: Path, arguments: list[str], message: str) -> None:
    store = f"chdb://{tmp_path / 'empty'}"
    connection = connect(store + "?create=true")
    connection.command("CREATE DATABASE IF NOT EXISTS otel")
    from coordbench.clickhouse import ClickHouseTraces

    ClickHouseTraces(connection).ensure_schema()
    connection.close()
    arguments = [store if a == "STORE" else a for a in arguments]
    done = subprocess.run([*COMMAND, "evaluate", *arguments], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stdout
    assert message in " ".join(done.stderr.split())
