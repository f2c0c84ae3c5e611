"""OTLP → ClickHouse rows, field by field against the Collector exporter's mapping, in the real engine (chdb).

The expected values are worked out by hand from the exporter's code (``exporter_traces.go``:
``Timestamp`` the start, ``Duration`` end minus start in ns, ``Kind().String()``,
``Code().String()``, ``AttributesToMap`` = pdata's ``Value.AsString``), not from our mapping.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coordbench import semconv
from coordbench.clickhouse import ClickHouseStore, ClickHouseTraces, connect
from coordbench.clickhouse.connection import ClickHouse
from coordbench.clickhouse.rows import go_float, span_of_row, span_row, time_number, value_string
from coordbench.online.records import EvaluationRecord, ScenarioSummary
from coordbench.otlp import encoded_span
from coordbench.spans import SpanData, SpanEvent, SpanKind, SpanLink, StatusCode

T0 = 1_795_000_000_123_456_789  # 2026-11-18, nanoseconds
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"

SPAN = SpanData(
    trace_id=TRACE,
    span_id="00f067aa0ba902b7",
    parent_span_id="53995c3f42cd8ad8",
    name="SendMessage worker",
    kind=SpanKind.CLIENT,
    start_time_unix_nano=T0,
    end_time_unix_nano=T0 + 1_500,
    attributes={
        "text": "héllo <b>&",
        semconv.GEN_AI_USAGE_INPUT_TOKENS: 42,
        semconv.A2A_STEP_COST: 0.5,
        semconv.A2A_STREAMING: True,
        semconv.COORDBENCH_SCENARIO_PARTICIPANTS: ("a", "b<c"),
        semconv.A2A_REQUEST_FINGERPRINT: (3, 17, 4294967295),
        "raw": b"hi",
        "nested": {"z": 1, "a": [True, None]},
        "big": 1e21,
        "tiny": 1.5e-7,
        "whole": 2.0,
        "nan": math.nan,
    },
    status_code=StatusCode.ERROR,
    status_message="worker failed",
    resource={semconv.SERVICE_NAME: "coordinator", "service.namespace": "travel", "process.pid": 4242},
    events=(SpanEvent("exception", T0 + 700, {"exception.type": "ValueError", "attempt": 2}),),
    scope_name="coordbench.instrument",
    links=(SpanLink("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", {"why": "retry"}, "k=v"),),
)


def test_each_field_is_what_the_exporter_writes() -> None:
    row = span_row(SPAN, scope_version="1.2.3")
    assert row["Timestamp"] == "1795000000.123456789"
    assert row["Duration"] == 1_500
    assert (row["TraceId"], row["SpanId"], row["ParentSpanId"]) == (TRACE, "00f067aa0ba902b7", "53995c3f42cd8ad8")
    assert (row["SpanName"], row["SpanKind"], row["ServiceName"]) == ("SendMessage worker", "Client", "coordinator")
    assert (row["StatusCode"], row["StatusMessage"]) == ("Error", "worker failed")
    assert (row["ScopeName"], row["ScopeVersion"]) == ("coordbench.instrument", "1.2.3")
    assert row["ResourceAttributes"] == {
        "service.name": "coordinator",
        "service.namespace": "travel",
        "process.pid": "4242",
    }
    assert row["SpanAttributes"] == {
        "text": "héllo <b>&",  # a string is stored as it is (only JSON inside arrays escapes HTML)
        "gen_ai.usage.input_tokens": "42",
        "a2a.step.cost": "0.5",
        "a2a.streaming": "true",
        "coordbench.scenario.participants": '["a","b\\u003cc"]',  # Go's json.Marshal escapes <, >, &
        "a2a.request.fingerprint": "[3,17,4294967295]",
        "raw": "aGk=",  # bytes: standard base64
        "nested": '{"a":[true,null],"z":1}',  # a map: keys sorted
        "big": "1e+21",
        "tiny": "1.5e-7",
        "whole": "2",
        "nan": "json: unsupported value: NaN",
    }
    assert row["Events.Timestamp"] == ["1795000000.123457489"]
    assert row["Events.Name"] == ["exception"]
    assert row["Events.Attributes"] == [{"exception.type": "ValueError", "attempt": "2"}]
    assert (row["Links.TraceId"], row["Links.SpanId"], row["Links.TraceState"]) == (
        ["0af7651916cd43dd8448eb211c80319c"],
        ["b7ad6b7169203331"],
        ["k=v"],
    )
    assert row["Links.Attributes"] == [{"why": "retry"}]
    root = span_row(SPAN._replace(parent_span_id=None, kind=SpanKind.SERVER, status_code=StatusCode.UNSET))
    assert (root["ParentSpanId"], root["SpanKind"], root["StatusCode"]) == ("", "Server", "Unset")
    # an end before the start: Go's uint64 subtraction wraps, and reading it back undoes that
    backwards = SPAN._replace(end_time_unix_nano=T0 - 10)
    assert span_row(backwards)["Duration"] == 2**64 - 10


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (100.0, "100"),
        (0.1, "0.1"),
        (1 / 3, "0.3333333333333333"),
        (123456789.125, "123456789.125"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (-2.5e-10, "-2.5e-10"),
        (5e-324, "5e-324"),
        (math.inf, "json: unsupported value: +Inf"),
    ],
)
def test_doubles_are_written_as_javascript_prints_them(value: float, expected: str) -> None:
    assert go_float(value) == expected


def test_doubles_match_javascript_itself() -> None:
    """Go's float64AsString follows ES6 Number-to-string; node is that reference, for a spread of values."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed: the hand-worked cases above still hold")
    values = [0.1 * 3, 2**53 + 0.0, 1e21 - 2**20, 9.999999999999999e20, 1e-6 * 0.999, 7.0e-7, 6.02214076e23, -1e-300]
    values += [1.0 / n for n in range(1, 40)] + [n * 1.1e15 for n in range(1, 30)]
    script = f"for (const v of {json.dumps(values)}) console.log(String(v))"
    printed = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True, timeout=60).stdout
    assert printed.splitlines() == [go_float(v) for v in values]


