"""The assessment report: one self-contained HTML file (inline CSS and SVG; nothing fetched).

It shows, per scenario: the agent graph, a waterfall of the scenario's spans with the critical
path, the graph metrics against their thresholds and the flags that fired, the coordination
score part by part with its evidence, the evaluators' scores and weights, the judge's reasoning,
strengths and weaknesses, the trace's completeness, and for a failed scenario which agent and
step made it fail (marked in the graph and the waterfall) with the chain of evidence in words.
Every number shown carries its exact value in a ``data-value`` attribute, so a test (or a script)
can check the page against ``results.json``. :func:`render_comparison` puts several assessments' graphs side by side.

The page is written by templates (:mod:`coordbench.report.templates`) that escape every value:
this module only picks the values out of the results document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from coordbench import __version__
from coordbench.evals.coordination import CoordinationResult, Part
from coordbench.evals.judge import JudgeResult
from coordbench.graph.metrics.detections import Detections
from coordbench.graph.metrics.result import GraphMetrics
from coordbench.report.svg import agent_graph_svg, waterfall_svg
from coordbench.report.templates import render
from coordbench.results.document import PART_ORDER, ResultsDocument, ScenarioEntry
from coordbench.spans import SpanData

__all__ = ["CSS", "render_comparison", "render_report", "scenario_view"]

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:1.5em;margin-bottom:4px} h2{border-bottom:2px solid #3b6ea8;padding-bottom:4px;margin-top:36px}
h3{margin-top:22px} .sub{color:#666} table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:0.92em}
th{background:#f3f5f8} .num{text-align:right;font-variant-numeric:tabular-nums}
.fired{color:#c0392b;font-weight:600}
.flag{color:#a86f00;font-style:italic} .ok{color:#2e7d32} .badge{display:inline-block;padding:2px 8px;
border-radius:10px;background:#eef2f7;margin-right:6px} .pass{background:#e3f3e5} .fail{background:#fbe3e0}
svg text{font-size:11px;fill:#222} svg .label{font-family:monospace;font-size:10px} .grid{display:flex;
flex-wrap:wrap;gap:16px} .card{border:1px solid #ddd;border-radius:6px;padding:8px} ul{margin:4px 0}
.waterfall-box{overflow-x:auto} .card svg.agent-graph{max-width:100%;height:auto}
.compare .card{flex:1 1 340px;max-width:520px}
.panel{flex:1 1 480px;max-width:520px} .legend{list-style:none;padding:0;font-size:0.85em;columns:2}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
"""


def page_html(title: str, body: Markup) -> str:
    return str(render("page.html.j2", title=title, css=Markup(CSS), body=body, version=__version__))  # noqa: S704 - our constant


_HELD_UP = ("bottleneck", "parallelism")
"""Parts whose agents held the team up: drawn red in the graph (queued, dominated, failed, or serialised work)."""


def scenario_graph(entry: ScenarioEntry | None, title: str) -> Markup:
    graph = entry.graph() if entry is not None else None
    if graph is None:
        return Markup('<p class="sub">no graph (the graph evaluator did not run)</p>')
    coordination = entry.coordination() if entry is not None else None
    parts = coordination.parts if coordination is not None else {}
    limited = sorted({a for name in _HELD_UP if name in parts and parts[name].fired for a in parts[name].agents})
    blamed = entry.attribution.agent if entry is not None and entry.attribution is not None else None
    return agent_graph_svg(
        graph.agents,
        graph.edges,
        bottlenecks=graph.detections.bottleneck_agents,
        isolated=graph.detections.isolated_agents,
        limited=limited,
        blamed=blamed,
        title=title,
    )


def _metrics(graph: GraphMetrics) -> list[dict[str, Any]]:
    detections, thresholds = graph.detections, graph.thresholds
    workload: dict[str, Any] = graph.metrics.get("workload") or {}
    rows = [
        ("topology", graph.topology, "described, not scored", False),
        ("classification / label", f"{graph.classification} / {graph.label}", "", False),
        ("density", detections.density, f"healthy above {thresholds.healthy_density}",
         not detections.healthy_distribution),
        ("max flow betweenness", detections.max_flow_betweenness,
         f"bottleneck above {thresholds.bottleneck_betweenness}", bool(detections.bottleneck_agents)),
        ("busiest agent's share", detections.busiest_share,
         f"over-centralised above {thresholds.over_centralised_share}", detections.over_centralised),
        ("degree centralisation", graph.metrics.get("degree_centralisation"), "1 = star", False),
        ("workload Gini", workload.get("gini"), "0 = even", False),
        ("bottleneck agents", ", ".join(detections.bottleneck_agents) or "none", "",
         bool(detections.bottleneck_agents)),
        ("isolated agents", ", ".join(detections.isolated_agents) or "none", "", bool(detections.isolated_agents)),
        ("interactions", graph.interactions, "messages between agents", False),
    ]  # fmt: skip
    return [{"name": name, "value": value, "rule": rule, "fired": fired} for name, value, rule, fired in rows]


def _ordered(parts: Mapping[str, Part]) -> list[str]:
    return [n for n in PART_ORDER if n in parts] + sorted(set(parts) - set(PART_ORDER))


