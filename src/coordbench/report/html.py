"""The assessment report: one self-contained HTML file (inline CSS and SVG; nothing fetched).

It shows, per scenario: the agent graph, a waterfall of the scenario's spans with the critical
path, the graph metrics against their thresholds and the flags that fired, the coordination
score part by part with its evidence, the evaluators' scores and weights, the judge's reasoning,
strengths and weaknesses, and the trace's completeness. Every number shown carries its exact
value in a ``data-value`` attribute, so a test (or a script) can check the page against
``results.json``. :func:`render_comparison` puts several assessments' graphs side by side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any, cast

from coordbench import __version__
from coordbench.report.svg import agent_graph_svg, waterfall_svg
from coordbench.spans import SpanData

__all__ = ["render_comparison", "render_report"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:1.5em;margin-bottom:4px} h2{border-bottom:2px solid #3b6ea8;padding-bottom:4px;margin-top:36px}
h3{margin-top:22px} .sub{color:#666} table{border-collapse:collapse;margin:8px 0 16px}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:0.92em}
th{background:#f3f5f8} .num{text-align:right;font-variant-numeric:tabular-nums}
.fired{color:#c0392b;font-weight:600} .ok{color:#2e7d32} .badge{display:inline-block;padding:2px 8px;
border-radius:10px;background:#eef2f7;margin-right:6px} .pass{background:#e3f3e5} .fail{background:#fbe3e0}
svg text{font-size:11px;fill:#222} svg .label{font-family:monospace;font-size:10px} .grid{display:flex;
flex-wrap:wrap;gap:16px} .card{border:1px solid #ddd;border-radius:6px;padding:8px} ul{margin:4px 0}
.waterfall-box{overflow-x:auto} .card svg.agent-graph{max-width:100%;height:auto}
.compare .card{flex:1 1 340px;max-width:520px}
"""


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or value is None:
        return f'<span data-value="{escape(str(value).lower())}">{"-" if value is None else value}</span>'
    if isinstance(value, int):
        return f'<span data-value="{value}">{value}</span>'
    if isinstance(value, float):
        return f'<span data-value="{value!r}">{value:.{digits}f}</span>'
    return escape(str(value))


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<style>{_CSS}</style></head><body>{body}"
        f'<p class="sub">coordbench {escape(__version__)}: this file is self-contained.</p></body></html>\n'
    )


def _graph(results: Mapping[str, Any], title: str) -> str:
    graph = cast("dict[str, Any]", results.get("graph") or {})
    if not graph:
        return '<p class="sub">no graph (the graph evaluator did not run)</p>'
    detections = cast("dict[str, Any]", graph.get("detections") or {})
    return agent_graph_svg(
        cast("list[dict[str, Any]]", graph.get("agents") or []),
        cast("list[dict[str, Any]]", graph.get("edges") or []),
        bottlenecks=cast("list[str]", detections.get("bottleneck_agents") or []),
        isolated=cast("list[str]", detections.get("isolated_agents") or []),
        title=title,
    )


def _metrics_table(graph: Mapping[str, Any]) -> str:
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
    body = "".join(
        f'<tr data-metric="{escape(name)}"><td>{escape(name)}</td><td class="num">{_num(value)}</td>'
        f'<td>{escape(str(rule))}</td><td class="{"fired" if fired else "ok"}">{"flag" if fired else ""}</td></tr>'
        for name, value, rule, fired in rows
    )
    return (
        '<p class="sub">The shape, described by the benchmark\'s rules; flags describe, they are not scored.</p>'
        f"<table><tr><th>metric</th><th>value</th><th>threshold / meaning</th><th></th></tr>{body}</table>"
    )


_PART_ORDER = ("outcome", "participation", "efficiency", "parallelism", "bottleneck", "robustness", "information_flow")