def test_values_as_strings() -> None:
    assert [value_string(v) for v in ("", False, -7, b"", (), {})] == ["", "false", "-7", "", "[]", "{}"]


@pytest.fixture
def clickhouse(tmp_path: Path) -> Iterator[ClickHouse]:
    """The ClickHouse engine in this process, with the exporter's tables and ours."""
    connection = connect(f"chdb://{tmp_path / 'ch'}?create=true")
    ClickHouseTraces(connection).ensure_schema()
    yield connection
    connection.close()


def test_the_engine_holds_the_row_as_the_exporter_would(clickhouse: ClickHouse) -> None:
    traces = ClickHouseTraces(clickhouse)
    traces.insert([SPAN])
    (row,) = clickhouse.rows(
        "SELECT toUnixTimestamp64Nano(Timestamp), Duration, SpanKind, StatusCode, ServiceName, "
        "SpanAttributes['gen_ai.usage.input_tokens'], ResourceAttributes['process.pid'], "
        "arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`), `Events.Attributes`[1]['attempt'], "
        "`Links.TraceState`, length(SpanAttributeItems) FROM otel.otel_traces"
    )
    assert row == [T0, 1_500, "Client", "Error", "coordinator", "42", "4242", [T0 + 700], "2", ["k=v"], 12]
    # the exporter's materialized view filled the trace-id index table: first and last start, in seconds
    assert clickhouse.rows(
        "SELECT TraceId, toUnixTimestamp(Start), toUnixTimestamp(End) FROM otel.otel_traces_trace_id_ts"
    ) == [[TRACE, T0 // 10**9, T0 // 10**9]]


def test_reading_back_gives_the_declared_types_and_strings_otherwise(clickhouse: ClickHouse) -> None:
    traces = ClickHouseTraces(clickhouse)
    traces.insert([SPAN, SPAN])  # a retried export: the same span twice
    (back,) = traces.trace(TRACE)
    assert back.attributes == {
        "text": "héllo <b>&",
        semconv.GEN_AI_USAGE_INPUT_TOKENS: 42,
        semconv.A2A_STEP_COST: 0.5,
        semconv.A2A_STREAMING: True,
        semconv.COORDBENCH_SCENARIO_PARTICIPANTS: ("a", "b<c"),
        semconv.A2A_REQUEST_FINGERPRINT: (3, 17, 4294967295),
        "raw": "aGk=",  # undeclared: what the exporter stored
        "nested": '{"a":[true,null],"z":1}',
        "big": "1e+21",
        "tiny": "1.5e-7",
        "whole": "2",
        "nan": "json: unsupported value: NaN",
    }
    expected = SPAN._replace(
        attributes=back.attributes,
        resource={"service.name": "coordinator", "service.namespace": "travel", "process.pid": "4242"},
        events=(SpanEvent("exception", T0 + 700, {"exception.type": "ValueError", "attempt": "2"}),),
    )
    assert back == expected
    backwards = SPAN._replace(span_id="00000000000000bb", end_time_unix_nano=T0 - 10)
    traces.insert([backwards])
    assert [s.end_time_unix_nano for s in traces.trace(TRACE) if s.span_id == "00000000000000bb"] == [T0 - 10]


def test_many_traces_read_in_one_batch_are_each_what_reading_it_alone_gives(
    clickhouse: ClickHouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coordbench.clickhouse import traces as module

    traces = ClickHouseTraces(clickhouse)
    ids = [f"{k:032x}" for k in range(1, 8)]
    # seven traces a day apart, a retried export among them, each with SPAN's events and links
    stored = [SPAN._replace(trace_id=t, start_time_unix_nano=T0 + k * 86_400 * 10**9,
                            end_time_unix_nano=T0 + k * 86_400 * 10**9 + 1_500) for k, t in enumerate(ids)]  # fmt: skip
    traces.insert(stored + stored[:2])
    alone = {t: traces.trace(t) for t in ids}
    monkeypatch.setattr(module, "BATCH", 3)  # three queries of at most three traces
    unknown = "f" * 32
    assert traces.traces([*reversed(ids), ids[0].upper(), unknown]) == alone  # repeats once; the unknown absent
    for_evaluation = traces.traces(ids, for_evaluation=True)
    assert for_evaluation == {t: [s._replace(events=(), links=()) for s in spans] for t, spans in alone.items()}
    assert alone[ids[0]][0].events and alone[ids[0]][0].links  # what was left out was there to leave
    assert traces.traces([]) == {} and traces.traces([unknown]) == {}
    with pytest.raises(ValueError, match="32 hex digits"):
        traces.traces([ids[0], "not-a-trace"])


def test_a_declared_attribute_that_is_not_of_its_type_stays_a_string() -> None:
    row = [T0, TRACE, "00f067aa0ba902b7", "", "x", "Internal", {}, "", {}, 0, "Unset", "", [], [], [], [], [], [], []]
    odd = {
        semconv.GEN_AI_USAGE_INPUT_TOKENS: "forty",
        semconv.A2A_STEP_COST: "free",
        semconv.A2A_STREAMING: "yes",
        semconv.COORDBENCH_SCENARIO_PARTICIPANTS: "[1, 2]",
        semconv.A2A_REQUEST_FINGERPRINT: '["a"]',
    }
    row[8] = odd
    assert span_of_row(row).attributes == odd
    # the exporter's older names for kinds and codes read too
    row[5], row[10] = "SPAN_KIND_SERVER", "STATUS_CODE_ERROR"
    back = span_of_row(row)
    assert (back.kind, back.status_code) == (SpanKind.SERVER, StatusCode.ERROR)
    row[5] = "Sideways"
    with pytest.raises(ValueError, match="unknown SpanKind 'Sideways'"):
        span_of_row(row)


def test_declared_attributes_are_typed_in_place_and_the_map_keeps_its_order() -> None:
    stored = {
        "z.first": "1",  # undeclared: a string, however numeric
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS: "-0",
        "a.middle": "true",
        semconv.A2A_USAGE_ESTIMATED: "false",
        semconv.A2A_STEP_COST: "json: unsupported value: +Inf",
        semconv.A2A_RESPONSE_FINGERPRINT: "[9,2]",
        semconv.GEN_AI_USAGE_INPUT_TOKENS: "12345678901234567890",  # 20 digits: past int64, kept as text
        "m.last": "[9,2]",
    }
    row = [T0, TRACE, "00f067aa0ba902b7", "", "x", "Client", {"service.name": "a", "server.port": "8080"}, "s"]
    row += [stored, 7, "Ok", "", [T0 + 1], ["e"], [{"server.port": "1"}], [], [], [], []]
    span = span_of_row(row)
    assert list(span.attributes.items()) == [
        ("z.first", "1"),
        (semconv.GEN_AI_USAGE_OUTPUT_TOKENS, 0),
        ("a.middle", "true"),
        (semconv.A2A_USAGE_ESTIMATED, False),
        (semconv.A2A_STEP_COST, math.inf),
        (semconv.A2A_RESPONSE_FINGERPRINT, (9, 2)),
        (semconv.GEN_AI_USAGE_INPUT_TOKENS, "12345678901234567890"),
        ("m.last", "[9,2]"),
    ]
    assert (
        span.attributes is not stored and stored[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] == "-0"
    )  # the row is not changed
    assert span.resource == {"service.name": "a", "server.port": 8080}
    assert span.events == (SpanEvent("e", T0 + 1, {"server.port": 1}),)
    assert span.links == ()
    assert (span.kind, span.status_code, span.end_time_unix_nano, span.scope_name) == (
        SpanKind.CLIENT,
        StatusCode.OK,
        T0 + 7,
        "s",
    )


def test_a_hand_written_row_that_is_no_span_is_left_out(
    clickhouse: ClickHouse, caplog: pytest.LogCaptureFixture
) -> None:
    traces = ClickHouseTraces(clickhouse)
    traces.insert([SPAN])
    clickhouse.insert(
        "otel_traces",
        [{"Timestamp": "1795000000.2", "TraceId": TRACE, "SpanId": "00000000000000aa", "SpanKind": "Sideways"}],
    )
    assert [s.span_id for s in traces.trace(TRACE)] == [SPAN.span_id]
    assert "is not a span" in caplog.text


def test_the_shipped_evaluations_ddl_runs(tmp_path: Path) -> None:
    """``dashboards/clickhouse/coordbench_evaluations.sql``, for SQL users, makes the table online evaluation writes."""
    text = (Path(__file__).parents[2] / "dashboards" / "clickhouse" / "coordbench_evaluations.sql").read_text()
    connection = connect(f"chdb://{tmp_path / 'ch'}")
    try:
        for statement in (s.strip() for s in text.split(";")):
            body = "\n".join(line for line in statement.splitlines() if not line.startswith("--")).strip()
            if body:
                connection.command(body)
        record = EvaluationRecord(
            trace_id=TRACE, team="travel", evaluated_unix_nano=T0, span_count=9, complete=True, revision=1,
            late_spans=0, judge=False, line="{}",
            scenarios=(ScenarioSummary("s1", 0.5, False, None, 0.75, ("serial",)),),
        )  # fmt: skip
        ClickHouseTraces(connection).write_evaluation(record, "receiver-1:4318")
        assert connection.rows(
            "SELECT TraceId, Scenario, Score, AnswerQuality, CoordinationQuality, Fired, Evaluator "
            "FROM otel.coordbench_evaluations"
        ) == [[TRACE, "s1", 0.5, None, 0.75, ["serial"], "receiver-1:4318"]]
    finally:
        connection.close()


@pytest.mark.parametrize("start", [0, 1, 999_999_999, T0, 2**63 - 1])
def test_times_from_the_epoch_to_2262_read_back_exactly(clickhouse: ClickHouse, start: int) -> None:
    span = SPAN._replace(
        start_time_unix_nano=start,
        end_time_unix_nano=start + 7,
        events=(SpanEvent("e", start, {}),),
    )
    clickhouse.insert("otel_traces", [span_row(span)])
    (row,) = clickhouse.rows("SELECT toUnixTimestamp64Nano(Timestamp), Duration FROM otel.otel_traces")
    assert row == [start, 7]


async def test_the_watch_follows_only_trace_ids_an_otlp_span_can_have(tmp_path: Path) -> None:
    """A row written by hand with a TraceId no OTLP span has is not followed, and the watch goes on."""
    store = ClickHouseStore(f"chdb://{tmp_path / 'ch'}?create=true", encode=encoded_span, poll=0.05)
    await store.open()
    seen: list[str] = []
    told = asyncio.Event()

    class Watcher:
        def grown(self, trace_id: bytes, new_spans: int, now: float) -> None:
            seen.append(f"{trace_id.hex()} on look {store.polls}")
            told.set()

        def dropped(self, trace_id: bytes, *, evicted: bool) -> None:
            pass

    try:
        now = time.time_ns()
        store.traces.insert([SPAN._replace(start_time_unix_nano=now, end_time_unix_nano=now + 5)])
        # sorts before TRACE, so a look that choked on it would never get to TRACE
        odd = {"Timestamp": time_number(now), "TraceId": "0" * 31 + "g", "SpanId": "1" * 16, "SpanKind": "Internal"}
        store.traces.connection.insert("otel_traces", [odd])
        store.watch(Watcher())
        await asyncio.wait_for(told.wait(), timeout=120)  # the look that saw both rows told of one trace
        assert seen == [f"{TRACE} on look 1"] and store.poll_failures == 0
    finally:
        await store.close()
