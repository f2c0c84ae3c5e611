"""Running the evaluators over one scenario: tier by tier, failures as entries, one overall score."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Literal, cast

from pydantic import BaseModel

from coordbench.errors import ConfigurationError
from coordbench.evals.attribution import Attribution, attribute
from coordbench.evals.attribution.ranking import rank_with_model
from coordbench.evals.base import EvalContext, Evaluator, off_the_loop, runs_on_this_thread, select_evaluators
from coordbench.evals.config import EvalConfig
from coordbench.evals.evaluation import RESERVED, EvaluatorFailure, EvaluatorResults, ScenarioEvaluation
from coordbench.evals.graph import GraphEvaluator
from coordbench.evals.scoring import combine
from coordbench.evals.textcache import evaluation_cache
from coordbench.graph.metrics.registry import select_metrics

__all__ = ["ATTRIBUTION", "EvalPipeline", "run_evaluator"]

logger = logging.getLogger(__name__)

ATTRIBUTION = "attribution"
"""The name failure attribution's own failure is reported under (beside the evaluators')."""
ATTRIBUTION_TIER = 5
"""It runs after every evaluator's tier."""


def _run_blocking(evaluator: Evaluator, ctx: EvalContext) -> BaseModel:
    """Run a :attr:`~Evaluator.blocking` evaluator's coroutine to its end on this (worker) thread.

    It awaits nothing, so one ``send`` finishes it; if it does await, it is not blocking, and
    that is an error in the evaluator (reported as its failure).
    """
    coroutine = evaluator.evaluate(ctx)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast("BaseModel", done.value)
    coroutine.close()
    raise RuntimeError(f"evaluator {evaluator.name!r} is marked blocking but awaited something")


async def run_evaluator(evaluator: Evaluator, ctx: EvalContext) -> BaseModel:
    """Evaluate ``ctx`` with one evaluator: on a worker thread when it is :attr:`~Evaluator.blocking`.

    Inside :func:`~coordbench.evals.base.on_this_thread` a blocking evaluator runs here.
    """
    if evaluator.blocking:
        return await off_the_loop(_run_blocking, evaluator, ctx)
    return await evaluator.evaluate(ctx)


async def _timed(evaluator: Evaluator, ctx: EvalContext, timeout: float) -> BaseModel:  # noqa: ASYNC109 - a thread it runs on cannot be stopped
    """:func:`run_evaluator` within ``timeout`` seconds (else :class:`TimeoutError`).

    A blocking evaluator run on this thread cannot be interrupted: it is timed, and one that took
    longer than ``timeout`` is a timeout when it ends, as it is when a worker thread runs it.
    """
    if evaluator.blocking and runs_on_this_thread():
        started = time.perf_counter()
        result = _run_blocking(evaluator, ctx)
        if time.perf_counter() - started > timeout:
            raise TimeoutError
        return result
    return await asyncio.wait_for(run_evaluator(evaluator, ctx), timeout=timeout)


class EvalPipeline:
    """Runs evaluators in order (tier, order, name) and combines their scores.

    Args:
        config: The configuration (evaluator selection, weights, timeouts).
        evaluators: Evaluators to run instead of the configured selection of registered ones.

    Raises:
        ConfigurationError: If the configuration names an evaluator, or (when the graph
            evaluator runs) a metric, that is not registered, or an evaluator named ``extra``:
            said before any scenario runs, not as a failure of every scenario.
    """

    def __init__(self, config: EvalConfig | None = None, *, evaluators: Sequence[Evaluator] | None = None) -> None:
        self.config = config or EvalConfig()
        if evaluators is None:
            evaluators = select_evaluators(self.config.evaluators, self.config.disabled_evaluators)
        self.evaluators = sorted(evaluators, key=lambda e: (e.tier, e.order, e.name))
        if any(e.name == RESERVED for e in self.evaluators):
            raise ConfigurationError(f"an evaluator may not be named {RESERVED!r}: results keep plugins' results there")
        if any(e.name == GraphEvaluator.name for e in self.evaluators):
            select_metrics(self.config.metrics, self.config.disabled_metrics)

    async def _attribute(self, ctx: EvalContext) -> Attribution:
        """The rules' attribution (on a worker thread), ranked by the judge's model when one is configured."""
        found = await off_the_loop(attribute, ctx)
        answer = ctx.outcome.output if ctx.outcome is not None else None
        return await rank_with_model(found, self.config.judge, task=ctx.scenario.task, answer=answer)

    async def run(self, ctx: EvalContext, *, attribution: Literal["failed", "always"] = "failed") -> ScenarioEvaluation:
        """Evaluate ``ctx``; one evaluator's failure becomes a :class:`EvaluatorFailure` entry.

        Args:
            ctx: The scenario.
            attribution: ``failed``: attribute the failure of a scenario that did not pass
                (:mod:`coordbench.evals.attribution`); ``always``: every scenario's, as if it failed.
        """
        with evaluation_cache():  # each message read once for every evaluator and the attribution
            return await self._run(ctx, attribution)

    async def _run(self, ctx: EvalContext, attribution: Literal["failed", "always"]) -> ScenarioEvaluation:
        failures: list[EvaluatorFailure] = []
        scores: dict[str, float | None] = {}
        for evaluator in self.evaluators:
            started = time.perf_counter()
            try:
                result = await _timed(evaluator, ctx, self.config.evaluator_timeout)
                score = evaluator.score(result, ctx)
            except TimeoutError:
                message = f"timed out after {self.config.evaluator_timeout:g} s"
                logger.warning("evaluator %r on scenario %r %s", evaluator.name, ctx.scenario.id, message)
                failures.append(EvaluatorFailure(evaluator=evaluator.name, tier=evaluator.tier, error=message))
                continue
            except Exception as exc:
                logger.warning(
                    "evaluator %r failed on scenario %r: %s", evaluator.name, ctx.scenario.id, exc, exc_info=True
                )
                failures.append(
                    EvaluatorFailure(
                        evaluator=evaluator.name, tier=evaluator.tier, error=f"{type(exc).__name__}: {exc}"
                    )
                )
                continue
            logger.debug("evaluator %r took %.1f ms", evaluator.name, (time.perf_counter() - started) * 1e3)
            ctx.results[evaluator.name] = result
            scores[evaluator.name] = score
        score = combine(scores, self.config.weights)
        # a team that delivered no answer never passes, whatever a judge made of its process
        passed = score.overall >= self.config.pass_threshold and (ctx.outcome is None or ctx.outcome.succeeded)
        blamed: Attribution | None = None
        if not passed or attribution == "always":
            try:
                blamed = await asyncio.wait_for(self._attribute(ctx), timeout=self.config.evaluator_timeout)
            except Exception as exc:  # reported beside the evaluators' failures, never fatal
                why = (
                    f"timed out after {self.config.evaluator_timeout:g} s"
                    if isinstance(exc, TimeoutError)
                    else (f"{type(exc).__name__}: {exc}")
                )
                logger.warning("attribution on scenario %r failed: %s", ctx.scenario.id, why)
                failures.append(EvaluatorFailure(evaluator=ATTRIBUTION, tier=ATTRIBUTION_TIER, error=why))
        return ScenarioEvaluation(
            scenario=ctx.scenario.id,
            results=EvaluatorResults.of(ctx.results),
            failures=failures,
            score=score,
            passed=passed,
            attribution=blamed,
        )
