"""The assessment report: one self-contained HTML file (inline CSS and SVG; nothing fetched).

It shows, per scenario: the agent graph, a waterfall of the scenario's spans with the critical
path, the graph metrics against their thresholds and the flags that fired, the coordination
score part by part with its evidence, the evaluators' scores and weights, the judge's reasoning,
strengths and weaknesses, and the trace's completeness. Every number shown carries its exact
value in a ``data-value`` attribute, so a test (or a script) can check the page against
``results.json``. :func:`render_comparison` puts several assessments' graphs side by side.

The page is written by templates (:mod:`coordbench.report.templates`) that escape every value:
this module only picks the values out of the results document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

from markupsafe import Markup

from coordbench import __version__
from coordbench.report.svg import agent_graph_svg, waterfall_svg
from coordbench.report.templates import render
from coordbench.spans import SpanData

__all__ = ["render_comparison", "render_report"]

_CSS = """
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
"""


def _page(title: str, body: Markup) -> str:
    return str(render("page.html.j2", title=title, css=Markup(_CSS), body=body, version=__version__))  # noqa: S704 - our constant


_HELD_UP = ("bottleneck", "parallelism")
"""Parts whose agents held the team up: drawn red in the graph (queued, dominated, failed, or serialised work)."""


def _graph(results: Mapping[str, Any], title: str) -> Markup:
    graph = cast("dict[str, Any]", results.get("graph") or {})
    if not graph:
        return Markup('<p class="sub">no graph (the graph evaluator did not run)</p>')
    detections = cast("dict[str, Any]", graph.get("detections") or {})
    coordination = cast("dict[str, Any]", results.get("coordination") or {})
    parts = cast("dict[str, dict[str, Any]]", coordination.get("parts") or {})
    fired = [parts[name] for name in _HELD_UP if name in parts and parts[name].get("fired")]
    limited = sorted({str(a) for part in fired for a in cast("list[Any]", part.get("agents") or [])})
    return agent_graph_svg(
        cast("list[dict[str, Any]]", graph.get("agents") or []),
        cast("list[dict[str, Any]]", graph.get("edges") or []),
        bottlenecks=cast("list[str]", detections.get("bottleneck_agents") or []),
        isolated=cast("list[str]", detections.get("isolated_agents") or []),
        limited=limited,
        title=title,
    )


def _metrics(graph: Mapping[str, Any]) -> list[dict[str, Any]]:
    detections = cast("dict[str, Any]", graph.get("detections") or {})
    thresholds = cast("dict[str, Any]", graph.get("thresholds") or {})
    metrics = cast("dict[str, Any]", graph.get("metrics") or {})
    workload = cast("dict[str, Any]", metrics.get("workload") or {})
    rows = [
        ("topology", graph.get("topology"), "described, not scored", False),
        ("classification / label", f"{graph.get('classification')} / {graph.get('label')}", "", False),
        ("density", detections.get("density"), f"healthy above {thresholds.get('healthy_density')}",
         not detections.get("healthy_distribution", False)),
        ("max flow betweenness", detections.get("max_flow_betweenness"),
         f"bottleneck above {thresholds.get('bottleneck_betweenness')}", bool(detections.get("bottleneck_agents"))),
        ("busiest agent's share", detections.get("busiest_share"),
         f"over-centralised above {thresholds.get('over_centralised_share')}",
         bool(detections.get("over_centralised"))),
        ("degree centralisation", metrics.get("degree_centralisation"), "1 = star", False),
        ("workload Gini", workload.get("gini"), "0 = even", False),
        ("bottleneck agents", ", ".join(detections.get("bottleneck_agents") or []) or "none", "",
         bool(detections.get("bottleneck_agents"))),
        ("isolated agents", ", ".join(detections.get("isolated_agents") or []) or "none", "",
         bool(detections.get("isolated_agents"))),
        ("interactions", graph.get("interactions"), "messages between agents", False),
    ]  # fmt: skip
    return [{"name": name, "value": value, "rule": str(rule), "fired": fired} for name, value, rule, fired in rows]


_PART_ORDER = ("outcome", "participation", "efficiency", "parallelism", "bottleneck", "robustness", "information_flow")


def _coordination(coordination: Mapping[str, Any]) -> dict[str, Any] | None:
    if not coordination:
        return None
    parts = cast("dict[str, dict[str, Any]]", coordination.get("parts") or {})
    ordered = [n for n in _PART_ORDER if n in parts] + sorted(set(parts) - set(_PART_ORDER))
    weighted = [
        {"name": name, "value": parts[name].get("value"), "weight": parts[name].get("weight")}
        for name in ordered
        if isinstance(parts[name].get("weight"), int | float)
    ]
    return {
        "score": coordination.get("score"),
        "answer_quality": coordination.get("answer_quality"),
        "coordination_quality": coordination.get("coordination_quality"),
        "outcome_factor": coordination.get("outcome_factor"),
        "confidence": coordination.get("confidence"),
        "weighted": weighted,
        "hubs": [str(h) for h in cast("list[Any]", coordination.get("hubs") or [])],
        "parts": [
            {
                "name": name,
                "value": parts[name].get("value"),
                "weight": parts[name].get("weight"),
                "confidence": parts[name].get("confidence"),
                "formula": str(parts[name].get("formula", "")),
                "fired": ", ".join(str(f) for f in cast("list[Any]", parts[name].get("fired") or [])),
                "evidence": [str(e) for e in cast("list[Any]", parts[name].get("evidence") or [])],
            }
            for name in ordered
        ],
    }


def _evaluators(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    components = cast("dict[str, Any]", entry.get("score_components") or {})
    scores = cast("dict[str, float]", components.get("components") or {})
    weights = cast("dict[str, float]", components.get("weights") or {})
    return [{"name": name, "score": scores[name], "weight": weights.get(name)} for name in sorted(scores)]


def _judge(results: Mapping[str, Any]) -> dict[str, Any] | None:
    judge = cast("dict[str, Any]", results.get("llm_judge") or {})
    if not judge:
        return None
    return {
        "who": f"an LLM ({judge.get('model')})" if judge.get("judge") == "llm" else "the rule-based judge",
        "why": str(judge["fallback_reason"]) if judge.get("fallback_reason") else None,
        "reasoning": str(judge.get("reasoning", "")),
        "strengths": [str(x) for x in cast("list[Any]", judge.get("strengths") or [])],
        "weaknesses": [str(x) for x in cast("list[Any]", judge.get("weaknesses") or [])],
    }


def _completeness(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    completeness = cast("dict[str, Any]", entry.get("completeness") or {})
    if not completeness:
        return None
    return {
        "complete": bool(completeness.get("complete")),
        "span_count": completeness.get("span_count"),
        "unmatched": len(cast("list[str]", completeness.get("unmatched_clients") or [])),
        "orphans": len(cast("list[str]", completeness.get("orphans") or [])),
        "timed_out": bool(completeness.get("timed_out")),
    }


def _scenario(entry: Mapping[str, Any], spans: Sequence[SpanData] | None) -> dict[str, Any]:
    results = cast("dict[str, Any]", entry.get("results") or {})
    graph = cast("dict[str, Any]", results.get("graph") or {})
    return {
        "id": str(entry["id"]),
        "passed": bool(entry.get("passed")),
        "score": entry.get("score"),
        "answer_quality": entry.get("answer_quality"),
        "coordination_quality": entry.get("coordination_quality"),
        "mode": str(entry.get("mode")),
        "status": str(entry.get("status")),
        "error": str(entry["error"]) if entry.get("error") else None,
        "trace_id": str(entry["trace_id"]) if entry.get("trace_id") else None,
        "graph_svg": _graph(results, str(entry["id"])),
        "metrics": _metrics(graph) if graph else [],
        "coordination": _coordination(cast("dict[str, Any]", results.get("coordination") or {})),
        "evaluators": _evaluators(entry),
        "judge": _judge(results),
        "completeness": _completeness(entry),
        "waterfall_svg": waterfall_svg(spans) if spans else None,
    }


def render_report(document: Mapping[str, Any], spans: Mapping[str, Sequence[SpanData]] | None = None) -> str:
    """The report of one ``results.json`` document (one or more rows), as HTML.

    Args:
        document: ``{"participants": ..., "results": [row, ...]}``.
        spans: Each scenario's spans, by scenario id (for the waterfalls), when available.
    """
    rows: list[dict[str, Any]] = []
    participants = cast("dict[str, Any]", document.get("participants") or {})
    for row in cast("list[dict[str, Any]]", document.get("results") or []):
        detail = cast("dict[str, Any]", row.get("detail") or {})
        rows.append(
            {
                "assessment_id": str(row.get("assessment_id")),
                "score": row.get("score"),
                "rewards": cast("dict[str, Any]", row.get("task_rewards") or {}),
                "spread": sorted(cast("dict[str, Any]", detail.get("spread") or {}).items()),
                "max_score": row.get("max_score"),
                "pass_rate": row.get("pass_rate"),
                "scenarios_passed": row.get("scenarios_passed"),
                "scenarios": row.get("scenarios"),
                "time_used": row.get("time_used"),
                "participants": sorted((str(r), str(u)) for r, u in participants.items()),
                "scenario_list": [
                    _scenario(entry, (spans or {}).get(str(entry["id"])))
                    for entry in cast("list[dict[str, Any]]", detail.get("scenarios") or [])
                ],
            }
        )
    return _page("coordbench assessment report", render("report.html.j2", rows=rows))


def _safe_link(link: str) -> str:
    """``link`` if it is relative or http(s); a link with any other scheme (``javascript:``) is dropped."""
    scheme = urlsplit(link).scheme.lower()
    return link if scheme in ("", "http", "https") else "#"


def _flags(detections: Mapping[str, Any]) -> list[str]:
    """The PRD's flags that fired, in words: they describe the shape (never a score)."""
    flags: list[str] = []
    if detections.get("bottleneck_agents"):
        flags.append("bottleneck: " + ", ".join(str(a) for a in cast("list[Any]", detections["bottleneck_agents"])))
    if detections.get("isolated_agents"):
        flags.append("isolated: " + ", ".join(str(a) for a in cast("list[Any]", detections["isolated_agents"])))
    if detections.get("over_centralised"):
        flags.append("over-centralised")
    return flags


