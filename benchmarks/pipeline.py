"""The whole evaluator pipeline (rule-based judge) on a 20-agent, 10k-span trace.

Every registered evaluator runs as in an assessment: graph, protocol, latency, the judge (no API
key: the rule-based judge, which needs no prompt) and text; client spans carry captured message
text, so the text evaluator has work to do. Building the LLM judge's prompt (what a configured
judge does before its HTTP call) is timed on its own. The graph tier alone (``evaluate_graph``)
is timed in the same run as the baseline.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass

from benchmarks.evaluation import AGENTS, synthetic_trace
from coordbench.evals import EvalConfig, EvalContext, EvalPipeline, EvalScenario, JudgeConfig, select_evaluators
from coordbench.evals.judge_prompt import build_prompt
from coordbench.graph import evaluate_graph
from coordbench.server.app import tune_gc_for_ingest

SPANS = 10_000
RUNS = 5


@dataclass
class PipelineResult:
    spans: int
    graph_only_ms: float
    build_ms: float
    pipeline_ms: float
    by_evaluator_ms: dict[str, float]
    prompt_ms: float
    prompt_chars: int

    @property
    def total_ms(self) -> float:
        return self.build_ms + self.pipeline_ms


async def _measure() -> PipelineResult:
    os.environ.pop("AGENTBEATS_LLM_API_KEY", None)
    spans = synthetic_trace(SPANS, content=True)
    hosts = ["host"]
    config = EvalConfig(judge=JudgeConfig())
    graph_times, build_times, pipeline_times = [], [], []
    per: dict[str, list[float]] = {}
    prompt_times: list[float] = []
    prompt_chars = 0
    for _ in range(RUNS):
        started = time.perf_counter()
        evaluate_graph(spans, hosts=hosts).to_json()
        graph_times.append(time.perf_counter() - started)

        started = time.perf_counter()
        ctx = EvalContext.build(spans, scenario=EvalScenario(id="bench"), config=config, hosts=hosts)
        build_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        evaluation = await EvalPipeline(config).run(ctx)
        evaluation.to_json()
        pipeline_times.append(time.perf_counter() - started)
        assert not evaluation.failures, evaluation.failures
        assert evaluation.results.llm_judge is not None and evaluation.results.llm_judge.judge == "rules"

        # the same evaluators one by one, for the breakdown
        ctx = EvalContext.build(spans, scenario=EvalScenario(id="bench"), config=config, hosts=hosts)
        for evaluator in select_evaluators():
            started = time.perf_counter()
            ctx.results[evaluator.name] = await evaluator.evaluate(ctx)
            per.setdefault(evaluator.name, []).append(time.perf_counter() - started)
        started = time.perf_counter()
        prompt = build_prompt(ctx, max_chars=config.judge.max_prompt_chars)
        prompt_times.append(time.perf_counter() - started)
        prompt_chars = prompt.chars
    return PipelineResult(
        spans=len(spans),
        graph_only_ms=statistics.median(graph_times) * 1e3,
        build_ms=statistics.median(build_times) * 1e3,
        pipeline_ms=statistics.median(pipeline_times) * 1e3,
        by_evaluator_ms={name: statistics.median(t) * 1e3 for name, t in per.items()},
        prompt_ms=statistics.median(prompt_times) * 1e3,
        prompt_chars=prompt_chars,
    )


def run() -> PipelineResult:
    tune_gc_for_ingest()
    return asyncio.run(_measure())


def report(result: PipelineResult) -> str:
    lines = [
        "## Evaluator pipeline (`benchmarks/pipeline.py`)",
        "",
        f"One trace of {result.spans:,} spans, {AGENTS} agents plus the host, captured message text on every call; "
        f"every built-in evaluator, rule-based judge (no API key); median of {RUNS} runs. "
        "*Context*: span tree, StepTree, agent graph and call list, built once for all evaluators. "
        "*Graph tier alone*: `evaluate_graph` on the same spans in the same run, the baseline.",
        "",
        "| spans | context (ms) | pipeline (ms) | total (ms) | graph tier alone (ms) | total / graph tier |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {result.spans:,} | {result.build_ms:,.1f} | {result.pipeline_ms:,.1f} | {result.total_ms:,.1f} | "
        f"{result.graph_only_ms:,.1f} | {result.total_ms / result.graph_only_ms:.2f} |",
        "",
        "Per evaluator (ms): " + ", ".join(f"{name} {ms:,.1f}" for name, ms in result.by_evaluator_ms.items()) + ".",
        "",
        f"Building the LLM judge's prompt for this trace (with a key configured, before the HTTP call): "
        f"{result.prompt_ms:,.1f} ms for a {result.prompt_chars:,}-character data block (bound 24,000).",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
