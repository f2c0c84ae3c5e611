"""Tier 4: the LLM judge, with a rule-based judge that answers whenever the model cannot.

The judge sends the serialised trace, the criteria and the earlier evaluators' results to any
OpenAI-compatible endpoint (``AGENTBEATS_LLM_API_KEY``, ``AGENTBEATS_LLM_BASE_URL``,
``AGENTBEATS_LLM_MODEL``) at temperature 0 and validates the answer against
:data:`~coordbench.evals.judge_prompt.JUDGMENT_SCHEMA`. No key, an unreachable endpoint, a
timeout, an HTTP error, an answer that is not JSON or breaks the schema: the rule-based
judge answers instead, the result says ``judge="rules"`` and why, and a warning is logged. The
rule-based judgment is reported (strengths, weaknesses, reasoning) but does not count in the overall
score: it is the coordination score in words.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coordbench.errors import describe_validation_error
from coordbench.evals.base import TIER_JUDGEMENT, EvalContext, Evaluator, off_the_loop
from coordbench.evals.coordination import CoordinationResult, assess_coordination
from coordbench.evals.judge_prompt import JUDGMENT_SCHEMA, WireJudgment, build_prompt, find_injections
from coordbench.evals.modelcall import ModelUnavailableError, ask_json
from coordbench.redaction import redact

__all__ = ["JudgeResult", "LLMJudgeEvaluator", "rule_judgment"]

logger = logging.getLogger(__name__)

_MAX_REASONING = 1_000
_MAX_ITEMS = 3
_MAX_ITEM = 300


class JudgeResult(BaseModel):
    """The judgment of one scenario.

    Attributes:
        overall_score: How well the team coordinated to do the task, 0-1.
        coordination_quality: How well the agents worked together, 0-1.
        task_success: Whether the coordination led to the task's success (``None``: unknown,
            as in ground-truth mode).
        reasoning: Why, in a few sentences.
        strengths: Up to three.
        weaknesses: Up to three.
        judge: ``llm`` or ``rules``: who answered.
        model: The model that answered (``llm`` only).
        fallback_reason: Why the rule-based judge answered, when the LLM was configured
            but could not (or was not configured).
        injection_suspected: Agents (or ``team-output``) whose text addressed the evaluator;
            that text was removed before the model saw it.
        prompt_truncated: The trace was cut to fit the prompt's size bound.
    """

    model_config = ConfigDict(frozen=True)

    overall_score: float = Field(ge=0, le=1)
    coordination_quality: float = Field(ge=0, le=1)
    task_success: bool | None
    reasoning: str
    strengths: list[str]
    weaknesses: list[str]
    judge: Literal["llm", "rules"]
    model: str | None = None
    fallback_reason: str | None = None
    injection_suspected: list[str] = Field(default_factory=list[str])
    prompt_truncated: bool = False


class JudgeUnavailableError(ModelUnavailableError):
    """The LLM judge could not give a valid judgment (the message says why)."""

    default_message = "the LLM judge is unavailable"


def _items(items: list[str]) -> list[str]:
    return [i.strip()[:_MAX_ITEM] for i in items if i.strip()][:_MAX_ITEMS]


def rule_judgment(ctx: EvalContext, *, reason: str | None = None, injections: list[str] | None = None) -> JudgeResult:
    """The rule-based judgment: the coordination score's parts, read as a judge would word them.

    ``overall_score`` is the coordination score and ``coordination_quality`` its coordination
    quality (:mod:`coordbench.evals.coordination`); the strengths and
    weaknesses are the ones the parts generated (largest loss first), so they can never
    contradict the figures. Uses the coordination evaluator's result when it ran, else
    computes it.
    """
    result = ctx.result("coordination", CoordinationResult) or assess_coordination(ctx)
    success = ctx.outcome.succeeded if ctx.outcome is not None else None
    weaknesses = list(result.weaknesses)
    if injections:
        weaknesses.insert(0, f"text addressed to the evaluator from: {', '.join(injections)}")
    values = ", ".join(f"{name} {part.value:.2f}" for name, part in result.parts.items() if part.value is not None)
    facts = [f"coordination score {result.score:.2f} ({values})"]
    if success is not None:
        facts.append("task answered" if success else "task not answered")
    if result.fired:
        facts.append("evidence: " + ", ".join(result.fired))
    return JudgeResult(
        overall_score=min(1.0, max(0.0, result.score)),
        coordination_quality=min(1.0, max(0.0, result.coordination_quality)),
        task_success=success,
        reasoning=("Rule-based judgment: " + "; ".join(facts) + ".")[:_MAX_REASONING],
        strengths=_items(result.strengths),
        weaknesses=_items(weaknesses),
        judge="rules",
        fallback_reason=reason,
        injection_suspected=list(injections or []),
    )


async def _ask_llm(ctx: EvalContext, messages: list[dict[str, str]]) -> WireJudgment:
    data = await ask_json(ctx.config.judge, messages, name="judgment", schema=JUDGMENT_SCHEMA)
    try:
        return WireJudgment.model_validate(data)
    except ValidationError as exc:
        problems = describe_validation_error(exc, whole="answer", limit=3)
        raise JudgeUnavailableError(f"the answer breaks the schema: {problems}") from exc


class LLMJudgeEvaluator(Evaluator):
    """An LLM's judgment of the coordination, after every other evaluator; rules when it cannot."""

    name = "llm_judge"
    tier = TIER_JUDGEMENT
    order = 100
    description = "LLM judgment (any OpenAI-compatible endpoint) of the trace and earlier results; rule-based fallback."

    async def evaluate(self, ctx: EvalContext) -> JudgeResult:
        """Ask the configured model; fall back to :func:`rule_judgment` with a warning."""
        config = ctx.config.judge
        if config.api_key is None:
            injections = await off_the_loop(find_injections, ctx)  # reads every message: off the loop
            return self._fallback(ctx, "no API key (AGENTBEATS_LLM_API_KEY is not set)", injections)
        prompt = await off_the_loop(build_prompt, ctx, max_chars=config.max_prompt_chars)
        try:
            wire = await _ask_llm(ctx, prompt.messages)
        except ModelUnavailableError as exc:
            result = self._fallback(ctx, redact(str(exc)), prompt.injections)
            return result.model_copy(update={"prompt_truncated": prompt.truncated})
        flagged = [f"text addressed to the evaluator from: {', '.join(prompt.injections)}"] if prompt.injections else []
        return JudgeResult(
            overall_score=wire.overall_score / 10,
            coordination_quality=wire.coordination_quality / 10,
            task_success=wire.task_success if ctx.outcome is not None else None,
            reasoning=wire.reasoning.strip()[:_MAX_REASONING],
            strengths=_items(wire.strengths),
            weaknesses=_items(flagged + wire.weaknesses),
            judge="llm",
            model=config.model,
            injection_suspected=prompt.injections,
            prompt_truncated=prompt.truncated,
        )

    @staticmethod
    def _fallback(ctx: EvalContext, reason: str, injections: list[str]) -> JudgeResult:
        # not a warning per scenario: the result says why, and the assessment says it once
        level = logging.INFO if ctx.config.judge.api_key is None else logging.WARNING
        logger.log(level, "LLM judge unavailable for scenario %r, rule-based judge used: %s", ctx.scenario.id, reason)
        return rule_judgment(ctx, reason=reason, injections=injections)

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """The model's overall score; ``None`` when no model answered.

        The rule-based judge reads the coordination score back: counting it would count that
        score twice. So the judge drops out and the other weights renormalise; the result says
        why (``fallback_reason``) and the summary says the judge did not count.
        """
        if not isinstance(result, JudgeResult) or result.judge != "llm":
            return None
        return result.overall_score
