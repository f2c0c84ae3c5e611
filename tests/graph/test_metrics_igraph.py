"""Our metrics against python-igraph (an independent C implementation) on random graphs."""

from __future__ import annotations

import math
import random

import igraph as ig
import networkx as nx
import pytest

from coordbench.graph.metrics.centrality import betweenness, closeness, eigenvector, flow_betweenness, pagerank
from coordbench.graph.metrics.distribution import degree_centralisation, gini, participation
from coordbench.graph.metrics.paths import path_lengths
from coordbench.graph.metrics.structure import clustering, components, density, reciprocity

SEEDS = range(25)


def random_graph(seed: int) -> nx.DiGraph:
    rng = random.Random(seed)
    n = rng.randint(3, 14)
    p = rng.uniform(0.08, 0.6)
    G = nx.DiGraph()
    names = [f"agent{i:02d}" for i in range(n)]
    G.add_nodes_from(names, role="agent")
    for u in names:
        for v in names:
            if u != v and rng.random() < p:
                count = rng.randint(1, 5)
                G.add_edge(u, v, count=count, distance=1 / count, digests=())
    return G


def to_igraph(G: nx.DiGraph) -> tuple[ig.Graph, list[str]]:
    names = list(G)
    index = {n: i for i, n in enumerate(names)}
    g = ig.Graph(n=len(names), edges=[(index[u], index[v]) for u, v in G.edges()], directed=True)
    g.es["count"] = [G[u][v]["count"] for u, v in G.edges()]
    return g, names


@pytest.mark.parametrize("seed", SEEDS)
def test_against_igraph(seed: int) -> None:
    G = random_graph(seed)
    g, names = to_igraph(G)
    n = len(names)
    approx = pytest.approx

    assert density(G) == approx(g.density(loops=False))
    assert reciprocity(G) == approx(g.reciprocity(ignore_loops=True) if g.ecount() else 0.0)

    raw = g.betweenness(directed=True)
    assert betweenness(G) == approx({names[i]: raw[i] / ((n - 1) * (n - 2)) for i in range(n)})

    u = g.as_undirected(mode="collapse")
    raw_u = u.betweenness()
    assert flow_betweenness(G) == approx({names[i]: 2 * raw_u[i] / ((n - 1) * (n - 2)) for i in range(n)})

    # closeness: igraph normalises over reachable agents only; NetworkX's Wasserman-Faust factor
    # (reachable others / (n - 1)) is applied here by hand
    distances = u.distances()
    expected_closeness = {}
    for i in range(n):
        reach = [d for j, d in enumerate(distances[i]) if j != i and math.isfinite(d)]
        expected_closeness[names[i]] = (len(reach) / sum(reach)) * (len(reach) / (n - 1)) if reach else 0.0
    assert closeness(G) == approx(expected_closeness)

    ranks = g.pagerank(weights="count", damping=0.85, directed=True)
    assert pagerank(G) == approx({names[i]: ranks[i] for i in range(n)}, abs=1e-6)

    local = u.transitivity_local_undirected(mode="zero")
    assert clustering(G) == approx(sum(local) / n)

    weak = sorted((len(c) for c in g.connected_components(mode="weak")), reverse=True)
    strong = len(g.connected_components(mode="strong"))
    assert components(G) == {"weak": len(weak), "strong": strong, "weak_sizes": weak}

    hops = [
        d for i, row in enumerate(g.distances(mode="out")) for j, d in enumerate(row) if i != j and math.isfinite(d)
    ]
    weighted = [
        d for i, row in enumerate(g.distances(mode="out", weights=[1 / c for c in g.es["count"]]))
        for j, d in enumerate(row) if i != j and math.isfinite(d)
    ]  # fmt: skip
    expected_paths = {
        "average": sum(hops) / len(hops) if hops else None,
        "diameter": max(hops) if hops else None,
        "reachability": len(hops) / (n * (n - 1)),
        "efficiency": sum(1 / d for d in hops) / (n * (n - 1)),
        "weighted_average": sum(weighted) / len(weighted) if weighted else None,
    }
    assert path_lengths(G) == approx(expected_paths)

    degrees = u.degree()
    expected_centralisation = sum(max(degrees) - d for d in degrees) / ((n - 1) * (n - 2))
    assert degree_centralisation(G) == approx(expected_centralisation)

    load = [sum(G[a][b]["count"] for a, b in G.edges() if name in (a, b)) for name in names]
    assert participation(G) == dict(zip(names, load, strict=True))
    mean_abs_diff = sum(abs(x - y) for x in load for y in load)
    assert gini([float(x) for x in load]) == approx(mean_abs_diff / (2 * n * sum(load)) if sum(load) else 0.0)


def random_dag(seed: int) -> nx.DiGraph:
    """A connected call tree plus extra forward calls: acyclic, like real call graphs."""
    rng = random.Random(1000 + seed)
    names = [f"agent{i:02d}" for i in range(rng.randint(3, 12))]
    G = nx.DiGraph()
    G.add_nodes_from(names, role="agent")
    for j in range(1, len(names)):
        parent = names[rng.randrange(j)]
        G.add_edge(parent, names[j], count=rng.randint(1, 4), distance=1.0, digests=())
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if rng.random() < 0.2 and not G.has_edge(names[i], names[j]):
                G.add_edge(names[i], names[j], count=rng.randint(1, 4), distance=1.0, digests=())
    return G


def unit(values: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


@pytest.mark.parametrize("seed", SEEDS)
def test_eigenvector_on_call_trees_falls_back_like_igraph_undirected(seed: int) -> None:
    G = random_dag(seed)
    g, names = to_igraph(G)
    result = eigenvector(G)
    assert result["method"] == "undirected-flow"
    u = g.as_undirected(mode="collapse", combine_edges="sum")
    expected = unit(u.eigenvector_centrality(scale=False, weights="count"))
    assert result["values"] == pytest.approx(dict(zip(names, expected, strict=True)), abs=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_directed_eigenvector_on_strongly_connected_graphs(seed: int) -> None:
    G = random_graph(seed)
    for a, b in zip(list(G), list(G)[1:] + list(G)[:1], strict=True):  # add a cycle through everyone
        if not G.has_edge(a, b):
            G.add_edge(a, b, count=1, distance=1.0, digests=())
    g, names = to_igraph(G)
    result = eigenvector(G)
    assert result["method"] == "directed"
    expected = unit(g.eigenvector_centrality(directed=True, scale=False, weights="count"))
    assert result["values"] == pytest.approx(dict(zip(names, expected, strict=True)), abs=1e-4)
