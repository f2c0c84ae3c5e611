"""The tables: the OpenTelemetry Collector ClickHouse exporter's, and coordbench's evaluations.

The span tables are the exporter's own DDL (``exporter/clickhouseexporter/internal/sqltemplates``
in opentelemetry-collector-contrib, the 0.15x releases our collector configurations pin): the
``otel_traces`` table with its bloom-filter indexes (the variant the exporter creates on servers
without full-text indexes), the ``otel_traces_trace_id_ts`` index table and the materialized
view that fills it. coordbench creates them only when asked (``coordbench clickhouse init``, or
a store opened with ``create=1``); in production the exporter has already made them.

``coordbench_evaluations`` is ours: one row per evaluated scenario, written by online evaluation,
so Grafana's ClickHouse data source and SQL users can join scores with traces.
"""

from __future__ import annotations

import re

__all__ = ["EVALUATIONS_TABLE", "evaluations_ddl", "exporter_ddl", "identifier", "quoted"]

EVALUATIONS_TABLE = "coordbench_evaluations"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def identifier(name: str, what: str) -> str:
    """``name`` if it is a plain SQL identifier (letters, digits, ``_``; 64 at most).

    Raises:
        ValueError: Otherwise (database and table names are written into SQL, never quoted from input).
    """
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"{what} must be letters, digits and _ (64 at most, not starting with a digit), got {name!r}")
    return name


def quoted(database: str, table: str) -> str:
    """```database`.`table``` (both checked by :func:`identifier`)."""
    return f"`{identifier(database, 'the database')}`.`{identifier(table, 'the table')}`"


_TRACES = """CREATE TABLE IF NOT EXISTS {table} (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    ResourceAttributeItems Array(String) ALIAS arrayMap(kv -> concat(kv.1, '=', kv.2),
        CAST(ResourceAttributes, 'Array(Tuple(String, String))')),
    SpanAttributeItems Array(String) ALIAS arrayMap(kv -> concat(kv.1, '=', kv.2),
        CAST(SpanAttributes, 'Array(Tuple(String, String))')),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1,
    INDEX idx_lower_span_name lower(SpanName) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8
) ENGINE = MergeTree()
PARTITION BY toDate(Timestamp)
PRIMARY KEY (ServiceName, SpanName, toDateTime(Timestamp))
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp), Timestamp)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1"""

_TRACE_ID_TS = """CREATE TABLE IF NOT EXISTS {table} (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = AggregatingMergeTree()
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1"""

_TRACE_ID_TS_MV = """CREATE MATERIALIZED VIEW IF NOT EXISTS {view}
TO {index}
AS SELECT
    TraceId,
    min(Timestamp) as Start,
    max(Timestamp) as End
FROM {table}
WHERE TraceId != ''
GROUP BY TraceId"""

_EVALUATIONS = """CREATE TABLE IF NOT EXISTS {table} (
    TraceId String CODEC(ZSTD(1)),
    Scenario LowCardinality(String) CODEC(ZSTD(1)),
    Revision UInt32,
    EvaluatedAt DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    Team LowCardinality(String) CODEC(ZSTD(1)),
    Complete Bool,
    SpanCount UInt32,
    LateSpans UInt32,
    Judge Bool,
    Score Float64,
    Passed Bool,
    AnswerQuality Nullable(Float64),
    CoordinationQuality Nullable(Float64),
    Fired Array(LowCardinality(String)),
    Evaluator LowCardinality(String) CODEC(ZSTD(1)),
    Evaluation String CODEC(ZSTD(3)),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1
) ENGINE = ReplacingMergeTree(Revision)
PARTITION BY toYYYYMM(EvaluatedAt)
ORDER BY (Team, TraceId, Scenario)
SETTINGS index_granularity = 8192"""


def exporter_ddl(database: str = "otel", table: str = "otel_traces") -> list[str]:
    """The exporter's statements for ``database.table``: the spans table, its index table, the view between."""
    index = f"{table}_trace_id_ts"
    return [
        f"CREATE DATABASE IF NOT EXISTS `{identifier(database, 'the database')}`",
        _TRACES.format(table=quoted(database, table)),
        _TRACE_ID_TS.format(table=quoted(database, index)),
        _TRACE_ID_TS_MV.format(
            view=quoted(database, f"{table}_trace_id_ts_mv"),
            index=quoted(database, index),
            table=quoted(database, table),
        ),
    ]


def evaluations_ddl(database: str = "otel", table: str = EVALUATIONS_TABLE) -> list[str]:
    """Coordbench's evaluations table (one row per evaluated scenario; the newest revision wins on merge)."""
    return [
        f"CREATE DATABASE IF NOT EXISTS `{identifier(database, 'the database')}`",
        _EVALUATIONS.format(table=quoted(database, table)),
    ]
