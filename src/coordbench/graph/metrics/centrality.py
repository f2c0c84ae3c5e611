"""Centrality: who sits where in the interaction graph.

Conventions: values are per agent, normalised as NetworkX normalises them (so they are
comparable across team sizes), and computed unweighted unless the docstring says otherwise:
a call count is a strength, not a distance, so it must never be fed to shortest-path based
measures as a weight, where a busier link would look longer (NetworkX takes ``weight`` as a
distance: https://networkx.org/documentation/stable/reference/algorithms/shortest_paths.html).
"""

from __future__ import annotations

import networkx as nx

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics.registry import Metric, MetricInput

__all__ = [
    "BETWEENNESS",
    "CLOSENESS",
    "DEGREE",
    "EIGENVECTOR",
    "FLOW_BETWEENNESS",
    "PAGERANK",
    "betweenness",
    "closeness",
    "degree",
    "eigenvector",
    "flow_betweenness",
    "pagerank",
    "shared_flow_betweenness",
]


def degree(G: nx.DiGraph[str]) -> dict[str, dict[str, float]]:
    """In-, out- and total degree centrality of each agent (directed call graph).

    ``in = indeg / (n - 1)``, ``out = outdeg / (n - 1)``, ``total = (indeg + outdeg) / (n - 1)``
    (so ``total`` can exceed 1 when agents call each other both ways). All 0 for n < 2.

    Example:
        >>> G = nx.DiGraph([("hub", "a"), ("hub", "b"), ("a", "b")])
        >>> degree(G)["hub"]
        {'in': 0.0, 'out': 1.0, 'total': 1.0}
    """
    n = G.number_of_nodes()
    scale = 1.0 / (n - 1) if n > 1 else 0.0
    return {
        node: {"in": G.in_degree(node) * scale, "out": G.out_degree(node) * scale, "total": G.degree(node) * scale}
        for node in G
    }


def betweenness(G: nx.DiGraph[str]) -> dict[str, float]:
    """Directed betweenness: share of directed shortest call paths through each agent.

    Normalised by ``(n - 1)(n - 2)``. A pure fan-out orchestrator scores 0 here (nothing flows
    *through* it along call direction); see :func:`flow_betweenness` for bottlenecks.

    Example:
        >>> betweenness(nx.DiGraph([("a", "b"), ("b", "c")]))
        {'a': 0.0, 'b': 0.5, 'c': 0.0}
    """
    return dict(nx.betweenness_centrality(G, normalized=True))


def flow_betweenness(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, float]:
    """Betweenness on the undirected flow view (calls plus their replies).

    Information travels both ways on a call (request out, answer back), so this is the view
    that shows an agent every exchange has to pass through. Normalised to [0, 1]: the hub of
    a star scores 1 at any team size. ``flow``: ``flow_view(G)``, when already built.

    Example:
        >>> flow_betweenness(nx.DiGraph([("hub", "a"), ("hub", "b"), ("hub", "c")]))["hub"]
        1.0
    """
    return dict(nx.betweenness_centrality(flow_view(G) if flow is None else flow, normalized=True))


def shared_flow_betweenness(inputs: MetricInput) -> dict[str, float]:
    """:func:`flow_betweenness` of ``inputs.graph``, computed once per evaluation (metrics and detection read it)."""
    return inputs.memo("flow_betweenness", lambda g: flow_betweenness(g, flow=inputs.flow))


def closeness(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, float]:
    """Closeness on the undirected flow view (``flow``, when already built), Wasserman-Faust scaled.

    ``C(u) = (r - 1)/(n - 1) * (r - 1)/Σ d(u, v)`` over the ``r`` agents ``u`` can reach, so it
    stays defined (and comparable) when the graph is disconnected. Undirected because a
    calls-only orchestrator would otherwise get 0 (NetworkX uses incoming distance on digraphs).

    Example:
        >>> closeness(nx.DiGraph([("a", "b"), ("b", "c")]))["b"]
        1.0
    """
    return dict(nx.closeness_centrality(flow_view(G) if flow is None else flow))  # pyright: ignore[reportUnknownMemberType] - stub gap


def eigenvector(G: nx.DiGraph[str], *, flow: nx.Graph[str] | None = None) -> dict[str, object]:
    """Eigenvector centrality with a defined fallback, weighted by call ``count``.

    The directed version is meaningless on call trees: a DAG's adjacency matrix has no
    positive leading eigenvalue, and power iteration drifts to an arbitrary vector
    (networkx#4021). So: ``directed`` when the call graph has a cycle and the iteration
    converges; otherwise ``undirected-flow`` (Perron-Frobenius applies to each connected
    part); if that fails too, PageRank. The result says which was used. ``flow``: ``flow_view(G)``,
    when already built.

    Returns:
        ``{"method": "directed" | "undirected-flow" | "pagerank", "values": {agent: value}}``.

    Example:
        >>> eigenvector(nx.DiGraph([("hub", "a"), ("hub", "b")]))["method"]
        'undirected-flow'
    """
    if G.number_of_nodes() == 0:
        return {"method": "directed", "values": {}}
    if G.number_of_edges() and not nx.is_directed_acyclic_graph(G):
        try:
            return {"method": "directed", "values": dict(nx.eigenvector_centrality(G, max_iter=1000, weight="count"))}
        except (nx.PowerIterationFailedConvergence, nx.NetworkXException):
            pass
    try:
        undirected = flow_view(G) if flow is None else flow
        values = dict(nx.eigenvector_centrality(undirected, max_iter=1000, weight="count"))
        return {"method": "undirected-flow", "values": values}
    except (nx.PowerIterationFailedConvergence, nx.NetworkXException):
        return {"method": "pagerank", "values": pagerank(G)}


def pagerank(G: nx.DiGraph[str]) -> dict[str, float]:
    """PageRank of the directed call graph, ``count`` as edge strength, damping 0.85.

    Always defined (teleporting handles agents that call no one). High = many calls come
    from agents that are themselves called a lot.

    Example:
        >>> ranks = pagerank(nx.DiGraph([("a", "b"), ("c", "b")]))
        >>> max(ranks, key=ranks.get)
        'b'
    """
    if G.number_of_nodes() == 0:
        return {}
    # tol 1e-10 rather than NetworkX's 1e-6: agent graphs are tiny, and results must not move at the
    # sixth decimal between libraries or runs
    return dict(nx.pagerank(G, alpha=0.85, weight="count", tol=1e-10, max_iter=1000))


DEGREE = Metric("degree_centrality", lambda i: degree(i.graph), "In/out/total degree per agent.", "directed")
BETWEENNESS = Metric(
    "betweenness_centrality",
    lambda i: betweenness(i.graph),
    "Share of directed call paths through each agent.",
    "directed",
)
FLOW_BETWEENNESS = Metric(
    "flow_betweenness_centrality",
    shared_flow_betweenness,
    "Share of exchanges (calls and replies) passing through each agent; the bottleneck measure.",
    "undirected-flow",
)
CLOSENESS = Metric(
    "closeness_centrality",
    lambda i: closeness(i.graph, flow=i.flow),
    "How near each agent is to the others (calls and replies, Wasserman-Faust).",
    "undirected-flow",
)
EIGENVECTOR = Metric(
    "eigenvector_centrality",
    lambda i: eigenvector(i.graph, flow=i.flow),
    "Influence by connection to influential agents, with a fallback on call trees.",
    "directed",
)
PAGERANK = Metric("pagerank", lambda i: pagerank(i.graph), "PageRank of the call graph, weighted by calls.", "directed")
