"""The Grafana dashboard and the Prometheus alert rules for online evaluation, built from the metric names.

Every query is written from :data:`coordbench.meters.PROMETHEUS`, the names ``/metrics`` uses,
so a renamed metric breaks the build of these files rather than a dashboard in production.
``make dashboards`` writes them under ``dashboards/``; a test holds the files equal to what
this module builds, and another runs every query and rule in a real Prometheus.

Dashboard variables: ``$team`` (one or more teams, or all) and Grafana's own
``$__rate_interval``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coordbench.meters import PROMETHEUS

__all__ = [
    "ALERTS",
    "ALERT_FOR",
    "DROP_RATIO",
    "LOW_COORDINATION",
    "PANELS",
    "Alert",
    "Panel",
    "alert_rules",
    "files",
    "grafana_dashboard",
    "write",
]

PROMETHEUS_UID = "coordbench-prometheus"
JAEGER_UID = "coordbench-jaeger"
_DS = {"type": "prometheus", "uid": PROMETHEUS_UID}
TEAM = 'team=~"$team"'
RATE = "$__rate_interval"

LOW_COORDINATION = 0.5
"""A team's mean coordination quality over 15 minutes below this fires ``CoordbenchCoordinationLow``."""
DROP_RATIO = 0.85
"""A team's 15-minute mean below this share of its 6-hour mean fires ``CoordbenchCoordinationDrop``."""
ALERT_FOR = "10m"
"""How long a coordination alert's condition must hold before it fires."""
MIN_EVALUATIONS = 5
"""Scenarios a team must have had evaluated in the window before its coordination can alert."""


def _name(otel: str, series: str = "") -> str:
    return PROMETHEUS[otel] + series


NL = "\n  "


def _mean(otel: str, window: str, by: str = "team", selector: str = "", sep: str = " ") -> str:
    """The mean of a histogram's observations over ``window``, by ``by`` (``sep`` before the division)."""
    labels = f"{{{selector}}}" if selector else ""
    return (
        f"sum by ({by}) (increase({_name(otel, '_sum')}{labels}[{window}])){sep}/ "
        f"sum by ({by}) (increase({_name(otel, '_count')}{labels}[{window}]))"
    )


def _quantile(q: float, otel: str, by: str, selector: str = TEAM) -> str:
    return f"histogram_quantile({q}, sum by ({by}, le) (rate({_name(otel, '_bucket')}{{{selector}}}[{RATE}])))"


@dataclass(frozen=True)
class Panel:
    """One dashboard panel.

    Attributes:
        title: Its title.
        description: What it shows and how to read it.
        exprs: PromQL, with the legend of each (``{{team}}``).
        labels: The labels its queries group by (each series must carry them).
        unit: Grafana's unit (``percentunit``, ``s``, ``short``, ``reqps``).
        kind: ``timeseries``, ``heatmap`` or ``bargauge``.
        row: The row it sits in.
        bounded: A quality in 0-1 (the axis is fixed).
    """

    title: str
    description: str
    exprs: tuple[tuple[str, str], ...]
    labels: tuple[str, ...]
    unit: str = "short"
    kind: str = "timeseries"
    row: str = "Coordination"
    bounded: bool = False