def _parts_table(coordination: Mapping[str, Any]) -> str:
    parts = cast("dict[str, dict[str, Any]]", coordination.get("parts") or {})
    rows: list[str] = []
    ordered = [n for n in _PART_ORDER if n in parts] + sorted(set(parts) - set(_PART_ORDER))
    for name, part in ((n, parts[n]) for n in ordered):
        evidence = "".join(f"<li>{escape(str(e))}</li>" for e in cast("list[Any]", part.get("evidence") or []))
        fired = ", ".join(part.get("fired") or [])
        rows.append(
            f'<tr data-part="{escape(name)}"><td>{escape(name)}</td><td class="num">{_num(part.get("value"))}</td>'
            f'<td class="num">{_num(part.get("weight"))}</td><td><code>{escape(str(part.get("formula", "")))}</code>'
            f'</td><td class="{"fired" if fired else ""}">{escape(fired)}</td><td><ul>{evidence}</ul></td></tr>'
        )
    head = (
        f"<p>coordination score {_num(coordination.get('score'))} = outcome factor "
        f"{_num(coordination.get('outcome_factor'))} * participation * process {_num(coordination.get('process'))}"
        f" (hubs: {escape(', '.join(coordination.get('hubs') or []) or 'none')})</p>"
    )
    return (
        head + "<table><tr><th>part</th><th>value</th><th>weight</th><th>formula</th><th>fired</th>"
        "<th>evidence</th></tr>" + "".join(rows) + "</table>"
    )


def _scores_table(entry: Mapping[str, Any]) -> str:
    components = cast("dict[str, Any]", entry.get("score_components") or {})
    scores = cast("dict[str, float]", components.get("components") or {})
    weights = cast("dict[str, float]", components.get("weights") or {})
    rows = "".join(
        f'<tr data-evaluator="{escape(name)}"><td>{escape(name)}</td><td class="num">{_num(scores[name])}</td>'
        f'<td class="num">{_num(weights.get(name))}</td></tr>'
        for name in sorted(scores)
    )
    return f"<table><tr><th>evaluator</th><th>score</th><th>weight</th></tr>{rows}</table>"


def _judge(results: Mapping[str, Any]) -> str:
    judge = cast("dict[str, Any]", results.get("llm_judge") or {})
    if not judge:
        return ""
    who = "an LLM (" + str(judge.get("model")) + ")" if judge.get("judge") == "llm" else "the rule-based judge"
    why = f" because {escape(str(judge['fallback_reason']))}" if judge.get("fallback_reason") else ""
    strengths = "".join(f"<li>{escape(str(s))}</li>" for s in cast("list[Any]", judge.get("strengths") or []))
    weaknesses = "".join(f"<li>{escape(str(s))}</li>" for s in cast("list[Any]", judge.get("weaknesses") or []))
    strengths, weaknesses = strengths or "<li>none</li>", weaknesses or "<li>none</li>"
    return (
        f"<h3>Judgement</h3><p>By {escape(who)}{why}: {escape(str(judge.get('reasoning', '')))}</p>"
        f'<div class="grid"><div class="card"><b>Strengths</b><ul>{strengths}</ul></div>'
        f'<div class="card"><b>Weaknesses</b><ul>{weaknesses}</ul></div></div>'
    )


def _completeness(entry: Mapping[str, Any]) -> str:
    completeness = cast("dict[str, Any]", entry.get("completeness") or {})
    if not completeness:
        return ""
    unmatched = cast("list[str]", completeness.get("unmatched_clients") or [])
    orphans = cast("list[str]", completeness.get("orphans") or [])
    return (
        f'<p data-completeness="{str(completeness.get("complete")).lower()}">Trace completeness: '
        f"{'complete' if completeness.get('complete') else 'incomplete'}, {_num(completeness.get('span_count'))} spans"
        f"; {len(unmatched)} unmatched client span(s), {len(orphans)} missing parent(s)"
        f"{'; timed out waiting' if completeness.get('timed_out') else ''}.</p>"
    )


