"""Reading and writing the exporter's tables: a trace by id, recent activity, the evaluations table.

Every read of one trace goes through the exporter's trace-id index table first
(``otel_traces_trace_id_ts``: per trace, the first and last span start, in seconds), so
ClickHouse reads only the days the trace spans, never the whole spans table; that is how the
exporter's own readers (Grafana's ClickHouse data source, Jaeger's ClickHouse storage) do it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from coordbench.clickhouse.connection import ClickHouse, ClickHouseError, connect
from coordbench.clickhouse.rows import EVALUATION_COLUMNS, READ_COLUMNS, span_of_row, span_row, time_number
from coordbench.clickhouse.schema import EVALUATIONS_TABLE, evaluations_ddl, exporter_ddl, quoted
from coordbench.clickhouse.url import Shard
from coordbench.online.records import EvaluationRecord, ScenarioSummary
from coordbench.spans import SpanData

__all__ = ["Activity", "ClickHouseTraces", "EvaluationsSink"]

logger = logging.getLogger(__name__)

_HEX = frozenset("0123456789abcdef")

BATCH = 500
"""Most traces one query reads (:meth:`ClickHouseTraces.traces`): the ids travel in the query, bounded."""


@dataclass(frozen=True)
class Activity:
    """What the index table says of one recent trace.

    Attributes:
        trace_id: 32 hex digits.
        rows: Its index rows (one per insert that held its spans, until ClickHouse merges them).
        last_start: The latest start of any of its spans, Unix seconds.
    """

    trace_id: str
    rows: int
    last_start: int


def check_trace_id(trace_id: str) -> str:
    """``trace_id`` in lower case.

    Raises:
        ValueError: If it is not 32 hex digits.
    """
    key = trace_id.strip().lower()
    if len(key) != 32 or not set(key) <= _HEX:
        raise ValueError(f"trace id must be 32 hex digits, got {trace_id[:80]!r}")
    return key


class ClickHouseTraces:
    """The exporter's span tables and coordbench's evaluations table in one ClickHouse database.

    Calls block (each is one statement); the store calls them off the event loop.
    """

    def __init__(self, connection: ClickHouse) -> None:
        """Use ``connection`` (its URL names the database and the spans table)."""
        self.connection = connection
        url = connection.url
        self.spans_table = quoted(url.database, url.table)
        self.index_table = quoted(url.database, f"{url.table}_trace_id_ts")
        self.evaluations_table = quoted(url.database, EVALUATIONS_TABLE)

    def ensure_schema(self) -> None:
        """Create the evaluations table, and the exporter's tables when the URL says ``create``."""
        url = self.connection.url
        statements = (exporter_ddl(url.database, url.table) if url.create else []) + evaluations_ddl(url.database)
        for statement in statements:
            self.connection.command(statement)

    # --- spans ---------------------------------------------------------------------------------

    def insert(self, spans: Iterable[SpanData]) -> None:
        """Write spans as the exporter writes them (:func:`~coordbench.clickhouse.rows.span_row`)."""
        self.connection.insert(self.connection.url.table, (span_row(s) for s in spans))

    def trace(self, trace_id: str) -> list[SpanData]:
        """The trace's spans by start time, each span once (a retried export inserts it again).

        Rows ClickHouse holds that no span could come from (a hand-written insert) are left
        out and logged.

        Raises:
            ValueError: If ``trace_id`` is not 32 hex digits.
            ClickHouseError: If the query fails.
        """
        key = check_trace_id(trace_id)
        index = f"FROM {self.index_table} WHERE TraceId = {{trace:String}}"
        rows = self.connection.rows(
            f"SELECT {', '.join(READ_COLUMNS)} FROM {self.spans_table} "
            "WHERE TraceId = {trace:String} "
            # DateTime64 bounds: ClickHouse 26.9 skips granules wrongly comparing DateTime64 with DateTime
            f"AND Timestamp >= toDateTime64((SELECT min(Start) {index}), 9) "
            f"AND Timestamp < toDateTime64((SELECT max(End) {index}), 9) + INTERVAL 1 SECOND "
            "ORDER BY Timestamp, SpanId",
            {"trace": key},
        )
        return self._spans(key, rows)

    def traces(self, trace_ids: Iterable[str], *, for_evaluation: bool = False) -> dict[str, list[SpanData]]:
        """Many traces' spans, in one query per :data:`BATCH` traces: ``{trace_id: spans by start time}``.

        As :meth:`trace` reads one: the trace-id index table gives each trace's first and last span
        start, and the spans table is read between the earliest and the latest of the batch (one
        look at the index table and one at the spans table, however many traces). A trace the
        index table does not know is absent from the result.

        Args:
            trace_ids: The traces (32 hex digits each; repeats read once).
            for_evaluation: Leave out what no evaluator reads (the spans' events and links): less
                to send and to parse. The spans are otherwise the same.

        Raises:
            ValueError: If a trace id is not 32 hex digits.
            ClickHouseError: If a query fails.
        """
        keys = sorted({check_trace_id(t) for t in trace_ids})
        columns = EVALUATION_COLUMNS if for_evaluation else READ_COLUMNS
        out: dict[str, list[SpanData]] = {}
        for start in range(0, len(keys), BATCH):
            chunk = keys[start : start + BATCH]
            bounds = self.connection.rows(
                f"SELECT toUnixTimestamp(min(Start)), toUnixTimestamp(max(End)) FROM {self.index_table} "
                "WHERE TraceId IN {ids:Array(String)}",
                {"ids": chunk},
            )
            if not bounds or bounds[0][0] is None or int(bounds[0][1]) == 0:
                continue  # no trace of the chunk is known
            first, last = int(bounds[0][0]), int(bounds[0][1])
            rows = self.connection.rows(
                f"SELECT {', '.join(columns)} FROM {self.spans_table} "
                "WHERE TraceId IN {ids:Array(String)} "
                "AND Timestamp >= toDateTime64({first:UInt32}, 9) "
                "AND Timestamp < toDateTime64({last:UInt32}, 9) + INTERVAL 1 SECOND "
                "ORDER BY TraceId, Timestamp, SpanId",
                {"ids": chunk, "first": first, "last": last},
            )
            grouped: dict[str, list[Sequence[Any]]] = {}
            for row in rows:
                grouped.setdefault(str(row[1]), []).append(row)
            for key in chunk:
                if key in grouped:
                    out[key] = self._spans(key, grouped[key])
        return out

    @staticmethod
    def _spans(trace_id: str, rows: Sequence[Sequence[Any]]) -> list[SpanData]:
        seen: dict[str, SpanData] = {}
        for row in rows:
            try:
                span = span_of_row(row)
            except (ValueError, TypeError) as exc:
                logger.warning("trace %s: a row of the spans table is not a span (%s); left out", trace_id, exc)
                continue
            seen.setdefault(span.span_id, span)
        return sorted(seen.values(), key=lambda s: (s.start_time_unix_nano, s.span_id))

    def bounds(self, trace_id: str) -> tuple[int, int, int] | None:
        """The trace's index rows, first and last span start (Unix seconds), or ``None`` if unknown."""
        key = check_trace_id(trace_id)
        rows = self.connection.rows(
            f"SELECT count(), toUnixTimestamp(min(Start)), toUnixTimestamp(max(End)) FROM {self.index_table} "
            "WHERE TraceId = {trace:String}",
            {"trace": key},
        )
        count, first, last = (int(v) for v in rows[0]) if rows else (0, 0, 0)
        return (count, first, last) if count else None

    def activity(self, window: float, shard: Shard | None = None, limit: int = 100_000) -> list[Activity]:
        """Traces a span of which started in the last ``window`` seconds (by the index table alone), of ``shard``."""
        shard = shard or Shard()
        where = ["End >= now() - toIntervalSecond({window:UInt32})"]
        parameters: dict[str, object] = {"window": max(1, round(window)), "limit": limit}
        if shard.count > 1:
            where.append("cityHash64(TraceId) % {count:UInt32} = {index:UInt32}")
            parameters |= {"count": shard.count, "index": shard.index}
        rows = self.connection.rows(
            f"SELECT TraceId, count(), toUnixTimestamp(max(End)) FROM {self.index_table} "
            f"WHERE {' AND '.join(where)} GROUP BY TraceId ORDER BY TraceId LIMIT {{limit:UInt32}}",
            parameters,
        )
        # a TraceId no OTLP span has (written by hand, say) is not followed
        return [Activity(str(t), int(n), int(end)) for t, n, end in rows if len(str(t)) == 32 and set(str(t)) <= _HEX]

    def recent(self, limit: int, before: tuple[int, str] | None = None) -> list[tuple[str, int, int]]:
        """Traces by latest span start, newest first: ``(trace_id, first_start, last_start)`` (Unix seconds).

        Args:
            limit: How many.
            before: Only traces before this ``(last_start, trace_id)`` (the previous page's last).
        """
        having = ""
        parameters: dict[str, object] = {"limit": limit}
        if before is not None:
            having = "HAVING (last, TraceId) < ({end:UInt32}, {trace:String}) "
            parameters |= {"end": before[0], "trace": before[1]}
        rows = self.connection.rows(
            f"SELECT TraceId, toUnixTimestamp(min(Start)) AS first, toUnixTimestamp(max(End)) AS last "
            f"FROM {self.index_table} GROUP BY TraceId {having}ORDER BY last DESC, TraceId DESC LIMIT {{limit:UInt32}}",
            parameters,
        )
        return [(str(t), int(first), int(last)) for t, first, last in rows]

    def summaries(self, trace_ids: Sequence[str], first: int, last: int) -> dict[str, tuple[int, list[str], str]]:
        """Per trace: its span count, services, and its root span's name (``""`` while it has none)."""
        if not trace_ids:
            return {}
        rows = self.connection.rows(
            "SELECT TraceId, count(), arraySort(groupUniqArray(ServiceName)), anyIf(SpanName, ParentSpanId = '') "
            f"FROM {self.spans_table} WHERE TraceId IN {{ids:Array(String)}} "
            "AND Timestamp >= toDateTime64({first:UInt32}, 9) "
            "AND Timestamp < toDateTime64({last:UInt32}, 9) + INTERVAL 1 SECOND "
            "GROUP BY TraceId",
            {"ids": list(trace_ids), "first": first, "last": last},
        )
        return {str(t): (int(n), [str(s) for s in services if s], str(root)) for t, n, services, root in rows}

    # --- evaluations ---------------------------------------------------------------------------

    def write_evaluation(self, record: EvaluationRecord, evaluator: str) -> None:
        """One row per scenario of an online evaluation (a trace with none still gets a row, scenario ``""``)."""
        scenarios = record.scenarios or (ScenarioSummary("", 0.0, False, None, None, ()),)
        rows = [
            {
                "TraceId": record.trace_id,
                "Scenario": s.scenario,
                "Revision": record.revision,
                "EvaluatedAt": time_number(record.evaluated_unix_nano),
                "Team": record.team,
                "Complete": record.complete,
                "SpanCount": record.span_count,
                "LateSpans": record.late_spans,
                "Judge": record.judge,
                "Score": s.score,
                "Passed": s.passed,
                "AnswerQuality": s.answer_quality,
                "CoordinationQuality": s.coordination_quality,
                "Fired": list(s.fired),
                "Evaluator": evaluator,
                "Evaluation": record.line,
            }
            for s in scenarios
        ]
        self.connection.insert(EVALUATIONS_TABLE, rows)

    def evaluated(self, trace_ids: Sequence[str]) -> set[str]:
        """Which of these traces already have an evaluation in the table."""
        if not trace_ids:
            return set()
        rows = self.connection.rows(
            f"SELECT DISTINCT TraceId FROM {self.evaluations_table} WHERE TraceId IN {{ids:Array(String)}}",
            {"ids": list(trace_ids)},
        )
        return {str(row[0]) for row in rows}


