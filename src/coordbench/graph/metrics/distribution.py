"""How work and centrality are spread over agents: graded measures that hold at any team size.

An agent's *participation* is the number of messages it sent or received (the ``count`` of
the edges touching it, both directions); the *share* is its participation over twice the
number of messages (each message involves two agents), so shares sum to 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import networkx as nx

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics.centrality import flow_betweenness, shared_flow_betweenness
from coordbench.graph.metrics.registry import Metric

__all__ = [
    "BETWEENNESS_CENTRALISATION",
    "DEGREE_CENTRALISATION",
    "WORKLOAD",
    "betweenness_centralisation",
    "degree_centralisation",
    "freeman_betweenness",
    "gini",
    "interaction_share",
    "normalised_entropy",
    "participation",
    "workload",
]


def participation(G: nx.DiGraph[str]) -> dict[str, int]:
    """Messages each agent sent or received.

    Example:
        >>> G = nx.DiGraph()
        >>> G.add_edge("a", "b", count=3)
        >>> G.add_edge("b", "c", count=1)
        >>> participation(G)
        {'a': 3, 'b': 4, 'c': 1}
    """
    # each node's in- then out-edges in NetworkX's order (its adjacency dicts, as in_edges and out_edges walk them)
    pred, succ = G.pred, G.succ
    received = {node: sum(data.get("count", 1) for data in pred[node].values()) for node in G}
    return {node: received[node] + sum(data.get("count", 1) for data in succ[node].values()) for node in G}


def interaction_share(G: nx.DiGraph[str]) -> dict[str, float]:
    """Share of all messages each agent takes part in (sender or receiver), in [0, 1].

    Example:
        >>> G = nx.DiGraph()
        >>> G.add_edge("hub", "a", count=2)
        >>> G.add_edge("hub", "b", count=2)
        >>> interaction_share(G)
        {'hub': 1.0, 'a': 0.5, 'b': 0.5}
    """
    messages = sum(data.get("count", 1) for _, adjacent in G.adjacency() for data in adjacent.values())
    load = participation(G)
    return {node: load[node] / messages if messages else 0.0 for node in G}


def gini(values: list[float]) -> float:
    """Gini coefficient ``Σ_i Σ_j |x_i - x_j| / (2 n² x̄)``: 0 when equal, toward 1 when one has all.

    Example:
        >>> gini([1, 1, 1, 1]), gini([0, 0, 0, 4])
        (0.0, 0.75)
    """
    n = len(values)
    total = sum(values)
    if n == 0 or total == 0:
        return 0.0
    ordered = sorted(values)
    # Σ_i Σ_j |x_i - x_j| = 2 Σ_i (2i - n + 1) x_(i) for sorted x (0-based i)
    weighted = sum((2 * i - n + 1) * x for i, x in enumerate(ordered))
    return 2 * weighted / (2 * n * total)


def normalised_entropy(values: list[float]) -> float:
    """Shannon entropy of the shares ``x_i / Σ x`` over ``log n``: 1 when equal, 0 when one has all.

    Defined as 0 for fewer than two values or a zero total.

    Example:
        >>> normalised_entropy([1, 1, 1, 1]), normalised_entropy([0, 0, 5])
        (1.0, 0.0)
    """
    n = len(values)
    total = sum(values)
    if n < 2 or total == 0:
        return 0.0
    entropy = 0.0 - sum((x / total) * math.log(x / total) for x in values if x > 0)  # 0.0 - 0.0 is not -0.0
    return entropy / math.log(n)


def workload(G: nx.DiGraph[str]) -> dict[str, float]:
    """Spread of participation over agents: Gini, normalised entropy, and the busiest agent's share.

    Example:
        >>> G = nx.DiGraph()
        >>> for worker in "abc":
        ...     G.add_edge("hub", worker, count=1)
        >>> {k: round(v, 4) for k, v in workload(G).items()}
        {'gini': 0.25, 'entropy': 0.8962, 'max_share': 1.0}
    """
    load = participation(G)
    values = [float(load[n]) for n in G]
    share = interaction_share(G)
    return {"gini": gini(values), "entropy": normalised_entropy(values), "max_share": max(share.values(), default=0.0)}


def degree_centralisation(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> float:
    """Freeman degree centralisation of the undirected flow view (``flow``, when already built).

    ``Σ_i (d_max - d_i) / ((n - 1)(n - 2))`` over partner counts ``d``: 1 for a star, 0 when
    every agent has as many partners (ring, full mesh). 0 for n < 3.

    Example:
        >>> degree_centralisation(nx.DiGraph([("hub", "a"), ("hub", "b"), ("hub", "c")]))
        1.0
    """
    H = flow_view(G) if flow is None else flow
    n = H.number_of_nodes()
    if n < 3:
        return 0.0
    degrees = [d for _, d in H.degree()]
    top = max(degrees)
    return sum(top - d for d in degrees) / ((n - 1) * (n - 2))


def betweenness_centralisation(G: nx.DiGraph[str]) -> float:
    """Freeman betweenness centralisation of the undirected flow view.

    ``Σ_i (b_max - b_i) / (n - 1)`` over normalised betweenness ``b`` (the star's value of that
    sum is ``n - 1``): 1 for a star, 0 when every agent brokers as much (ring, mesh). 0 for n < 3.

    Example:
        >>> round(betweenness_centralisation(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")])), 4)
        0.4444
    """
    return freeman_betweenness(flow_betweenness(G))


def freeman_betweenness(values: Mapping[str, float]) -> float:
    """Freeman centralisation of normalised (flow) betweenness values: ``Σ (b_max - b_i) / (n - 1)``."""
    n = len(values)
    if n < 3:
        return 0.0
    top = max(values.values())
    return sum(top - b for b in values.values()) / (n - 1)


WORKLOAD = Metric(
    "workload",
    lambda i: workload(i.graph),
    "Spread of messages over agents: Gini, normalised entropy, busiest agent's share.",
    "directed",
)
DEGREE_CENTRALISATION = Metric(
    "degree_centralisation",
    lambda i: degree_centralisation(i.graph, flow=i.flow),
    "Freeman degree centralisation: 1 = star, 0 = everyone equally connected.",
    "undirected-flow",
)
BETWEENNESS_CENTRALISATION = Metric(
    "betweenness_centralisation",
    lambda i: freeman_betweenness(shared_flow_betweenness(i)),
    "Freeman betweenness centralisation: 1 = all exchanges through one agent.",
    "undirected-flow",
)
