"""The report's *Why it failed*: what attribution names is shown, marked in the drawings, and inert.

Agent names and quoted evidence come from the agents being judged: markup in them must show as
text, never run (the report's one escaping path), and the marks must point at the named agent
and span only.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.attribution.test_rules import merged, ok, star

from coordbench.evals.assessment_config import validate_config
from coordbench.report.html import render_report
from coordbench.results.writer import trace_results
from coordbench.traces.file import load_traces

HOSTILE = '<img src=x onerror="alert(1)">'
DATA = Path(__file__).parent.parent.parent / "data" / "attribution"


def test_the_named_agent_and_span_are_marked_and_agent_text_stays_inert() -> None:
    replies = {"researcher": ok("researcher", f"the deck {HOSTILE} has <script>alert(2)</script> 14 girders"),
               HOSTILE: (None, "task_failed", True), "planner": ok("planner")}  # fmt: skip
    spans, ids = star("report", replies, merged)
    trace_id = spans[0].trace_id
    document = asyncio.run(trace_results(spans, trace_id, config=validate_config({"pass_threshold": 0.99})))
    entry = document.results[0].detail.scenarios[0]
    blamed = entry.attribution
    assert blamed is not None and blamed.agent == HOSTILE and blamed.span_id == ids[HOSTILE][1]
    page = render_report(document, {entry.id: spans})
    assert HOSTILE not in page and "<script>alert(2)" not in page
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page  # shown as text
    section = page.split('<section class="attribution"', 1)[1].split("</section>", 1)[0]
    assert f'data-attribution-span="{blamed.span_id}"' in section and "Why it failed" in section
    assert section.count("<li data-span=") == len(blamed.evidence)
    assert page.count('data-blamed="true"') == 1 and page.count('data-decisive="true"') == 1
    assert f'data-span="{blamed.span_id}" data-decisive="true"' in page


def test_a_passing_scenario_has_no_section_and_no_marks() -> None:
    labels = {label["name"]: label for label in json.loads((DATA / "labels.json").read_text(encoding="utf-8"))["runs"]}
    label = labels["star-fail-3"]
    spans = load_traces(DATA / "traces.jsonl")[label["trace_id"]]
    document = asyncio.run(trace_results(spans, label["trace_id"], config=validate_config({"pass_threshold": 0.0})))
    entry = document.results[0].detail.scenarios[0]
    assert entry.passed and entry.attribution is None
    page = render_report(document, {entry.id: spans})
    assert "Why it failed" not in page and "data-blamed" not in page and "data-decisive" not in page
