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

import functools
import logging
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal

import networkx as nx

from coordbench.errors import ConfigurationError
from coordbench.graph.steptree import StepTree

__all__ = ["ENTRY_POINT_GROUP", "EdgeModel", "Metric", "MetricInput", "available_metrics", "select_metrics"]

logger = logging.getLogger(__name__)

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


def available_metrics() -> dict[str, Metric]:
    """Every metric registered under ``coordbench.metrics``, by name (sorted).

    A plugin that fails to import, or does not point at a :class:`Metric`, is skipped
    with a warning. Discovery is cached per ``sys.path`` (scanning installed distributions
    took a few milliseconds per evaluation); a path that changes is scanned again.
    """
    return dict(_discover(tuple(sys.path)))


@functools.lru_cache(maxsize=8)
def _discover(path: tuple[str, ...]) -> tuple[tuple[str, Metric], ...]:
    del path  # the cache key: entry points depend on what sys.path holds
    found: dict[str, Metric] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            metric = entry.load()
        except Exception as exc:
            logger.warning("metric plugin %r (%s) failed to load and is skipped: %s", entry.name, entry.value, exc)
            continue
        if not isinstance(metric, Metric):
            logger.warning("metric plugin %r (%s) is not a coordbench Metric; skipped", entry.name, entry.value)
            continue
        if metric.name in found:
            logger.warning("metric %r is registered twice; keeping %s", metric.name, found[metric.name].compute)
            continue
        found[metric.name] = metric
    return tuple(sorted(found.items()))


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
    available = available_metrics()
    wanted = list(available) if enabled is None else list(enabled)
    unwanted = list(disabled)
    unknown = sorted({n for n in [*wanted, *unwanted] if n not in available})
    if unknown:
        raise ConfigurationError(
            f"unknown metric(s): {', '.join(unknown)}; available: {', '.join(available) or 'none'}"
        )
    skip = set(unwanted)
    return [available[n] for n in sorted(set(wanted)) if n not in skip]
