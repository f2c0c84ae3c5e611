"""Metric plugins: what a metric is, and how metrics are discovered, enabled and disabled.

Every metric, ours included, is registered under the ``coordbench.metrics`` entry-point
group and points at a :class:`Metric`. A third-party package adds one without touching
coordbench::

    [project.entry-points."coordbench.metrics"]
    hub_ratio = "my_package.metrics:HUB_RATIO"

A plugin that fails to load is skipped with a warning; asking for a metric that does not
exist is an error that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import networkx as nx

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.steptree import StepTree
from coordbench.plugins import discover, select

__all__ = ["ENTRY_POINT_GROUP", "EdgeModel", "Metric", "MetricInput", "available_metrics", "select_metrics"]

ENTRY_POINT_GROUP = "coordbench.metrics"

EdgeModel = Literal["directed", "undirected-flow", "steps"]
"""What a metric reads.

- ``directed``: the call graph as is (caller → callee, one edge per pair, ``count``).
- ``undirected-flow``: calls plus replies (each call carries information both ways), i.e.
  the undirected view (:func:`~coordbench.graph.agentgraph.flow_view`).
- ``steps``: the StepTree (time and nesting of the steps), not the agent graph.
"""


@dataclass(frozen=True)
class MetricInput:
    """What a metric is computed from.

    Attributes:
        graph: The agent view of the graph (hosts left out): what coordination metrics read.
        full_graph: The whole graph, hosts included.
        steps: The StepTree of the traces.
    """

    graph: nx.DiGraph[str]
    full_graph: nx.DiGraph[str]
    steps: StepTree
    _memo: dict[str, Any] = field(default_factory=dict[str, Any], repr=False, compare=False)

    def memo(self, key: str, compute: Callable[[nx.DiGraph[str]], Any]) -> Any:
        """``compute(self.graph)``, computed once per evaluation (several metrics share a value)."""
        if key not in self._memo:
            self._memo[key] = compute(self.graph)
        return self._memo[key]

    @property
    def flow(self) -> nx.Graph[str]:
        """The undirected flow view of :attr:`graph` (:func:`~coordbench.graph.agentgraph.flow_view`), built once."""
        return cast("nx.Graph[str]", self.memo("flow_view", flow_view))


@dataclass(frozen=True)
class Metric:
    """A metric plugin.

    Attributes:
        name: Unique name (the key in the results).
        compute: Function of the input returning a JSON-serialisable value.
        description: One line: what the number means.
        edge_model: Which view of the interactions it reads.
        includes_tools: Whether TOOL steps count (as nodes or time).
        includes_hosts: Whether the host's calls count.
    """

    name: str
    compute: Callable[[MetricInput], Any]
    description: str
    edge_model: EdgeModel
    includes_tools: bool = False
    includes_hosts: bool = False


def _as_metric(obj: object) -> Metric | None:
    return obj if isinstance(obj, Metric) else None


def _metric_name(metric: Metric) -> str:
    return metric.name


def available_metrics() -> dict[str, Metric]:
    """Every metric registered under ``coordbench.metrics``, by name (sorted).

    A plugin that fails to import, or does not point at a :class:`Metric`, is skipped
    with a warning. Discovery is cached per ``sys.path``.
    """
    return discover(ENTRY_POINT_GROUP, _as_metric, _metric_name)


def select_metrics(enabled: Iterable[str] | None = None, disabled: Iterable[str] = ()) -> list[Metric]:
    """The metrics to compute.

    Args:
        enabled: Only these (default: all available).
        disabled: Leave these out.

    Returns:
        The selected metrics, sorted by name.

    Raises:
        ConfigurationError: If a name is not an available metric (the message names it).
    """
    return select(available_metrics(), enabled, disabled, "metric")