def _scenario(entry: Mapping[str, Any], spans: Sequence[SpanData] | None) -> str:
    results = cast("dict[str, Any]", entry.get("results") or {})
    graph = cast("dict[str, Any]", results.get("graph") or {})
    verdict = "pass" if entry.get("passed") else "fail"
    header = (
        f'<section class="scenario" data-scenario="{escape(str(entry["id"]))}"><h2>Scenario {escape(str(entry["id"]))}'
        f' <span class="badge {verdict}">{"passed" if entry.get("passed") else "not passed"}</span></h2>'
        f'<p>score <b data-field="score">{_num(entry.get("score"))}</b> · mode {escape(str(entry.get("mode")))} · '
        f"status {escape(str(entry.get('status')))}{' · ' + escape(str(entry['error'])) if entry.get('error') else ''}"
        f" · trace <code>{escape(str(entry.get('trace_id') or '-'))}</code></p>"
    )
    waterfall = (
        f'<h3>Spans</h3><div class="waterfall-box">{waterfall_svg(spans)}</div>'
        if spans
        else '<p class="sub">spans not available here (rebuild the report with --receiver to draw them)</p>'
    )
    coordination = cast("dict[str, Any]", results.get("coordination") or {})
    return (
        header
        + f'<div class="grid"><div class="card">{_graph(results, str(entry["id"]))}</div>'
        + f'<div class="card">{_metrics_table(graph) if graph else ""}</div></div>'
        + (f"<h3>Coordination score</h3>{_parts_table(coordination)}" if coordination else "")
        + f"<h3>Evaluators</h3>{_scores_table(entry)}"
        + _judge(results)
        + _completeness(entry)
        + waterfall
        + "</section>"
    )


def render_report(document: Mapping[str, Any], spans: Mapping[str, Sequence[SpanData]] | None = None) -> str:
    """The report of one ``results.json`` document (one or more rows), as HTML.

    Args:
        document: ``{"participants": ..., "results": [row, ...]}``.
        spans: Each scenario's spans, by scenario id (for the waterfalls), when available.
    """
    rows = cast("list[dict[str, Any]]", document.get("results") or [])
    body: list[str] = []
    for row in rows:
        detail = cast("dict[str, Any]", row.get("detail") or {})
        participants = cast("dict[str, str]", document.get("participants") or {})
        body.append(
            f'<header data-assessment="{escape(str(row.get("assessment_id")))}"><h1>coordbench assessment</h1>'
            f'<p class="sub">{escape(str(row.get("assessment_id")))}</p>'
            f'<p><span class="badge">score <b data-field="row-score">{_num(row.get("score"), 1)}</b> / '
            f'{_num(row.get("max_score"))}</span><span class="badge">pass rate {_num(row.get("pass_rate"), 0)}%</span>'
            f'<span class="badge">{_num(row.get("scenarios_passed"))} / {_num(row.get("scenarios"))} passed</span>'
            f'<span class="badge">{_num(row.get("time_used"), 1)} s</span></p>'
            "<p>Participants: "
            + ", ".join(f"{escape(r)} <code>{escape(u)}</code>" for r, u in sorted(participants.items()))
            + "</p></header>"
        )
        for entry in cast("list[dict[str, Any]]", detail.get("scenarios") or []):
            body.append(_scenario(entry, (spans or {}).get(str(entry["id"]))))
    return _page("coordbench assessment report", "".join(body))


def render_comparison(items: Sequence[tuple[str, Mapping[str, Any], str]]) -> str:
    """Several assessments side by side: ``(title, results.json document, link to its report)`` each."""
    cards: list[str] = []
    for title, document, link in items:
        row = cast("dict[str, Any]", (document.get("results") or [{}])[0])
        detail = cast("dict[str, Any]", row.get("detail") or {})
        entries = cast("list[dict[str, Any]]", detail.get("scenarios") or [])
        first = entries[0] if entries else {}
        results = cast("dict[str, Any]", first.get("results") or {})
        graph = cast("dict[str, Any]", results.get("graph") or {})
        cards.append(
            f'<div class="card" data-team="{escape(title)}"><h3><a href="{escape(link)}">{escape(title)}</a></h3>'
            f'<p>score <b data-field="row-score">{_num(row.get("score"), 1)}</b> · {escape(str(graph.get("topology")))}'
            f" / {escape(str(graph.get('label')))}</p>{_graph(results, title)}</div>"
        )

    def score(document: Mapping[str, Any]) -> Any:
        return cast("dict[str, Any]", (document.get("results") or [{}])[0]).get("score")

    rows = "".join(
        f'<tr data-team="{escape(title)}"><td><a href="{escape(link)}">{escape(title)}</a></td>'
        f'<td class="num">{_num(score(document), 1)}</td></tr>'
        for title, document, link in items
    )
    table = f"<table><tr><th>team</th><th>score</th></tr>{rows}</table>"
    return _page(
        "coordbench: teams compared",
        f'<h1>Teams compared</h1>{table}<div class="grid compare">{"".join(cards)}</div>',
    )
