"""From spans to :class:`~coordbench.graph.metrics.result.GraphMetrics`: the graph tier in one call."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import networkx as nx

from coordbench.graph.agentgraph import add_declared_agents, agent_view, build_agent_graph
from coordbench.graph.metrics.centrality import shared_flow_betweenness
from coordbench.graph.metrics.detections import Thresholds, classify, detect
from coordbench.graph.metrics.registry import Metric, MetricInput, select_metrics
from coordbench.graph.metrics.result import AgentSummary, EdgeSummary, GraphMetrics, MetricInfo
from coordbench.graph.metrics.topology import topology
from coordbench.graph.steptree import StepTree
from coordbench.spans import SpanData
from coordbench.spantree import SpanTree

__all__ = ["evaluate_graph"]

logger = logging.getLogger(__name__)


def evaluate_graph(
    spans: Iterable[SpanData] | SpanTree,
    *,
    thresholds: Thresholds | None = None,
    metrics: list[Metric] | None = None,
    hosts: Iterable[str] = (),
    declared_agents: Iterable[str] = (),
    graph: nx.DiGraph[str] | None = None,
    steps: StepTree | None = None,
) -> GraphMetrics:
    """Build the agent graph and StepTree of the spans, run the metrics, detect and classify.

    Args:
        spans: Spans of one or more traces (merged into one graph).
        thresholds: Detection thresholds (defaults: the benchmark's).
        metrics: Metric plugins to run (default: every registered one; see
            :func:`~coordbench.graph.metrics.registry.select_metrics`).
        hosts: Agents to treat as hosts besides those owning a root HOST step.
        declared_agents: Agents expected to take part (say, an assessment's participants):
            added as nodes even if no span mentions them, so absence shows as isolation.
        graph: The full agent graph of ``spans``, if already built (it is extended with
            ``declared_agents`` in place).
        steps: The StepTree of ``spans``, if already built.

    Returns:
        The result; a metric that raises is reported in ``metric_errors``, not raised.
    """
    thresholds = thresholds or Thresholds()
    tree = spans if isinstance(spans, SpanTree) else SpanTree(spans)
    full = graph if graph is not None else build_agent_graph(tree, hosts=hosts)
    add_declared_agents(full, declared_agents)
    view = agent_view(full)
    inputs = MetricInput(graph=view, full_graph=full, steps=steps if steps is not None else StepTree(tree))
    results: dict[str, object] = {}
    info: dict[str, MetricInfo] = {}
    errors: dict[str, str] = {}
    for metric in metrics if metrics is not None else select_metrics():
        info[metric.name] = MetricInfo(
            description=metric.description,
            edge_model=metric.edge_model,
            includes_tools=metric.includes_tools,
            includes_hosts=metric.includes_hosts,
        )
        try:
            results[metric.name] = metric.compute(inputs)
        except Exception as exc:
            logger.warning("metric %r failed: %s", metric.name, exc, exc_info=True)
            errors[metric.name] = f"{type(exc).__name__}: {exc}"
    detections = detect(view, thresholds, flow_betweenness_values=shared_flow_betweenness(inputs))
    classification, label = classify(detections, view.number_of_nodes())
    entries = sorted({callee for host in full.graph["hosts"] if host in full for callee in full.successors(host)})
    return GraphMetrics(
        traces=list(full.graph["traces"]),
        agents=[
            AgentSummary(
                name=name,
                role=data["role"],
                requests=data["requests"],
                calls=data["calls"],
                errors=data["errors"],
                tool_calls=data["tool_calls"],
                tool_time_ms=data["tool_time_ms"],
            )
            for name, data in full.nodes(data=True)
        ],
        hosts=list(full.graph["hosts"]),
        edges=[
            EdgeSummary(
                caller=u,
                callee=v,
                count=d["count"],
                errors=d["errors"],
                polls=d["polls"],
                latency_mean_ms=d["latency_mean_ms"],
                latency_p50_ms=d["latency_p50_ms"],
                latency_max_ms=d["latency_max_ms"],
            )
            for u, v, d in full.edges(data=True)
        ],
        interactions=sum(c for *_, c in view.edges(data="count", default=1)),
        metrics=results,
        metric_info=info,
        metric_errors=errors,
        detections=detections,
        thresholds=thresholds,
        classification=classification,
        label=label,
        topology=topology(view, entries=entries, flow=inputs.flow),
        orphan_steps=len(inputs.steps.orphans),
    )
