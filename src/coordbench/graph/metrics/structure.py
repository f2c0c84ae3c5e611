"""Structure: how dense, clustered, connected and reciprocal the interactions are."""

from __future__ import annotations

import networkx as nx

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics import kernels
from coordbench.graph.metrics.registry import Metric

__all__ = [
    "CLUSTERING",
    "COMPONENTS",
    "DENSITY",
    "RECIPROCITY",
    "clustering",
    "components",
    "density",
    "python_triangles",
    "reciprocity",
    "triangles",
]


def density(G: nx.DiGraph[str]) -> float:
    """Directed density ``m / (n (n - 1))``: the share of possible caller → callee pairs used.

    0 for n < 2. Not size-invariant (a star has density ``1/n``), which is why the
    classification also looks at connectivity and concentration.

    Example:
        >>> density(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")]))
        0.5
    """
    n = G.number_of_nodes()
    return G.number_of_edges() / (n * (n - 1)) if n > 1 else 0.0


def clustering(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> float:
    """Average clustering coefficient of the undirected flow view (``flow``, when already built).

    The share of an agent's partners that also talk to each other, averaged over agents
    (agents with fewer than two partners count as 0). Undirected, because who initiated a
    call does not change whether three agents form a working group.

    Example:
        >>> clustering(nx.DiGraph([("a", "b"), ("b", "c"), ("a", "c")]))
        1.0
    """
    if G.number_of_nodes() == 0:
        return 0.0
    H = flow_view(G) if flow is None else flow
    partners, twice = triangles(kernels.neighbour_rows(H))
    # nx.average_clustering(H), its arithmetic as it is: the same float
    values = [0 if t == 0 else t / (d * (d - 1)) for d, t in zip(partners, twice, strict=True)]
    return float(sum(values) / len(values))


def triangles(rows: list[list[int]]) -> tuple[list[int], list[int]]:
    """Per node (``rows[i]``: node ``i``'s neighbours): its partners and twice the triangles through it.

    The C kernel (:data:`~coordbench.graph.metrics.kernels.KERNELS`) when built, else
    :func:`python_triangles`: the same counts.
    """
    native = kernels.KERNELS
    return native.triangles(rows) if native is not None else python_triangles(rows)


def python_triangles(rows: list[list[int]]) -> tuple[list[int], list[int]]:
    """:func:`triangles` in Python: NetworkX's ``_triangles_and_degree_iter``."""
    partners: list[int] = []
    twice: list[int] = []
    for v, row in enumerate(rows):
        vs = set(row) - {v}
        partners.append(len(vs))
        twice.append(sum(len(vs & (set(rows[w]) - {w})) for w in vs))
    return partners, twice


def components(G: nx.DiGraph[str]) -> dict[str, object]:
    """Connected components: weakly (ignoring direction) and strongly connected.

    Returns:
        ``{"weak": k, "strong": k, "weak_sizes": [largest first]}``.

    Example:
        >>> components(nx.DiGraph([("a", "b"), ("c", "d")]))
        {'weak': 2, 'strong': 4, 'weak_sizes': [2, 2]}
    """
    if G.number_of_nodes() == 0:
        return {"weak": 0, "strong": 0, "weak_sizes": []}
    weak = sorted((len(c) for c in nx.weakly_connected_components(G)), reverse=True)
    return {"weak": len(weak), "strong": nx.number_strongly_connected_components(G), "weak_sizes": weak}


def reciprocity(G: nx.DiGraph[str]) -> float:
    """Share of caller → callee edges whose callee also calls the caller back (0 with no edges).

    Example:
        >>> reciprocity(nx.DiGraph([("a", "b"), ("b", "a"), ("a", "c")]))
        0.6666666666666666
    """
    edges = G.number_of_edges()
    if edges == 0:
        return 0.0
    # counted directly: nx.overall_reciprocity builds an undirected copy, deep-copying every edge's data
    return sum(1 for u, v in G.edges() if G.has_edge(v, u)) / edges


DENSITY = Metric("density", lambda i: density(i.graph), "Share of possible caller-callee pairs used.", "directed")
CLUSTERING = Metric(
    "clustering",
    lambda i: clustering(i.graph, flow=i.flow),
    "Average clustering of who-works-with-whom.",
    "undirected-flow",
)
COMPONENTS = Metric(
    "connected_components", lambda i: components(i.graph), "Weakly and strongly connected components.", "directed"
)
RECIPROCITY = Metric(
    "reciprocity", lambda i: reciprocity(i.graph), "Share of calls answered by calls back.", "directed"
)
