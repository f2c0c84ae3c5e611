"""The LLM judge against a real small model served locally (llama.cpp, model from PyPI)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from coordbench.evals import EvalConfig, GraphEvaluator, JudgeConfig, LLMJudgeEvaluator, ProtocolEvaluator
from evals.traces import context

pytestmark = [pytest.mark.llm, pytest.mark.slow]


async def test_real_model_gives_a_valid_judgment(local_llm: str) -> None:
    config = EvalConfig(
        judge=JudgeConfig(api_key=SecretStr("local"), base_url=local_llm, model="qwen2.5-coder-0.5b", timeout=600)
    )
    ctx = context(config=config)
    for evaluator in (GraphEvaluator(), ProtocolEvaluator()):
        ctx.results[evaluator.name] = await evaluator.evaluate(ctx)
    judgment = await LLMJudgeEvaluator().evaluate(ctx)
    assert judgment.judge == "llm", judgment.fallback_reason
    assert 0 <= judgment.overall_score <= 1 and 0 <= judgment.coordination_quality <= 1
    assert judgment.reasoning and len(judgment.reasoning) <= 600
    assert len(judgment.strengths) <= 3 and len(judgment.weaknesses) <= 3


async def test_real_model_ranks_the_candidates_attribution_proposed(local_llm: str) -> None:
    from tests.attribution.test_rules import blame, merged, ok, star

    from coordbench.evals.attribution.ranking import rank_with_model

    replies = {"researcher": ok("researcher"), "analyst": (None, "task_failed", True), "planner": ok("planner")}
    spans, _ = star("local-ranked", replies, merged)
    found = blame(spans)
    config = JudgeConfig(api_key=SecretStr("local"), base_url=local_llm, model="qwen2.5-coder-0.5b", timeout=600)
    ranked = await rank_with_model(found, config, task="Report on the bridge.", answer=None)
    assert ranked.ranker == "model:qwen2.5-coder-0.5b", ranked.reason  # the grammar holds it to the schema
    assert ranked.agent in {c.agent for c in found.candidates}
    assert {c.agent for c in ranked.candidates} == {c.agent for c in found.candidates}
    assert ranked.span_id == next(c.span_id for c in found.candidates if c.agent == ranked.agent)
    # temperature 0, one thread, no prompt cache: the same question gets the same answer. The judge asks
    # its model through the same call (coordbench.evals.modelcall.ask_json); asked here, where the answer
    # is short, rather than by judging twice (two judgments took 2.5 minutes of the suite's 20)
    again = await rank_with_model(found, config, task="Report on the bridge.", answer=None)
    assert again == ranked
