"""Re-evaluating stored spans: an assessment's trace (scenario by scenario) or any trace.

A trace the assessor produced has one HOST span per scenario (attribute
``coordbench.scenario.id``); each scenario's subtree is evaluated as the assessor did, with
the assessor as host, and with what the assessor recorded on its spans: the team's answer, the
members (and those it could not reach), the task and reference texts, and (on the assessment's
root span) the evaluation config it used, unless the caller gives one. Any other trace is
evaluated whole, as one scenario named after its trace id. The same spans and configuration give
byte-identical output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

from pydantic import BaseModel, ConfigDict

from coordbench import semconv
from coordbench.evals.base import EvalContext, EvalScenario, TeamOutcome
from coordbench.evals.calls import message_text
from coordbench.evals.config import EvalConfig
from coordbench.evals.pipeline import EvalPipeline, ScenarioEvaluation
from coordbench.graph.metrics.result import canonical_json
from coordbench.spans import SpanData, StatusCode
from coordbench.spantree import SpanTree, is_agent_call
from coordbench.steps import CallType, call_type_of

__all__ = ["TraceEvaluation", "evaluate_spans", "evaluate_trace", "recorded_config", "scenario_spans"]


class TraceEvaluation(BaseModel):
    """The evaluation of one trace: one entry per scenario (one for a trace that is not an assessment's).

    Attributes:
        trace_id: The trace.
        evaluations: Per scenario, by scenario id.
    """

    model_config = ConfigDict(frozen=True)

    trace_id: str
    evaluations: list[ScenarioEvaluation]

    def to_json(self) -> str:
        """Canonical JSON on one line: the same spans and configuration give the same bytes."""
        return canonical_json(self.model_dump(mode="json"))


def recorded_config(spans: Iterable[SpanData]) -> dict[str, Any] | None:
    """The evaluation config an assessor recorded on its assessment's root span, if any (as JSON data)."""
    for span in spans:
        text = span.attribute_str(semconv.COORDBENCH_ASSESSMENT_CONFIG)
        if text is not None:
            try:
                value: Any = json.loads(text)
            except ValueError:
                return None
            return cast("dict[str, Any]", value) if isinstance(value, dict) else None
    return None


def _strings(span: SpanData, key: str) -> list[str]:
    value = span.attributes.get(key)
    return [str(v) for v in cast("tuple[Any, ...]", value)] if isinstance(value, list | tuple) else []


def _recorded_scenario(top: SpanData, scenario_id: str) -> EvalScenario:
    """What the assessor recorded about a scenario: its task and reference texts."""
    return EvalScenario(
        id=scenario_id,
        task=(top.attribute_str(semconv.COORDBENCH_SCENARIO_TASK) or "")[:100_000],
        references=_strings(top, semconv.COORDBENCH_SCENARIO_REFERENCES)[:100],
    )


def _unreachable(top: SpanData) -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in _strings(top, semconv.COORDBENCH_SCENARIO_UNREACHABLE):
        name, _, why = entry.partition(": ")
        out[name] = why
    return out


def _outcome(tree: SpanTree, scenario_span: SpanData, host: str | None) -> TeamOutcome | None:
    """The team's answer as the assessor recorded it: on the scenario's span, else on its call (content capture)."""
    state = scenario_span.attribute_str(semconv.COORDBENCH_OUTCOME_STATE)
    if state is not None:
        duration = scenario_span.attributes.get(semconv.COORDBENCH_OUTCOME_DURATION_MS)
        return TeamOutcome(
            state=state,
            output=scenario_span.attribute_str(semconv.COORDBENCH_OUTCOME_OUTPUT) or "",
            error=scenario_span.attribute_str(semconv.COORDBENCH_OUTCOME_ERROR),
            duration_ms=float(duration)
            if isinstance(duration, int | float) and not isinstance(duration, bool)
            else 0.0,
        )
    for child in tree.children(scenario_span):
        if is_agent_call(child) and (host is None or tree.agent_of(child) == host):
            output = message_text(child.attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES)) or ""
            state = child.attribute_str(semconv.A2A_TASK_STATE) or (
                "error" if child.status_code is StatusCode.ERROR else ""
            )
            return TeamOutcome(state=state or "unknown", output=output, duration_ms=child.duration_ms)
    return None


