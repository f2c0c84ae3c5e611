"""Metric plugins over the agent graph and StepTree, detections and the coordination classification."""

from coordbench.graph.metrics.detections import Classification, Detections, Label, Thresholds, classify, detect
from coordbench.graph.metrics.registry import (
    ENTRY_POINT_GROUP,
    EdgeModel,
    Metric,
    MetricInput,
    available_metrics,
    select_metrics,
)
from coordbench.graph.metrics.result import AgentSummary, EdgeSummary, GraphMetrics, MetricInfo, canonical_json
from coordbench.graph.metrics.topology import TOPOLOGIES, Topology, topology

__all__ = [
    "ENTRY_POINT_GROUP",
    "TOPOLOGIES",
    "AgentSummary",
    "Classification",
    "Detections",
    "EdgeModel",
    "EdgeSummary",
    "GraphMetrics",
    "Label",
    "Metric",
    "MetricInfo",
    "MetricInput",
    "Thresholds",
    "Topology",
    "available_metrics",
    "canonical_json",
    "classify",
    "detect",
    "select_metrics",
    "topology",
]