def _coordination(coordination: CoordinationResult | None) -> dict[str, Any] | None:
    if coordination is None:
        return None
    parts = coordination.parts
    ordered = _ordered(parts)
    return {
        "score": coordination.score,
        "answer_quality": coordination.answer_quality,
        "coordination_quality": coordination.coordination_quality,
        "outcome_factor": coordination.outcome_factor,
        "confidence": coordination.confidence,
        "weighted": [
            {"name": name, "value": parts[name].value, "weight": parts[name].weight}
            for name in ordered
            if parts[name].weight is not None
        ],
        "hubs": coordination.hubs,
        "parts": [
            {
                "name": name,
                "value": parts[name].value,
                "weight": parts[name].weight,
                "confidence": parts[name].confidence,
                "formula": parts[name].formula,
                "fired": ", ".join(parts[name].fired),
                "evidence": parts[name].evidence,
            }
            for name in ordered
        ],
    }


def _evaluators(entry: ScenarioEntry) -> list[dict[str, Any]]:
    if entry.score_components is None:
        return []
    scores, weights = entry.score_components.components, entry.score_components.weights
    return [{"name": name, "score": scores[name], "weight": weights.get(name)} for name in sorted(scores)]


def _judge(judge: JudgeResult | None) -> dict[str, Any] | None:
    if judge is None:
        return None
    return {
        "who": f"an LLM ({judge.model})" if judge.judge == "llm" else "the rule-based judge",
        "why": judge.fallback_reason or None,
        "reasoning": judge.reasoning,
        "strengths": judge.strengths,
        "weaknesses": judge.weaknesses,
    }


def _completeness(entry: ScenarioEntry) -> dict[str, Any] | None:
    completeness = entry.completeness or {}
    if not completeness:
        return None
    return {
        "complete": bool(completeness.get("complete")),
        "span_count": completeness.get("span_count"),
        "unmatched": len(completeness.get("unmatched_clients") or []),
        "orphans": len(completeness.get("orphans") or []),
        "timed_out": bool(completeness.get("timed_out")),
    }


def scenario_view(entry: ScenarioEntry, spans: Sequence[SpanData] | None) -> dict[str, Any]:
    """What the report (and the live UI's trace page) shows of one scenario, for `_scenario.html.j2`."""
    graph = entry.graph()
    return {
        "id": entry.id,
        "passed": entry.passed,
        "score": entry.score,
        "answer_quality": entry.answer_quality,
        "coordination_quality": entry.coordination_quality,
        "mode": entry.mode,
        "status": entry.status,
        "error": entry.error or None,
        "trace_id": entry.trace_id or None,
        "graph_svg": scenario_graph(entry, entry.id),
        "metrics": _metrics(graph) if graph is not None else [],
        "coordination": _coordination(entry.coordination()),
        "evaluators": _evaluators(entry),
        "judge": _judge(entry.judge()),
        "completeness": _completeness(entry),
        "attribution": entry.attribution,
        "waterfall_svg": waterfall_svg(spans, decisive=entry.attribution.span_id if entry.attribution else None)
        if spans
        else None,
    }


def render_report(document: ResultsDocument, spans: Mapping[str, Sequence[SpanData]] | None = None) -> str:
    """The report of one ``results.json`` document (one or more rows), as HTML.

    Args:
        document: The document.
        spans: Each scenario's spans, by scenario id (for the waterfalls), when available.
    """
    participants = sorted(document.participants.items())
    rows = [
        {
            "assessment_id": row.assessment_id,
            "score": row.score,
            "rewards": row.task_rewards,
            "spread": sorted(row.detail.spread.items()),
            "max_score": row.max_score,
            "pass_rate": row.pass_rate,
            "scenarios_passed": row.scenarios_passed,
            "scenarios": row.scenarios,
            "time_used": row.time_used,
            "participants": participants,
            "scenario_list": [scenario_view(entry, (spans or {}).get(entry.id)) for entry in row.detail.scenarios],
        }
        for row in document.results
    ]
    return page_html("coordbench assessment report", render("report.html.j2", rows=rows))


def _safe_link(link: str) -> str:
    """``link`` if it is relative or http(s); a link with any other scheme (``javascript:``) is dropped."""
    scheme = urlsplit(link).scheme.lower()
    return link if scheme in ("", "http", "https") else "#"


def _flags(detections: Detections) -> list[str]:
    """The PRD's flags that fired, in words: they describe the shape (never a score)."""
    flags: list[str] = []
    if detections.bottleneck_agents:
        flags.append("bottleneck: " + ", ".join(detections.bottleneck_agents))
    if detections.isolated_agents:
        flags.append("isolated: " + ", ".join(detections.isolated_agents))
    if detections.over_centralised:
        flags.append("over-centralised")
    return flags


def render_comparison(items: Sequence[tuple[str, ResultsDocument, str]]) -> str:
    """Several assessments side by side: ``(title, results.json document, link to its report)`` each."""
    teams: list[dict[str, Any]] = []
    for title, document, link in items:
        row = document.results[0] if document.results else None
        first = row.detail.scenarios[0] if row is not None and row.detail.scenarios else None
        graph = first.graph() if first is not None else None
        teams.append(
            {
                "title": title,
                "link": _safe_link(link),
                "score": row.score if row else None,
                "answer": row.task_rewards.answer_quality if row else None,
                "coordination": row.task_rewards.coordination_quality if row else None,
                "passed": row.scenarios_passed if row else None,
                "scenarios": row.scenarios if row else None,
                "weaknesses": row.detail.weaknesses[:3] if row else [],
                "topology": str(graph.topology if graph else None),
                "classification": str(graph.classification if graph else None),
                "flags": _flags(graph.detections) if graph else [],
                "label": str(graph.label if graph else None),
                "graph_svg": scenario_graph(first, title),
            }
        )
    return page_html("coordbench: teams compared", render("comparison.html.j2", teams=teams))