def _scenario_tops(tree: SpanTree) -> list[SpanData]:
    """The assessor's scenario HOST spans, by scenario id."""
    return sorted(
        (s for s in tree.spans if call_type_of(s) is CallType.HOST and s.attribute_str(semconv.COORDBENCH_SCENARIO_ID)),
        key=lambda s: (s.attribute_str(semconv.COORDBENCH_SCENARIO_ID) or "", s.span_id),
    )


def scenario_spans(spans: Sequence[SpanData]) -> dict[str, list[SpanData]]:
    """Each scenario's spans (its HOST span's subtree), by scenario id, for an assessment's trace."""
    tree = SpanTree(spans)
    out: dict[str, list[SpanData]] = {}
    for top in _scenario_tops(tree):
        subtree, _loose = tree.subtree(top.span_id)
        out[top.attribute_str(semconv.COORDBENCH_SCENARIO_ID) or top.span_id] = subtree
    return out


async def evaluate_spans(
    spans: Sequence[SpanData],
    *,
    config: EvalConfig | None = None,
    scenarios: Iterable[EvalScenario] = (),
    participants: Iterable[str] = (),
) -> list[ScenarioEvaluation]:
    """Evaluate stored spans: per scenario for an assessment's trace, else the whole trace.

    Args:
        spans: The spans (one or more traces).
        config: The pipeline configuration.
        scenarios: What is known about the scenarios (references...), matched by id.
        participants: Agents expected to take part (default: those the assessor recorded on each
            scenario's span).

    Returns:
        One evaluation per scenario, by scenario id.
    """
    config = config or EvalConfig()
    known = {s.id: s for s in scenarios}
    pipeline = EvalPipeline(config)
    tree = SpanTree(spans)
    tops = _scenario_tops(tree)
    declared = list(participants)
    out: list[ScenarioEvaluation] = []
    if not tops:
        trace_ids = sorted(tree.trace_ids)
        scenario_id = trace_ids[0] if len(trace_ids) == 1 else f"{len(trace_ids)}-traces"
        scenario = known.get(scenario_id, EvalScenario(id=scenario_id))
        ctx = EvalContext.build(tree, scenario=scenario, config=config, participants=declared)
        return [await pipeline.run(ctx)]
    for top in tops:
        scenario_id = top.attribute_str(semconv.COORDBENCH_SCENARIO_ID) or top.span_id
        subtree = SpanTree(tree.subtree(top.span_id)[0])
        host = tree.agent_of(top)
        scenario = known.get(scenario_id) or _recorded_scenario(top, scenario_id)
        # as the assessor judged it: the scenario's subtree, its parent (the assessment's root) open
        completeness = subtree.completeness(
            top.trace_id, 0.0, open_spans={top.parent_span_id} if top.parent_span_id else set()
        )
        recorded = top.attributes.get(semconv.COORDBENCH_SCENARIO_PARTICIPANTS)
        members = declared or ([str(m) for m in recorded] if isinstance(recorded, list | tuple) else [])
        ctx = EvalContext.build(
            subtree,
            scenario=scenario,
            config=config,
            hosts=[host] if host else [],
            participants=members,
            completeness=completeness,
            outcome=_outcome(tree, top, host),
            unreachable=_unreachable(top),
        )
        out.append(await pipeline.run(ctx))
    return out


async def evaluate_trace(
    trace_id: str,
    spans: Sequence[SpanData],
    *,
    config: EvalConfig | None = None,
    scenarios: Iterable[EvalScenario] = (),
    participants: Iterable[str] = (),
) -> TraceEvaluation:
    """Evaluate one trace's spans (:func:`evaluate_spans`) as a :class:`TraceEvaluation`."""
    evaluations = await evaluate_spans(spans, config=config, scenarios=scenarios, participants=participants)
    return TraceEvaluation(trace_id=trace_id, evaluations=evaluations)