PANELS: tuple[Panel, ...] = (
    Panel(
        "Coordination quality by team",
        "Mean coordination quality of the scenarios evaluated in the last 15 minutes: how well the agents "
        "worked together, apart from the answer (docs/scoring.md).",
        ((_mean("coordbench.evaluation.coordination_quality", "15m", selector=TEAM), "{{team}}"),),
        ("team",),
        unit="percentunit",
        bounded=True,
    ),
    Panel(
        "Overall score by team",
        "Mean overall score (answer and coordination) of the scenarios evaluated in the last 15 minutes.",
        ((_mean("coordbench.evaluation.score", "15m", selector=TEAM), "{{team}}"),),
        ("team",),
        unit="percentunit",
        bounded=True,
    ),
    Panel(
        "Score distribution",
        "How many evaluated scenarios fell in each score bucket (0.1 wide), for the teams chosen.",
        (
            (
                f"sum by (le) (increase({_name('coordbench.evaluation.score', '_bucket')}{{{TEAM}}}[{RATE}]))",
                "{{le}}",
            ),
        ),
        ("le",),
        kind="heatmap",
    ),
    Panel(
        "Evidence over time",
        "Scenarios in which each piece of evidence fired (idle members, serialised work, duplicate "
        "requests, relays, failures, bottlenecks...), by team.",
        (
            (
                f"sum by (team, evidence) (increase({_name('coordbench.evidence')}{{{TEAM}}}[{RATE}]))",
                "{{team}}: {{evidence}}",
            ),
        ),
        ("team", "evidence"),
    ),
    Panel(
        "Slowest hubs",
        "The ten hubs (agents that delegate to, or serve, two or more agents) with the longest 90th-percentile "
        "time to answer a request.",
        (
            (
                f"topk(10, {_quantile(0.9, 'coordbench.hub.request.duration', 'team, hub')})",
                "{{team}}: {{hub}}",
            ),
        ),
        ("team", "hub"),
        unit="s",
        kind="bargauge",
    ),
    Panel(
        "Who failed",
        "Failed scenarios in the last hour by the agent failure attribution named responsible and the rule that "
        "found it (failed call, wrong content, lost content, gave up...: docs/attribution.md), by team.",
        (
            (
                f"sum by (team, agent, rule) (increase({_name('coordbench.attributions')}{{{TEAM}}}[1h]))",
                "{{team}}: {{agent}} ({{rule}})",
            ),
        ),
        ("team", "agent", "rule"),
        kind="bargauge",
    ),
    Panel(
        "Critical path (p90)",
        "90th percentile of the critical path: the chain of calls that decided how long a scenario took.",
        ((_quantile(0.9, "coordbench.trace.critical_path", "team"), "{{team}}"),),
        ("team",),
        unit="s",
    ),
    Panel(
        "Agent graph: centralisation and density",
        "Mean degree centralisation and density of the teams' agent graphs (shape, described not judged).",
        (
            (_mean("coordbench.graph.degree_centralisation", "15m", selector=TEAM), "{{team}} centralisation"),
            (_mean("coordbench.graph.density", "15m", selector=TEAM), "{{team}} density"),
        ),
        ("team",),
        unit="percentunit",
        bounded=True,
    ),
    Panel(
        "Traces evaluated",
        "Traces evaluated per second, by team (a re-evaluation after late spans counts again).",
        ((f"sum by (team) (rate({_name('coordbench.traces.evaluated')}{{{TEAM}}}[{RATE}]))", "{{team}}"),),
        ("team",),
        unit="ops",
        row="Evaluation",
    ),
    Panel(
        "Evaluation latency",
        "Time from a trace's last span to the end of its evaluation (the quiet period included): median and p95.",
        (
            (_quantile(0.5, "coordbench.evaluation.duration", "team"), "{{team}} p50"),
            (_quantile(0.95, "coordbench.evaluation.duration", "team"), "{{team}} p95"),
        ),
        ("team",),
        unit="s",
        row="Evaluation",
    ),
    Panel(
        "Evaluation queue",
        "Traces waiting for a worker against the queue's bound, and traces waiting for their quiet period.",
        (
            (_name("coordbench.evaluation.queue.size"), "queued"),
            (_name("coordbench.evaluation.queue.capacity"), "capacity"),
            (_name("coordbench.evaluation.pending"), "waiting to be quiet"),
        ),
        (),
        row="Evaluation",
    ),
    Panel(
        "Skipped evaluations",
        "Traces not evaluated, by reason: queue_full (too many at once), evicted (the store needed the room "
        "first), failed (the evaluation failed or its worker died), timed_out (its worker was killed).",
        ((f"sum by (reason) (rate({_name('coordbench.traces.skipped')}[{RATE}]))", "{{reason}}"),),
        ("reason",),
        unit="ops",
        row="Evaluation",
    ),
    Panel(
        "Ingest rate",
        "Spans per second reaching the receivers, and those stored.",
        (
            (f"sum(rate({_name('coordbench.spans.received')}[{RATE}]))", "received"),
            (f"sum(rate({_name('coordbench.spans.stored')}[{RATE}]))", "stored"),
        ),
        (),
        unit="ops",
        row="Ingest",
    ),
    Panel(
        "Rejected spans",
        "Spans refused per second, by reason (malformed, store full, batch larger than the store, disk failed).",
        ((f"sum by (reason) (rate({_name('coordbench.spans.rejected_by_reason')}[{RATE}]))", "{{reason}}"),),
        ("reason",),
        unit="ops",
        row="Ingest",
    ),
    Panel(
        "Backpressure",
        "Exports being decoded now (past the in-flight bound, senders get 429), and how full the store is "
        "(at 100% with nothing idle to evict, senders get 503).",
        (
            (_name("coordbench.exports.inflight"), "exports in flight"),
            (f"{_name('coordbench.store.spans')} / {_name('coordbench.store.max_spans')}", "spans held / bound"),
            (f"{_name('coordbench.store.bytes')} / {_name('coordbench.store.max_bytes')}", "bytes held / bound"),
        ),
        (),
        row="Ingest",
    ),
)
"""The coordination dashboard's panels, row by row."""


