"""The comparison page: two runs side by side, in the report's style (one self-contained HTML file).

Per scenario: every figure base against head with its interval and verdict, what changed in
words (evidence, graph, critical path), the two agent graphs side by side and the two span
waterfalls on one time scale, so the same moment is at the same place in both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from coordbench.compare.diff import paired_runs
from coordbench.compare.model import Comparison, Delta
from coordbench.compare.render import facts, verdict_text
from coordbench.evals.replay import scenario_spans
from coordbench.report.html import page_html, scenario_graph
from coordbench.report.svg import waterfall_svg
from coordbench.report.templates import render
from coordbench.results.document import ResultRow, ScenarioEntry
from coordbench.spans import SpanData

__all__ = ["diff_body", "render_diff"]


def _delta(delta: Delta) -> dict[str, Any]:
    time = delta.name.endswith("_ms") or delta.name.startswith("latency:")
    return {**delta.model_dump(), "digits": 1 if time else 3, "verdict_text": verdict_text(delta)}


def _spans(entry: ScenarioEntry | None, spans: Mapping[str, Sequence[SpanData]]) -> list[SpanData]:
    """The spans of one run of a scenario: its subtree of an assessment's trace, or the whole trace."""
    if entry is None or entry.trace_id is None or entry.trace_id not in spans:
        return []
    trace = list(spans[entry.trace_id])
    return scenario_spans(trace).get(entry.id, trace)


def _duration(spans: Sequence[SpanData]) -> int:
    if not spans:
        return 0
    return max(s.end_time_unix_nano for s in spans) - min(s.start_time_unix_nano for s in spans)


def render_diff(
    comparison: Comparison,
    base: Sequence[ResultRow],
    head: Sequence[ResultRow],
    *,
    base_spans: Mapping[str, Sequence[SpanData]] | None = None,
    head_spans: Mapping[str, Sequence[SpanData]] | None = None,
    failures: Sequence[str] = (),
) -> str:
    """The comparison as one self-contained HTML page (:func:`diff_body`'s arguments)."""
    body = diff_body(comparison, base, head, base_spans=base_spans, head_spans=head_spans, failures=failures)
    return page_html("coordbench: coordination compared", body)


def diff_body(
    comparison: Comparison,
    base: Sequence[ResultRow],
    head: Sequence[ResultRow],
    *,
    base_spans: Mapping[str, Sequence[SpanData]] | None = None,
    head_spans: Mapping[str, Sequence[SpanData]] | None = None,
    failures: Sequence[str] = (),
) -> Markup:
    """The comparison as HTML, without the page around it (the live UI puts it in its own).

    Args:
        comparison: What :func:`coordbench.compare.compare_rows` found.
        base: The base's rows (the first run of each scenario is drawn).
        head: The head's rows.
        base_spans: The base's spans by trace id, when available (for the waterfalls).
        head_spans: The head's (two sides may hold the same trace id: two files of one trace).
        failures: The ``--fail-on`` rules that were broken, in words.
    """
    pairs = {name: (runs_base, runs_head) for name, runs_base, runs_head in paired_runs(base, head)[0]}
    scenarios: list[dict[str, Any]] = []
    for scenario in comparison.scenarios:
        runs_base, runs_head = pairs.get(scenario.scenario, ([], []))
        first_base = runs_base[0] if runs_base else None
        first_head = runs_head[0] if runs_head else None
        spans_base, spans_head = _spans(first_base, base_spans or {}), _spans(first_head, head_spans or {})
        scale = max(_duration(spans_base), _duration(spans_head))
        scenarios.append(
            {
                "name": scenario.scenario,
                "runs": scenario.runs,
                "deltas": [_delta(d) for d in scenario.deltas],
                "facts": facts(scenario),
                "graph_base": scenario_graph(first_base, f"base: {scenario.scenario}"),
                "graph_head": scenario_graph(first_head, f"head: {scenario.scenario}"),
                "waterfall_base": waterfall_svg(spans_base, span_ns=scale) if spans_base else None,
                "waterfall_head": waterfall_svg(spans_head, span_ns=scale) if spans_head else None,
            }
        )
    return render(
        "diff.html.j2",
        base=comparison.base,
        head=comparison.head,
        regressed=comparison.regressed,
        notes=comparison.notes,
        failures=list(failures),
        overall=[_delta(d) for d in comparison.overall],
        scenarios=scenarios,
    )
