"""``compare`` names a new cause of failure: a head run failed and was blamed on an agent and rule no base run was.

Runs are the labelled attribution set's traces (``data/attribution``) evaluated as an assessment
would (:func:`coordbench.results.writer.trace_results`): the base passes (a pass mark it reaches,
so nothing is attributed), the head fails the same run (a pass mark it cannot reach).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from coordbench.compare.diff import compare_rows
from coordbench.compare.rules import broken, parse_rules
from coordbench.evals.assessment_config import validate_config
from coordbench.results.document import ResultRow
from coordbench.results.writer import trace_results
from coordbench.traces.file import load_traces

DATA = Path(__file__).parent.parent.parent / "data" / "attribution"
LABELS = {label["name"]: label for label in json.loads((DATA / "labels.json").read_text(encoding="utf-8"))["runs"]}


def _row(name: str, threshold: float) -> ResultRow:
    label = LABELS[name]
    spans = load_traces(DATA / "traces.jsonl")[label["trace_id"]]
    config = validate_config({"pass_threshold": threshold})
    return asyncio.run(trace_results(spans, label["trace_id"], config=config)).results[0]


def test_a_run_that_now_fails_shows_its_cause_and_fails_the_rule_naming_it() -> None:
    base, head = _row("star-fail-3", 0.0), _row("star-fail-3", 0.99)
    assert base.detail.scenarios[0].attribution is None and head.detail.scenarios[0].attribution is not None
    comparison = compare_rows([base], [head], base_label="base", head_label="head")
    [scenario] = comparison.scenarios
    [cause] = scenario.causes_new
    blamed = head.detail.scenarios[0].attribution
    assert blamed is not None
    assert (cause.evidence, cause.agents, cause.runs) == (f"cause.{blamed.rule}", [blamed.agent], (1, 1))
    assert comparison.regressed  # found in most (all) head runs
    said = broken(parse_rules("new:cause"), comparison)
    assert said == [f"new:cause: scenario {scenario.scenario}: cause.{blamed.rule} was the cause of failure "
                    f"({blamed.agent}) in 1 of 1 run(s), never in the base"]  # fmt: skip
    assert broken(parse_rules(f"new:cause.{blamed.rule}"), comparison) != []
    assert broken(parse_rules("new:cause.wrong_content"), comparison) == []
    # the same failure on both sides is no new cause
    same = compare_rows([head], [head], base_label="head", head_label="head")
    assert same.scenarios[0].causes_new == [] and broken(parse_rules("new:cause"), same) == []
