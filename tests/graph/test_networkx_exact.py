"""The metrics computed without NetworkX's machinery give NetworkX's floats, bit for bit.

PageRank (SciPy's sparse iteration, replayed), eigenvector centrality, betweenness (directed,
and on the flow view), closeness, clustering, the path statistics and participation run on
plain lists for speed (an agent graph is small: NetworkX's views and SciPy's setup cost more
than the arithmetic), the inner loops of most in C (``test_kernels_native.py`` checks the C
against the Python, with the same floats). Each is checked here against NetworkX itself on random call graphs:
self-calls, nodes with no edge, dangling callees, parallel calls counted, up to 300 agents
(PageRank past :data:`SMALL_GRAPH` goes to NetworkX itself), and unusual weights.
"""

from __future__ import annotations

import math
import struct

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics.centrality import (
    SMALL_GRAPH,
    betweenness,
    closeness,
    eigenvector,
    flow_betweenness,
    pagerank,
)
from coordbench.graph.metrics.distribution import interaction_share, participation
from coordbench.graph.metrics.paths import path_lengths
from coordbench.graph.metrics.structure import clustering


@st.composite
def call_graphs(draw: st.DrawFn, most: int = 40) -> nx.DiGraph[str]:
    """A call graph as the agent graph holds it: ``count`` calls and ``distance = 1 / count`` per edge."""
    n = draw(st.integers(0, most))
    names = draw(st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=n, max_size=n, unique=True))
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(names)
    if names:
        for u, v, count in draw(
            st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names), st.integers(1, 60)), max_size=4 * n)
        ):
            graph.add_edge(u, v, count=count, distance=1.0 / count)
    return graph


def _same(ours: dict[str, float], theirs: dict[str, float]) -> None:
    assert list(ours) == list(theirs)  # the same agents in the same order
    assert all(ours[k] == theirs[k] or (math.isnan(ours[k]) and math.isnan(theirs[k])) for k in ours), (ours, theirs)


def _networkx_paths(graph: nx.DiGraph[str]) -> dict[str, float | int | None]:
    n = graph.number_of_nodes()
    pairs = n * (n - 1)
    hops: list[int] = []
    inverse = 0.0
    for _source, lengths in nx.all_pairs_shortest_path_length(graph):
        for d in lengths.values():
            if d > 0:
                hops.append(d)
                inverse += 1.0 / d
    weighted: list[float] = []
    for source, lengths in nx.all_pairs_dijkstra_path_length(graph, weight="distance"):
        weighted.extend(d for target, d in lengths.items() if target != source)
    return {
        "average": sum(hops) / len(hops) if hops else None,
        "diameter": max(hops) if hops else None,
        "reachability": len(hops) / pairs if pairs else 0.0,
        "efficiency": inverse / pairs if pairs else 0.0,
        "weighted_average": sum(weighted) / len(weighted) if weighted else None,
    }


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(call_graphs())
def test_each_metric_is_networkxs_to_the_last_bit(graph: nx.DiGraph[str]) -> None:
    if graph.number_of_nodes():
        _same(pagerank(graph), dict(nx.pagerank(graph, alpha=0.85, weight="count", tol=1e-10, max_iter=1000)))
    _same(betweenness(graph), nx.betweenness_centrality(graph, normalized=True))
    flow = flow_view(graph)
    _same(flow_betweenness(graph), nx.betweenness_centrality(flow, normalized=True))
    if graph.number_of_nodes():
        assert struct.pack("<d", clustering(graph, flow=flow)) == struct.pack("<d", nx.average_clustering(flow))
    _same(closeness(graph, flow=flow), dict(nx.closeness_centrality(flow)))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    assert path_lengths(graph) == _networkx_paths(graph)
    in_out = {
        node: sum(c for *_, c in graph.in_edges(node, data="count", default=1))
        + sum(c for *_, c in graph.out_edges(node, data="count", default=1))
        for node in graph
    }
    assert participation(graph) == in_out
    messages = sum(c for *_, c in graph.edges(data="count", default=1))
    assert interaction_share(graph) == {node: in_out[node] / messages if messages else 0.0 for node in graph}
    found = eigenvector(graph, flow=flow)
    if found["method"] == "undirected-flow":
        _same(found["values"], dict(nx.eigenvector_centrality(flow, max_iter=1000, weight="count")))  # type: ignore[arg-type]
    elif found["method"] == "directed" and graph.number_of_nodes():
        _same(found["values"], dict(nx.eigenvector_centrality(graph, max_iter=1000, weight="count")))  # type: ignore[arg-type]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(call_graphs(most=300).filter(lambda g: g.number_of_nodes() > 129))
def test_large_graphs_too(graph: nx.DiGraph[str]) -> None:
    # past 128 agents NumPy's sum of the convergence error goes by halves; past SMALL_GRAPH NetworkX runs it
    _same(pagerank(graph), dict(nx.pagerank(graph, alpha=0.85, weight="count", tol=1e-10, max_iter=1000)))
    _same(betweenness(graph), nx.betweenness_centrality(graph, normalized=True))


def test_pagerank_leaves_weights_that_are_not_whole_numbers_to_networkx() -> None:
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_edge("a", "b", count=0.1)
    graph.add_edge("a", "c", count=0.2)
    graph.add_edge("c", "a", count=True)
    graph.add_edge("b", "c")
    _same(pagerank(graph), dict(nx.pagerank(graph, alpha=0.85, weight="count", tol=1e-10, max_iter=1000)))
    assert graph.number_of_nodes() <= SMALL_GRAPH


def test_a_hand_worked_pagerank() -> None:
    # two agents calling each other once: the chain is symmetric, so each holds half
    ranks = pagerank(nx.DiGraph([("a", "b"), ("b", "a")]))
    assert ranks == {"a": 0.5, "b": 0.5}
    # a caller and a callee that calls no one (dangling: its rank is spread over both):
    # x_a = 0.15 / 2 + 0.85 * x_b / 2 and x_a + x_b = 1, so 1.425 x_a = 0.5: x_a = 1 / 2.85
    ranks = pagerank(nx.DiGraph([("a", "b")]))
    assert math.isclose(ranks["a"], 1 / 2.85, rel_tol=1e-9) and math.isclose(sum(ranks.values()), 1.0)
