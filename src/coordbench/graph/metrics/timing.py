"""Time on the StepTree: the critical path, and how much work ran in parallel.

Per-call latency percentiles hide what the user waits for. The critical path is the chain of
steps that set the end-to-end duration (LAMaS: under parallel execution latency is set by
the critical path, not by total cost); parallelism is how many steps were busy at once on
average. Both read span times, not the agent graph, so they include TOOL steps and the host.
"""

from __future__ import annotations

from coordbench.graph.metrics.registry import Metric, MetricInput

__all__ = ["CRITICAL_PATH", "PARALLELISM", "critical_path", "parallelism"]


def critical_path(inputs: MetricInput) -> dict[str, object]:
    """The critical path's length and each agent's part of it.

    Returns:
        ``{"length_ms": L, "by_agent_ms": {agent: ms}, "share_by_agent": {agent: ms / L}}``.
        See :meth:`coordbench.graph.steptree.StepTree.critical_path` for the walk and a worked
        example (root 0-100 ms with children B 10-40 and C 10-90: A 20 ms, C 80 ms).
    """
    path = inputs.steps.critical_path()
    length = path.length_ms
    return {
        "length_ms": length,
        "by_agent_ms": path.by_agent_ms,
        "share_by_agent": {a: (ms / length if length else 0.0) for a, ms in path.by_agent_ms.items()},
    }


def parallelism(inputs: MetricInput) -> float:
    """Σ self time of all steps / wall time (1.0 = sequential; see ``StepTree.parallelism``)."""
    return inputs.steps.parallelism()


CRITICAL_PATH = Metric(
    "critical_path",
    critical_path,
    "Length of the chain of steps that set the end-to-end latency, and each agent's part.",
    "steps",
    includes_tools=True,
    includes_hosts=True,
)
PARALLELISM = Metric(
    "parallelism",
    parallelism,
    "Average number of steps working at once (1 = strictly sequential).",
    "steps",
    includes_tools=True,
    includes_hosts=True,
)
