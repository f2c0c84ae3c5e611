"""Grafana over ClickHouse: evaluations joined with the spans they judge (compose's ``scale`` profile).

Grafana's ClickHouse data source (``grafana-clickhouse-datasource``) runs these SQL queries on the
exporter's tables and coordbench's ``coordbench_evaluations``. Each query's text is what a SQL user
would write too; the tests run every one of them in the ClickHouse engine (chdb) over real rows,
with Grafana's ``$__timeFilter`` macro expanded as the plugin expands it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CLICKHOUSE_UID", "SQL_PANELS", "SqlPanel", "clickhouse_dashboard", "clickhouse_datasource"]

CLICKHOUSE_UID = "coordbench-clickhouse"


@dataclass(frozen=True)
class SqlPanel:
    """One panel: a title, what it shows, its SQL and how it is drawn."""

    title: str
    description: str
    sql: str
    kind: str = "table"


SQL_PANELS: tuple[SqlPanel, ...] = (
    SqlPanel(
        "Scores by team",
        "Each team's evaluated scenarios in the time range: how many, mean score, pass rate, mean coordination.",
        """SELECT Team,
       count() AS scenarios,
       round(avg(Score), 3) AS mean_score,
       round(avg(Passed), 3) AS pass_rate,
       round(avg(CoordinationQuality), 3) AS mean_coordination
FROM otel.coordbench_evaluations FINAL
WHERE $__timeFilter(EvaluatedAt)
GROUP BY Team
ORDER BY mean_score ASC""",
    ),
    SqlPanel(
        "Weakest traces, with their spans",
        "The lowest-scored scenarios in the time range, joined with their traces in otel_traces: "
        "how many spans, how many failed, and how long the trace ran.",
        """SELECT e.TraceId AS trace,
       e.Team AS team,
       e.Scenario AS scenario,
       round(e.Score, 3) AS score,
       arrayStringConcat(e.Fired, ', ') AS evidence,
       t.spans AS spans,
       t.errors AS errors,
       round(t.seconds, 3) AS seconds
FROM (SELECT * FROM otel.coordbench_evaluations FINAL WHERE $__timeFilter(EvaluatedAt)) AS e
INNER JOIN
(
    SELECT TraceId,
           count() AS spans,
           countIf(StatusCode = 'Error') AS errors,
           (max(toUnixTimestamp64Nano(Timestamp) + Duration) - min(toUnixTimestamp64Nano(Timestamp))) / 1e9
               AS seconds
    FROM otel.otel_traces
    WHERE TraceId IN (SELECT TraceId FROM otel.coordbench_evaluations WHERE $__timeFilter(EvaluatedAt))
    GROUP BY TraceId
) AS t ON t.TraceId = e.TraceId
ORDER BY score ASC, trace ASC
LIMIT 20""",
    ),
    SqlPanel(
        "Evidence fired, by team",
        "How often each piece of coordination evidence fired, per team, in the time range.",
        """SELECT Team, arrayJoin(Fired) AS evidence, count() AS scenarios
FROM otel.coordbench_evaluations FINAL
WHERE $__timeFilter(EvaluatedAt)
GROUP BY Team, evidence
ORDER BY scenarios DESC, Team, evidence""",
    ),
)
"""The panels of the ClickHouse dashboard, in order."""


def clickhouse_datasource() -> dict[str, Any]:
    """Grafana's provisioning of the ClickHouse data source (the compose service, the password from the environment)."""
    return {
        "name": "ClickHouse",
        "uid": CLICKHOUSE_UID,
        "type": "grafana-clickhouse-datasource",
        "jsonData": {
            "host": "clickhouse",
            "port": 8123,
            "protocol": "http",
            "username": "coordbench",
            "defaultDatabase": "otel",
            "traces": {"defaultDatabase": "otel", "defaultTable": "otel_traces", "otelEnabled": True},
        },
        "secureJsonData": {"password": "$CLICKHOUSE_PASSWORD"},
    }


def clickhouse_dashboard() -> dict[str, Any]:
    """The dashboard, as Grafana's JSON model: one full-width panel per :data:`SQL_PANELS` entry."""
    source = {"type": "grafana-clickhouse-datasource", "uid": CLICKHOUSE_UID}
    panels: list[dict[str, Any]] = []
    for n, panel in enumerate(SQL_PANELS):
        panels.append(
            {
                "id": n + 1,
                "type": panel.kind,
                "title": panel.title,
                "description": panel.description,
                "datasource": source,
                "gridPos": {"h": 9, "w": 24, "x": 0, "y": 9 * n},
                "targets": [
                    {
                        "refId": "A",
                        "datasource": source,
                        "editorType": "sql",
                        "format": 1,
                        "queryType": "table",
                        "rawSql": panel.sql,
                    }
                ],
            }
        )
    return {
        "title": "coordbench: evaluations in ClickHouse",
        "uid": "coordbench-clickhouse-evaluations",
        "description": "Online evaluations (coordbench_evaluations) joined with the spans the Collector wrote.",
        "tags": ["coordbench", "clickhouse"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "panels": panels,
    }
