"""ClickHouse as the trace store: the OpenTelemetry Collector exporter's tables, read and written by coordbench.

See :mod:`coordbench.clickhouse.store` for how a receiver uses it, :mod:`coordbench.clickhouse.rows`
for the row mapping, :mod:`coordbench.clickhouse.schema` for the tables and
:mod:`coordbench.clickhouse.url` for store URLs. Names are imported on first use
(:mod:`coordbench.lazy`): the settings read a store URL without loading the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordbench.lazy import lazy_exports

if TYPE_CHECKING:
    from coordbench.clickhouse.connection import ClickHouseError, connect
    from coordbench.clickhouse.store import ClickHouseStore
    from coordbench.clickhouse.traces import ClickHouseTraces, EvaluationsSink
    from coordbench.clickhouse.url import Shard, StoreUrl, parse_store_url

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

__getattr__ = lazy_exports(
    __name__,
    {
        "ClickHouseError": "connection",
        "connect": "connection",
        "ClickHouseStore": "store",
        "ClickHouseTraces": "traces",
        "EvaluationsSink": "traces",
        "Shard": "url",
        "StoreUrl": "url",
        "parse_store_url": "url",
    },
)
