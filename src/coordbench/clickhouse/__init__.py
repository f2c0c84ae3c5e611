"""ClickHouse as the trace store: the OpenTelemetry Collector exporter's tables, read and written by coordbench.

See :mod:`coordbench.clickhouse.store` for how a receiver uses it, :mod:`coordbench.clickhouse.rows`
for the row mapping and :mod:`coordbench.clickhouse.schema` for the tables.
"""

from coordbench.clickhouse.connection import ClickHouseError, Shard, StoreUrl, connect, parse_store_url
from coordbench.clickhouse.store import ClickHouseStore
from coordbench.clickhouse.traces import ClickHouseTraces, EvaluationsSink

__all__ = [
    "ClickHouseError",
    "ClickHouseStore",
    "ClickHouseTraces",
    "EvaluationsSink",
    "Shard",
    "StoreUrl",
    "connect",
    "parse_store_url",
]
