"""Coordination assertions for tests: judge a recorded trace, or hold it to a baseline.

::

    row = assert_coordination(span_exporter, min_score=0.8, max_idle=0, min_parallelism=0.9,
                              no_evidence=["relays_add_nothing"], participants=["lead", "a", "b"])
    assert_no_regression("baseline/results.json", span_exporter, tolerance=0.05)

A trace is evaluated as ``coordbench evaluate`` evaluates it (the full pipeline, the rule-based
judge unless an LLM is configured). A failure is an :class:`AssertionError` whose message says
in words what fell short and the evidence behind it: the agents and calls the score's parts name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from coordbench.compare import Comparison, Rule, broken, compare_rows, worse_than
from coordbench.compare.diff import SCORED_PARTS
from coordbench.results import trace_results
from coordbench.results.document import ResultRow, ResultsDocument, ScenarioEntry
from coordbench.spans import SpanData
from coordbench.testing.exporter import RecordingSpanExporter

__all__ = ["CoordinationAssertionError", "assert_coordination", "assert_no_regression", "evaluate_coordination"]

Trace = RecordingSpanExporter | Sequence[SpanData]
"""What the assertions take: the plugin's exporter (its spans so far), or spans."""

_IDLE = ("idle_members", "unused_members")


class CoordinationAssertionError(AssertionError):
    """A coordination assertion that failed; the message names what fell short and why."""


def _spans(trace: Trace) -> list[SpanData]:
    spans = trace.spans() if isinstance(trace, RecordingSpanExporter) else list(trace)
    if not spans:
        raise CoordinationAssertionError("no spans to judge: the trace is empty (was the agent instrumented?)")
    return spans


def evaluate_coordination(
    trace: Trace, *, participants: Iterable[str] = (), task: str = "", references: Iterable[str] = ()
) -> ResultRow:
    """Evaluate a trace as ``coordbench evaluate`` would, as one result row.

    Args:
        trace: The spans (every trace in them is evaluated together).
        participants: The team's members: a member that never takes part is then seen as idle.
        task: The task the team was given (what makes a member needed, and the answer's yardstick).
        references: What a good answer holds.

    Raises:
        CoordinationAssertionError: If there are no spans.
    """
    spans = _spans(trace)
    trace_id = min(s.trace_id for s in spans)
    return asyncio.run(
        trace_results(spans, trace_id, participants=list(participants), task=task, references=list(references))
    ).results[0]


def _evidence(entry: ScenarioEntry, part: str) -> str:
    coordination = entry.coordination()
    found = coordination.parts.get(part) if coordination is not None else None
    if found is None or not found.evidence:
        return ""
    calls = f" (calls {', '.join(found.calls)})" if found.calls else ""
    return ": " + "; ".join(found.evidence) + calls


def _problems(
    entry: ScenarioEntry,
    *,
    min_score: float | None,
    min_coordination: float | None,
    max_idle: int | None,
    min_parts: Mapping[str, float],
    no_evidence: Iterable[str],
) -> list[str]:
    coordination = entry.coordination()
    if coordination is None:
        return ["the coordination evaluator did not run (nothing to judge)"]
    problems: list[str] = []
    if min_score is not None and entry.score < min_score:
        weak = "; ".join(coordination.weaknesses) or "no weakness named"
        problems.append(f"score {entry.score:.3f} is below {min_score}: {weak}")
    if min_coordination is not None and coordination.coordination_quality < min_coordination:
        problems.append(f"coordination quality {coordination.coordination_quality:.3f} is below {min_coordination}")
    for part, least in min_parts.items():
        value = coordination.parts[part].value if part in coordination.parts else None
        if value is not None and value < least:
            problems.append(f"{part} {value:.3f} is below {least}{_evidence(entry, part)}")
    if max_idle is not None:
        participation = coordination.parts.get("participation")
        idle = (
            sorted(participation.agents) if participation is not None and set(participation.fired) & set(_IDLE) else []
        )
        if len(idle) > max_idle:
            problems.append(f"{len(idle)} member(s) took no part (at most {max_idle}): {', '.join(idle)}"
                            f"{_evidence(entry, 'participation')}")  # fmt: skip
    for wanted in no_evidence:
        for fired in coordination.fired:
            if wanted in (fired, fired.split(".", 1)[-1]):
                problems.append(f"{fired} fired{_evidence(entry, fired.split('.', 1)[0])}")
    return problems