class EvaluationsSink:
    """Online evaluations written to a ClickHouse's ``coordbench_evaluations``, from a receiver holding spans itself.

    Receivers behind the load balancer keep their traces in memory and evaluate them there; this
    puts each evaluation beside the spans the Collector's exporter wrote, for SQL and Grafana.
    It connects on first use and again after a failure (each failure is the caller's to count).

    Args:
        url: The ClickHouse store URL.
        evaluator: Written in the ``Evaluator`` column (which receiver evaluated).
    """

    def __init__(self, url: str, evaluator: str) -> None:
        """Remember where to write; nothing is connected yet."""
        self.url = url
        self.evaluator = evaluator
        self._traces: ClickHouseTraces | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Connect and make the evaluations table now, so a server that cannot write them says so at start.

        Raises:
            ClickHouseError: If ClickHouse cannot be reached or refuses the table.
        """
        with self._lock:
            self._connected()

    def _connected(self) -> ClickHouseTraces:
        if self._traces is None:
            traces = ClickHouseTraces(connect(self.url))
            try:
                traces.ensure_schema()
            except ClickHouseError:
                traces.connection.close()
                raise
            self._traces = traces
        return self._traces

    def __call__(self, record: EvaluationRecord) -> None:
        """Write one evaluation (blocking)."""
        with self._lock:
            traces = self._connected()
            try:
                traces.write_evaluation(record, self.evaluator)
            except ClickHouseError:
                traces.connection.close()
                self._traces = None
                raise

    def close(self) -> None:
        """Disconnect."""
        with self._lock:
            if self._traces is not None:
                self._traces.connection.close()
                self._traces = None