@dataclass(frozen=True)
class Alert:
    """One Prometheus alerting rule.

    Attributes:
        name: The alert's name.
        expr: Its condition.
        summary: Its summary annotation.
        labels: The labels its series carry (the team, the reason).
        parts: The expressions the condition compares: each returns a series per label value
            whenever there is data, whether or not the alert holds (a test checks them live).
        severity: Its severity label.
        for_: How long the condition must hold.
    """

    name: str
    expr: str
    summary: str
    labels: tuple[str, ...]
    parts: tuple[str, ...]
    severity: str = "warning"
    for_: str = ALERT_FOR
    extra: Mapping[str, str] = field(default_factory=dict[str, str])


def _enough(window: str) -> str:
    count = _name("coordbench.evaluation.coordination_quality", "_count")
    return f"sum by (team) (increase({count}[{window}])) >= {MIN_EVALUATIONS}"


_SHORT = _mean("coordbench.evaluation.coordination_quality", "15m", sep=NL)
_LONG = _mean("coordbench.evaluation.coordination_quality", "6h", sep=NL)
_SKIPPED = f"sum by (reason) (increase({_name('coordbench.traces.skipped')}[10m]))"
_REJECTED = f"sum by (reason) (rate({_name('coordbench.spans.rejected_by_reason')}[5m]))"

ALERTS: tuple[Alert, ...] = (
    Alert(
        "CoordbenchCoordinationDrop",
        f"(\n  {_SHORT}\n) < {DROP_RATIO} * (\n  {_LONG}\n)\nand on (team) ({_enough('15m')})",
        "Coordination of team {{ $labels.team }} dropped: its 15-minute mean is below "
        f"{DROP_RATIO:.0%} of its 6-hour mean.",
        ("team",),
        (_SHORT, _LONG, _enough("15m")),
    ),
    Alert(
        "CoordbenchCoordinationLow",
        f"(\n  {_SHORT}\n) < {LOW_COORDINATION}\nand on (team) ({_enough('15m')})",
        'Coordination of team {{ $labels.team }} is low: its 15-minute mean is {{ $value | printf "%.2f" }}.',
        ("team",),
        (_SHORT, _enough("15m")),
    ),
    Alert(
        "CoordbenchEvaluationsSkipped",
        f"{_SKIPPED} > 0",
        "Traces went unevaluated in the last 10 minutes ({{ $labels.reason }}): raise evaluate_queue or "
        "evaluate_workers, or the store's bounds.",
        ("reason",),
        (_SKIPPED,),
        for_="0m",
    ),
    Alert(
        "CoordbenchIngestRejections",
        f"{_REJECTED} > 0",
        "The receiver is refusing spans ({{ $labels.reason }}).",
        ("reason",),
        (_REJECTED,),
        for_="5m",
    ),
)
"""The alerting rules, in one group."""


def alert_rules() -> dict[str, Any]:
    """The Prometheus rule file (one group, ``coordbench``)."""
    rules: list[dict[str, Any]] = []
    for alert in ALERTS:
        rules.append(
            {
                "alert": alert.name,
                "expr": alert.expr,
                "for": alert.for_,
                "labels": {"severity": alert.severity},
                "annotations": {"summary": alert.summary, **alert.extra},
            }
        )
    return {"groups": [{"name": "coordbench", "rules": rules}]}


def _panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": panel.unit}
    if panel.bounded:
        defaults |= {"min": 0, "max": 1}
    out: dict[str, Any] = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": _DS,
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "targets": [
            {"refId": chr(ord("A") + n), "datasource": _DS, "expr": expr, "legendFormat": legend}
            | ({"format": "heatmap"} if panel.kind == "heatmap" else {})
            for n, (expr, legend) in enumerate(panel.exprs)
        ],
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
    }
    if panel.kind == "bargauge":
        out["options"] = {
            "orientation": "horizontal",
            "displayMode": "gradient",
            "reduceOptions": {"calcs": ["lastNotNull"]},
        }
    return out


