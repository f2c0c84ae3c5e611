"""Tier 1: the graph evaluator, wrapping the metric plugins, detections and classification."""

from __future__ import annotations

from typing import Any

from coordbench.evals.base import TIER_GRAPH, EvalContext, Evaluator
from coordbench.graph.evaluate import evaluate_graph
from coordbench.graph.metrics import Classification, GraphMetrics, select_metrics

__all__ = ["CLASSIFICATION_VALUE", "GraphEvaluator", "graph_score"]

CLASSIFICATION_VALUE: dict[Classification, float] = {"high": 1.0, "medium": 0.75, "bottleneck": 0.4, "low": 0.25}
"""What each coordination class is worth in the graph score."""


def graph_score(metrics: GraphMetrics, participants: tuple[str, ...] = ()) -> float:
    """The graph tier's score: class value * participation.

    ``participation`` is the share of the declared participants that exchanged at least one
    message (all non-host agents when none are declared); the class value is 1.0 (high),
    0.75 (medium), 0.4 (bottleneck), 0.25 (low), and 0 when fewer than two agents interacted.

    Example:
        A bottleneck team where 3 of 4 declared participants took part: ``0.4 * 3/4 = 0.3``.
    """
    isolated = set(metrics.detections.isolated_agents)
    agents = [a.name for a in metrics.agents if a.role != "host"]
    declared = list(participants) or agents
    if not declared:
        return 0.0
    interacting = [a for a in agents if a not in isolated]
    if len(interacting) < 2:
        return 0.0
    participation = sum(1 for a in declared if a in agents and a not in isolated) / len(declared)
    return CLASSIFICATION_VALUE[metrics.classification] * participation


class GraphEvaluator(Evaluator):
    """Who talked to whom: the agent graph's metrics, detections and coordination class."""

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

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """See :func:`graph_score`."""
        return graph_score(result, ctx.participants) if isinstance(result, GraphMetrics) else None
