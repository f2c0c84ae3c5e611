"""Tier 1: the graph evaluator: the agent graph's metrics, detections, classification and topology.

It describes the team's shape and is never a score by itself: every star has a hub with full
betweenness, and an orchestrator that delegates in parallel and merges answers is doing its
job. What counts against a team is evidence of how it worked
(:mod:`coordbench.evals.coordination`).
"""

from __future__ import annotations

from coordbench.evals.base import TIER_GRAPH, EvalContext, Evaluator
from coordbench.graph.evaluate import evaluate_graph
from coordbench.graph.metrics import GraphMetrics, select_metrics

__all__ = ["GraphEvaluator"]


class GraphEvaluator(Evaluator):
    """Who talked to whom: the agent graph's metrics, detections, coordination class and topology."""

    name = "graph"
    tier = TIER_GRAPH
    blocking = True  # computes only: run on a worker thread
    description = "Agent-graph metrics (centralities, structure, paths, distribution), detections, classification."

    async def evaluate(self, ctx: EvalContext) -> GraphMetrics:
        """Run the configured metric plugins on the context's graph."""
        config = ctx.config
        return evaluate_graph(
            ctx.tree,
            thresholds=config.thresholds,
            metrics=select_metrics(config.metrics, config.disabled_metrics),
            declared_agents=ctx.participants,
            graph=ctx.graph,
            steps=ctx.steps,
        )