def grafana_dashboard() -> dict[str, Any]:
    """The coordination dashboard, as Grafana's JSON model."""
    panels: list[dict[str, Any]] = []
    y = 0
    panel_id = 1
    rows: list[str] = list(dict.fromkeys(p.row for p in PANELS))
    for row in rows:
        panels.append({"id": panel_id, "type": "row", "title": row, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})  # fmt: skip
        panel_id += 1
        y += 1
        for n, panel in enumerate(p for p in PANELS if p.row == row):
            panels.append(_panel_json(panel, panel_id, 12 * (n % 2), y + 8 * (n // 2)))
            panel_id += 1
        y += 8 * ((sum(p.row == row for p in PANELS) + 1) // 2)
    team_query = f"label_values({_name('coordbench.evaluations')}, team)"
    return {
        "title": "coordbench: coordination",
        "uid": "coordbench-coordination",
        "description": "Online evaluation of A2A multi-agent coordination (coordbench receiver --evaluate).",
        "tags": ["coordbench", "a2a", "agents"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "templating": {
            "list": [
                {
                    "name": "team",
                    "label": "Team",
                    "type": "query",
                    "datasource": _DS,
                    "definition": team_query,
                    "query": {"query": team_query, "refId": "team"},
                    "refresh": 2,
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "current": {"text": "All", "value": "$__all"},
                    "sort": 1,
                }
            ]
        },
        "links": [
            {"title": "Traces in Jaeger", "type": "link", "url": '/explore?left={"datasource":"' + JAEGER_UID + '"}'}
        ],
        "panels": panels,
    }


def _datasources() -> dict[str, Any]:
    return {
        "apiVersion": 1,
        "datasources": [
            {"name": "Prometheus", "uid": PROMETHEUS_UID, "type": "prometheus", "access": "proxy",
             "url": "http://prometheus:9090", "isDefault": True},
            {"name": "Jaeger", "uid": JAEGER_UID, "type": "jaeger", "access": "proxy", "url": "http://jaeger:16686"},
        ],
    }  # fmt: skip


def _scale_datasources() -> dict[str, Any]:
    """The ``scale`` profile's Grafana: its Prometheus (scraping the receivers), and ClickHouse."""
    from coordbench.dashboards.clickhouse import clickhouse_datasource

    return {
        "apiVersion": 1,
        "datasources": [
            {"name": "Prometheus", "uid": PROMETHEUS_UID, "type": "prometheus", "access": "proxy",
             "url": "http://prometheus-scale:9090", "isDefault": True},
            clickhouse_datasource(),
        ],
    }  # fmt: skip


SCALE_RECEIVERS = ("receiver-1:4318", "receiver-2:4318")
"""The ``scale`` profile's receivers, as its Prometheus scrapes them."""


def _providers() -> dict[str, Any]:
    return {
        "apiVersion": 1,
        "providers": [
            {"name": "coordbench", "folder": "coordbench", "type": "file", "disableDeletion": False,
             "options": {"path": "/var/lib/grafana/dashboards"}},
        ],
    }  # fmt: skip


def _prometheus_config(targets: Sequence[str] = ("green:9009",)) -> dict[str, Any]:
    return {
        "global": {"scrape_interval": "15s", "evaluation_interval": "30s"},
        "rule_files": ["/etc/prometheus/alerts.yml"],
        "scrape_configs": [{"job_name": "coordbench", "metrics_path": "/metrics",
                            "static_configs": [{"targets": list(targets)}]}],
    }  # fmt: skip


def _yaml(document: Mapping[str, Any], header: str) -> str:
    import yaml  # a development dependency: only `make dashboards` and its test write these files

    class Indented(yaml.SafeDumper):
        """Block sequences indented under their key, as yamllint (and most hands) write them."""

        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            super().increase_indent(flow, False)  # pyright: ignore[reportUnknownMemberType]

    def block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None  # PromQL written on several lines stays so
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)  # pyright: ignore[reportUnknownMemberType]

    Indented.add_representer(str, block)
    text = yaml.dump(dict(document), Dumper=Indented, sort_keys=False, width=100, allow_unicode=True)
    return header + text


_HEADER = "# Generated by `make dashboards` (coordbench.dashboards.grafana): edit the module, not this file.\n"


def files() -> dict[str, str]:
    """Every file under ``dashboards/``, by path relative to it (``scale``: the compose profile of that name)."""
    from coordbench.clickhouse.schema import evaluations_ddl
    from coordbench.dashboards.clickhouse import clickhouse_dashboard

    ddl = "".join(statement + ";\n\n" for statement in evaluations_ddl())
    return {
        "clickhouse/coordbench_evaluations.sql": "-- " + _HEADER[2:] + ddl.rstrip("\n") + "\n",
        "grafana/dashboards/coordination.json": json.dumps(grafana_dashboard(), indent=2) + "\n",
        "grafana/dashboards/clickhouse.json": json.dumps(clickhouse_dashboard(), indent=2) + "\n",
        "grafana/provisioning/datasources/coordbench.yaml": _yaml(_datasources(), _HEADER),
        "grafana/provisioning/datasources/scale.yaml": _yaml(_scale_datasources(), _HEADER),
        "grafana/provisioning/dashboards/coordbench.yaml": _yaml(_providers(), _HEADER),
        "prometheus/alerts.yml": _yaml(alert_rules(), _HEADER),
        "prometheus/prometheus.yml": _yaml(_prometheus_config(), _HEADER),
        "prometheus/prometheus-scale.yml": _yaml(_prometheus_config(SCALE_RECEIVERS), _HEADER),
    }


def write(root: Path) -> list[Path]:
    """Write :func:`files` under ``root``; the paths written."""
    written: list[Path] = []
    for relative, text in files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    import sys

    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "dashboards")):
        print(path)
