"""Re-evaluating stored spans: an assessment's trace (scenario by scenario) or any trace.

:func:`replay` is the one way a stored trace is evaluated: ``coordbench evaluate``, online
evaluation, ``compare`` on traces, ``report --trace-id``, the green's reports and the pytest
helper all call it, so a trace gets the same figures and verdicts whichever path reads it.

A trace the assessor produced has one HOST span per scenario (attribute
``coordbench.scenario.id``); each scenario's subtree is evaluated as the assessor did, with
the assessor as host, and with what the assessor recorded on its spans: the team's answer, the
members (and those it could not reach), the task and reference texts, and (on the assessment's
root span) the assessment config it used (weights, thresholds, pass threshold, evaluators), unless
the caller gives one. Any other trace is evaluated whole, as one scenario named after its trace
id. The same spans and configuration give byte-identical output.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, Literal, ParamSpec, TypeVar, cast

from coordbench import semconv
from coordbench.evals.assessment_config import AssessmentConfig, validate_config
from coordbench.evals.base import EvalContext, EvalScenario, TeamOutcome, on_this_thread
from coordbench.evals.calls import message_text
from coordbench.evals.config import EvalConfig, JudgeConfig
from coordbench.evals.evaluation import ScenarioEvaluation, TraceEvaluation
from coordbench.evals.pipeline import EvalPipeline
from coordbench.spans import SpanData, StatusCode
from coordbench.spantree import SpanTree, is_agent_call
from coordbench.steps import CallType, call_type_of

__all__ = [
    "Replays",
    "recorded_config",
    "replay",
    "replay_config",
    "replay_sync",
    "scenario_contexts",
    "scenario_spans",
]

P = ParamSpec("P")
T = TypeVar("T")


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
    """What the assessor recorded about a scenario: its task, reference texts and correct answer."""
    return EvalScenario(
        id=scenario_id,
        task=(top.attribute_str(semconv.COORDBENCH_SCENARIO_TASK) or "")[:100_000],
        references=_strings(top, semconv.COORDBENCH_SCENARIO_REFERENCES)[:100],
        expected=(top.attribute_str(semconv.COORDBENCH_SCENARIO_EXPECTED) or "")[:100_000],
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
        (s for s in tree.spans if s.attribute_str(semconv.COORDBENCH_SCENARIO_ID) and call_type_of(s) is CallType.HOST),
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


def scenario_contexts(
    spans: Sequence[SpanData],
    *,
    config: EvalConfig,
    scenarios: Iterable[EvalScenario] = (),
    participants: Iterable[str] = (),
    expected: str | None = None,
) -> list[EvalContext]:
    """What each scenario of stored spans is evaluated on: per scenario for an assessment's trace, else the whole trace.

    Args:
        spans: The spans (one or more traces).
        config: The pipeline configuration.
        scenarios: What is known about the scenarios (references...), matched by id.
        participants: Agents expected to take part (default: those the assessor recorded on each
            scenario's span).
        expected: The correct answer of every scenario (overrides what the scenarios say).

    Returns:
        One context per scenario, by scenario id.
    """
    known = {s.id: s for s in scenarios}
    tree = SpanTree(spans)
    tops = _scenario_tops(tree)
    declared = list(participants)
    if not tops:
        trace_ids = sorted(tree.trace_ids)
        scenario_id = trace_ids[0] if len(trace_ids) == 1 else f"{len(trace_ids)}-traces"
        scenario = _expecting(known.get(scenario_id, EvalScenario(id=scenario_id)), expected)
        return [EvalContext.build(tree, scenario=scenario, config=config, participants=declared)]
    out: list[EvalContext] = []
    for top in tops:
        scenario_id = top.attribute_str(semconv.COORDBENCH_SCENARIO_ID) or top.span_id
        subtree = SpanTree(tree.subtree(top.span_id)[0])
        host = tree.agent_of(top)
        scenario = _expecting(known.get(scenario_id) or _recorded_scenario(top, scenario_id), expected)
        # as the assessor judged it: the scenario's subtree, its parent (the assessment's root) open
        completeness = subtree.completeness(
            top.trace_id, 0.0, open_spans={top.parent_span_id} if top.parent_span_id else set()
        )
        recorded = top.attributes.get(semconv.COORDBENCH_SCENARIO_PARTICIPANTS)
        members = declared or ([str(m) for m in recorded] if isinstance(recorded, list | tuple) else [])
        out.append(
            EvalContext.build(
                subtree,
                scenario=scenario,
                config=config,
                hosts=[host] if host else [],
                participants=members,
                completeness=completeness,
                outcome=_outcome(tree, top, host),
                unreachable=_unreachable(top),
            )
        )
    return out


async def _evaluate_spans(
    spans: Sequence[SpanData],
    *,
    config: EvalConfig,
    scenarios: Iterable[EvalScenario],
    participants: Iterable[str],
    attribution: Literal["failed", "always"] = "failed",
    expected: str | None = None,
) -> list[ScenarioEvaluation]:
    """Evaluate stored spans (:func:`scenario_contexts`), attributing failures as ``attribution`` says."""
    pipeline = EvalPipeline(config)
    contexts = scenario_contexts(spans, config=config, scenarios=scenarios, participants=participants,
                                 expected=expected)  # fmt: skip
    return [await pipeline.run(ctx, attribution=attribution) for ctx in contexts]


def _expecting(scenario: EvalScenario, expected: str | None) -> EvalScenario:
    """``scenario`` with ``expected`` as its correct answer, when given."""
    return scenario if expected is None else scenario.model_copy(update={"expected": expected})


def replay_config(spans: Sequence[SpanData], config: AssessmentConfig | None = None) -> AssessmentConfig:
    """The assessment config a replay applies: ``config``, else the one the trace recorded, else the defaults.

    Raises:
        ConfigurationError: If the recorded config is not a valid one (a trace that claims a config
            it cannot have is said, not judged by other rules).
    """
    if config is not None:
        return config
    return validate_config(recorded_config(spans) or {})


async def replay(
    trace_id: str,
    spans: Sequence[SpanData],
    *,
    config: AssessmentConfig | None = None,
    scenarios: Iterable[EvalScenario] = (),
    participants: Iterable[str] = (),
    judge: JudgeConfig | None = None,
    attribution: Literal["failed", "always"] = "failed",
    expected: str | None = None,
) -> TraceEvaluation:
    """Evaluate one stored trace as its assessment did: the one replay every path uses.

    Args:
        trace_id: The trace.
        spans: Its spans.
        config: The assessment config to apply (default: :func:`replay_config`'s, the recorded one).
        scenarios: What is known about scenarios beyond the config's (a plain trace's task and
            references, by the trace id); the config's scenarios come first, these override them.
        participants: Agents expected to take part (default: those the assessor recorded).
        judge: The LLM judge's endpoint (default: the environment's; without a key the
            rule-based judge answers). The config's ``judge_model`` applies to it.
        attribution: ``failed``: attribute the failure of each scenario that did not pass;
            ``always``: of every scenario (``coordbench attribute`` assumes the run failed).
        expected: The correct answer of every scenario, when known (default: the scenarios').

    Raises:
        ConfigurationError: If the config (given or recorded) names an unknown evaluator or metric,
            or the recorded config is not valid.
    """
    assessment = replay_config(spans, config)
    known = {s.id: s for s in (c.eval_scenario() for c in assessment.scenarios or [])}
    known.update({s.id: s for s in scenarios})
    evaluations = await _evaluate_spans(
        spans,
        config=assessment.eval_config(judge or JudgeConfig.from_env()),
        scenarios=known.values(),
        participants=participants,
        attribution=attribution,
        expected=expected,
    )
    return TraceEvaluation(trace_id=trace_id, evaluations=evaluations)


async def _kept(made: Coroutine[Any, Any, T], into: list[T]) -> None:
    """Await ``made`` and keep its result in ``into``: the task that ran it ends holding nothing.

    On Python 3.11, running a task in the main thread, :class:`asyncio.Runner` ends by asking for
    the SIGINT handler it installed, and :func:`signal.getsignal` writes the ``repr`` of that handler,
    which holds the task, and so the ``repr`` of the task's result: the whole evaluation, thousands
    of models (8 ms for a trace of 200 spans, more than the evaluation of half the trace).

    Nothing else runs on the loop: the evaluators run on this thread
    (:func:`~coordbench.evals.base.on_this_thread`), not handed to a worker thread and back.
    """
    with on_this_thread():
        into.append(await made)


def _run(runner: asyncio.Runner, made: Coroutine[Any, Any, T]) -> T:
    """``made`` run to its end on ``runner``'s loop."""
    into: list[T] = []
    runner.run(_kept(made, into))
    return into[0]


def _without_a_loop(coroutine: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """``coroutine`` for code that runs no event loop: the same call, run to its end on a loop of its own."""

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with asyncio.Runner() as runner:
            return _run(runner, coroutine(*args, **kwargs))

    return run


replay_sync = _without_a_loop(replay)
""":func:`replay` from code that runs no event loop (a worker process, a command): the same evaluation."""


class Replays:
    """Many traces replayed from code that runs no event loop, on one loop and one thread pool.

    :func:`replay_sync` sets up an event loop and a thread pool for each trace (about 3 ms, as
    much as evaluating a small trace); a batch (``coordbench evaluate``, the online worker) needs
    them once. Each evaluation is the same as :func:`replay_sync`'s::

        with Replays() as replays:
            for trace_id, spans in traces.items():
                evaluation = replays.run(trace_id, spans)
    """

    def __init__(self) -> None:
        self._runner = asyncio.Runner()

    def __enter__(self) -> Replays:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the loop and its thread pool."""
        self._runner.close()

    def run(
        self,
        trace_id: str,
        spans: Sequence[SpanData],
        *,
        config: AssessmentConfig | None = None,
        participants: Iterable[str] = (),
        judge: JudgeConfig | None = None,
    ) -> TraceEvaluation:
        """:func:`replay` of one trace (the arguments are its own), to its end."""
        return _run(self._runner, replay(trace_id, spans, config=config, participants=participants, judge=judge))