def assert_coordination(
    trace: Trace,
    *,
    min_score: float | None = None,
    min_coordination: float | None = None,
    max_idle: int | None = None,
    min_parallelism: float | None = None,
    min_parts: Mapping[str, float] | None = None,
    no_evidence: Iterable[str] = (),
    participants: Iterable[str] = (),
    task: str = "",
    references: Iterable[str] = (),
) -> ResultRow:
    """Assert that a recorded trace shows the coordination expected of the team; returns its result row.

    Args:
        trace: The spans, or the plugin's exporter.
        min_score: The least overall score.
        min_coordination: The least coordination quality (how well the agents worked together,
            apart from the answer).
        max_idle: The most members that took no part (idle, or never given work).
        min_parallelism: The least value of the parallelism part (1: no work serialised).
        min_parts: The least value of any part, by name (``{"robustness": 1.0}``).
        no_evidence: Evidence that must not fire (``relays_add_nothing`` or
            ``information_flow.relays_add_nothing``).
        participants: The team's members (see :func:`evaluate_coordination`).
        task: The team's task.
        references: What a good answer holds.

    Raises:
        CoordinationAssertionError: Naming every expectation the trace fell short of, with the
            agents and calls behind it.
        ValueError: For a part name that is not one.
    """
    parts = dict(min_parts or {})
    if min_parallelism is not None:
        parts["parallelism"] = min_parallelism
    unknown = sorted(set(parts) - set(SCORED_PARTS))
    if unknown:
        raise ValueError(f"unknown part(s) {', '.join(unknown)}; parts: {', '.join(SCORED_PARTS)}")
    row = evaluate_coordination(trace, participants=participants, task=task, references=references)
    problems: list[str] = []
    for entry in row.detail.scenarios:
        found = _problems(entry, min_score=min_score, min_coordination=min_coordination, max_idle=max_idle,
                          min_parts=parts, no_evidence=list(no_evidence))  # fmt: skip
        prefix = f"[{entry.id}] " if len(row.detail.scenarios) > 1 else ""
        problems += [prefix + p for p in found]
    if problems:
        raise CoordinationAssertionError("coordination fell short:\n- " + "\n- ".join(problems))
    return row


def _baseline(baseline: str | Path | ResultsDocument | ResultRow | Sequence[ResultRow]) -> list[ResultRow]:
    if isinstance(baseline, str | Path):
        return list(ResultsDocument.load(baseline).results)
    if isinstance(baseline, ResultsDocument):
        return list(baseline.results)
    if isinstance(baseline, ResultRow):
        return [baseline]
    return list(baseline)


def assert_no_regression(
    baseline: str | Path | ResultsDocument | ResultRow | Sequence[ResultRow],
    trace: Trace | ResultRow,
    *,
    tolerance: float = 0.05,
    new_evidence: bool = True,
    participants: Iterable[str] = (),
    task: str = "",
    references: Iterable[str] = (),
) -> Comparison:
    """Assert that a trace coordinates no worse than a baseline; returns the comparison.

    The score, the coordination quality and each part may fall by at most ``tolerance``, and
    only a fall beyond the noise counts (:mod:`coordbench.compare.diff`: with one run a side, a
    fall of at least 0.03); with ``new_evidence``, no evidence may fire that never fired in the
    baseline.

    Args:
        baseline: A ``results.json`` (path or document), or rows (``evaluate_coordination``'s).
        trace: The spans (or the exporter), or a row already evaluated.
        tolerance: The largest fall allowed (0-1 figures).
        new_evidence: Fail on evidence the baseline never showed.
        participants: The team's members (see :func:`evaluate_coordination`).
        task: The team's task.
        references: What a good answer holds.

    Raises:
        CoordinationAssertionError: Naming each regression, with the agents and calls behind it.
    """
    if not 0 <= tolerance <= 1:
        raise ValueError(f"tolerance must be in [0, 1], got {tolerance}")
    head = (
        trace
        if isinstance(trace, ResultRow)
        else evaluate_coordination(trace, participants=participants, task=task, references=references)
    )
    comparison = compare_rows(_baseline(baseline), [head], base_label="baseline", head_label="this run")
    figures = ("score", "coordination", *SCORED_PARTS)
    rules = [worse_than(name, tolerance) for name in figures] + (
        [Rule(text="new:*", evidence="*")] if new_evidence else []
    )
    found = broken(rules, comparison)
    if found:
        evidence = [
            f"{change.evidence}: {', '.join(change.agents) or 'no agent named'}"
            for scenario in comparison.scenarios
            for change in scenario.evidence_new
        ]
        detail = ("\nnew evidence, by agent:\n- " + "\n- ".join(evidence)) if evidence else ""
        raise CoordinationAssertionError("coordination regressed:\n- " + "\n- ".join(found) + detail)
    return comparison