def render_comparison(items: Sequence[tuple[str, Mapping[str, Any], str]]) -> str:
    """Several assessments side by side: ``(title, results.json document, link to its report)`` each."""
    teams: list[dict[str, Any]] = []
    for title, document, link in items:
        row = cast("dict[str, Any]", (document.get("results") or [{}])[0])
        detail = cast("dict[str, Any]", row.get("detail") or {})
        entries = cast("list[dict[str, Any]]", detail.get("scenarios") or [])
        first = entries[0] if entries else {}
        results = cast("dict[str, Any]", first.get("results") or {})
        graph = cast("dict[str, Any]", results.get("graph") or {})
        rewards = cast("dict[str, Any]", row.get("task_rewards") or {})
        teams.append(
            {
                "title": title,
                "link": _safe_link(link),
                "score": row.get("score"),
                "answer": rewards.get("answer_quality"),
                "coordination": rewards.get("coordination_quality"),
                "passed": row.get("scenarios_passed"),
                "scenarios": row.get("scenarios"),
                "weaknesses": [str(w) for w in cast("list[Any]", detail.get("weaknesses") or [])][:3],
                "topology": str(graph.get("topology")),
                "classification": str(graph.get("classification")),
                "flags": _flags(cast("dict[str, Any]", graph.get("detections") or {})),
                "label": str(graph.get("label")),
                "graph_svg": _graph(results, title),
            }
        )
    return _page("coordbench: teams compared", render("comparison.html.j2", teams=teams))
