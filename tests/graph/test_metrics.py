"""Every built-in metric against values worked out by hand on star, chain, ring, mesh and an isolated node.

The derivations are in the comments; nothing here is computed by the code under test.
"""

from __future__ import annotations

import math

import pytest

from coordbench.graph.metrics.centrality import betweenness, closeness, degree, eigenvector, flow_betweenness, pagerank
from coordbench.graph.metrics.distribution import (
    betweenness_centralisation,
    degree_centralisation,
    gini,
    interaction_share,
    normalised_entropy,
    participation,
    workload,
)
from coordbench.graph.metrics.paths import path_lengths
from coordbench.graph.metrics.redundancy import redundancy
from coordbench.graph.metrics.structure import clustering, components, density, reciprocity
from graph.topologies import chain, graph, mesh, ring, star, star_with_isolated

approx = pytest.approx


def test_degree() -> None:
    # n - 1 = 4 for the star: the hub calls 4 agents, each leaf is called once
    assert degree(star())["hub"] == {"in": 0.0, "out": 1.0, "total": 1.0}
    assert degree(star())["a"] == {"in": 0.25, "out": 0.0, "total": 0.25}
    assert degree(mesh())["a"] == {"in": 1.0, "out": 1.0, "total": 2.0}
    assert degree(star_with_isolated())["z"] == {"in": 0.0, "out": 0.0, "total": 0.0}


def test_betweenness_directed() -> None:
    assert set(betweenness(star()).values()) == {0.0}  # no directed path passes through anyone
    # chain a→b→c→d, n=4, normaliser (n-1)(n-2) = 6: b lies on a→c, a→d; c on a→d, b→d
    assert betweenness(chain()) == approx({"a": 0, "b": 2 / 6, "c": 2 / 6, "d": 0})
    # ring: b is inside a→c, a→d and d→c; every node alike
    assert betweenness(ring()) == approx(dict.fromkeys("abcd", 3 / 6))
    assert set(betweenness(mesh()).values()) == {0.0}


def test_flow_betweenness() -> None:
    assert flow_betweenness(star()) == approx({"hub": 1.0, "a": 0, "b": 0, "c": 0, "d": 0})
    # undirected path a-b-c-d, normaliser 2/((n-1)(n-2)) = 1/3: b separates (a,c) and (a,d)
    assert flow_betweenness(chain()) == approx({"a": 0, "b": 2 / 3, "c": 2 / 3, "d": 0})
    # undirected 4-cycle: each node carries half of the one opposite pair: 0.5 / 3
    assert flow_betweenness(ring()) == approx(dict.fromkeys("abcd", 1 / 6))
    # 6 nodes: the hub is on all C(4,2) = 6 leaf pairs; normaliser 2/(5*4)
    assert flow_betweenness(star_with_isolated())["hub"] == approx(0.6)


def test_closeness() -> None:
    # star, undirected: hub at distance 1 from 4 others; a leaf at 1 (hub) + 2+2+2
    assert closeness(star())["hub"] == approx(1.0)
    assert closeness(star())["a"] == approx(4 / 7)
    assert closeness(chain()) == approx({"a": 3 / 6, "b": 3 / 4, "c": 3 / 4, "d": 3 / 6})
    assert closeness(ring()) == approx(dict.fromkeys("abcd", 3 / 4))
    assert closeness(star_with_isolated())["z"] == 0.0


def test_eigenvector_and_its_fallback() -> None:
    # star is a DAG: undirected K1,4 has λ = 2, hub = 2 * leaf, unit norm: leaf = 1/√8
    result = eigenvector(star())
    assert result["method"] == "undirected-flow"
    assert result["values"] == approx({"hub": 2 / math.sqrt(8), **{x: 1 / math.sqrt(8) for x in "abcd"}}, abs=1e-5)
    # chain a-b-c-d: path P4, principal vector ∝ (sin π/5, sin 2π/5, sin 3π/5, sin 4π/5)
    raw = [math.sin(k * math.pi / 5) for k in range(1, 5)]
    norm = math.sqrt(sum(x * x for x in raw))
    assert eigenvector(chain())["values"] == approx(dict(zip("abcd", (x / norm for x in raw), strict=True)), abs=1e-5)
    # the ring has a cycle: directed eigenvector, uniform, unit norm
    ring_result = eigenvector(ring())
    assert ring_result["method"] == "directed"
    assert ring_result["values"] == approx(dict.fromkeys("abcd", 0.5), abs=1e-5)


def test_pagerank() -> None:
    assert pagerank(ring()) == approx(dict.fromkeys("abcd", 0.25))
    assert pagerank(mesh()) == approx(dict.fromkeys("abcd", 0.25))
    # star, damping 0.85, leaves dangling (their rank spread evenly):
    # h = 0.03 + 0.85 * 4l/5 and h + 4l = 1  →  l = 97/468, h = 80/468
    ranks = pagerank(star())
    assert ranks["hub"] == approx(80 / 468, abs=1e-6)
    assert ranks["a"] == approx(97 / 468, abs=1e-6)


def test_structure() -> None:
    assert (density(star()), density(chain()), density(ring()), density(mesh())) == approx(
        (4 / 20, 3 / 12, 4 / 12, 1.0)
    )
    assert density(star_with_isolated()) == approx(4 / 30)
    assert (clustering(star()), clustering(ring()), clustering(mesh())) == (0.0, 0.0, 1.0)
    assert clustering(graph([("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")])) == approx((1 + 1 + 1 / 3 + 0) / 4)
    assert components(star_with_isolated()) == {"weak": 2, "strong": 6, "weak_sizes": [5, 1]}
    assert components(ring()) == {"weak": 1, "strong": 1, "weak_sizes": [4]}
    assert (reciprocity(star()), reciprocity(mesh())) == (0.0, 1.0)
    assert reciprocity(graph([("a", "b"), ("b", "a"), ("a", "c")])) == approx(2 / 3)


def test_paths_on_graphs_that_are_not_strongly_connected() -> None:
    # chain: reachable pairs a→b,c,d (1,2,3), b→c,d (1,2), c→d (1): 6 of 12, 10 hops
    result = path_lengths(chain())
    assert result == approx(
        {
            "average": 10 / 6,
            "diameter": 3,
            "reachability": 6 / 12,
            "efficiency": (1 + 1 / 2 + 1 / 3 + 1 + 1 / 2 + 1) / 12,
            "weighted_average": 10 / 6,
        }
    )
    ring_result = path_lengths(ring())
    assert ring_result == approx(
        {
            "average": 2.0,
            "diameter": 3,
            "reachability": 1.0,
            "efficiency": 4 * (1 + 1 / 2 + 1 / 3) / 12,
            "weighted_average": 2.0,
        }
    )
    star_result = path_lengths(star_with_isolated())
    assert star_result == approx(
        {"average": 1.0, "diameter": 1, "reachability": 4 / 30, "efficiency": 4 / 30, "weighted_average": 1.0}
    )
    assert path_lengths(graph([], nodes=["x", "y"])) == {
        "average": None,
        "diameter": None,
        "reachability": 0.0,
        "efficiency": 0.0,
        "weighted_average": None,
    }


def test_busy_links_are_short_for_weighted_paths() -> None:
    G = graph([("a", "b"), ("b", "c")], count=4)  # distance 1/4 per hop
    assert path_lengths(G)["weighted_average"] == approx((0.25 + 0.5 + 0.25) / 3)


def test_distribution_measures() -> None:
    assert participation(star()) == {"a": 1, "b": 1, "c": 1, "d": 1, "hub": 4}
    assert interaction_share(star())["hub"] == 1.0
    # participation [4,1,1,1,1]: Σ|xi-xj| = 2 * 4 * 3 = 24, / (2 * 25 * 1.6) = 0.3
    assert gini([4, 1, 1, 1, 1]) == approx(0.3)
    shares = [0.5, 0.125, 0.125, 0.125, 0.125]
    expected_entropy = -sum(p * math.log(p) for p in shares) / math.log(5)
    assert workload(star()) == approx({"gini": 0.3, "entropy": expected_entropy, "max_share": 1.0})
    assert workload(mesh()) == approx({"gini": 0.0, "entropy": 1.0, "max_share": 0.5})
    assert normalised_entropy([7]) == 0.0
    # star with an isolated agent: [0,1,1,1,1,4] → Σ|xi-xj| = 40, / (2 * 36 * 8/6)
    assert workload(star_with_isolated())["gini"] == approx(40 / 96)


def test_centralisation() -> None:
    assert (degree_centralisation(star()), degree_centralisation(ring()), degree_centralisation(mesh())) == (
        1.0,
        0.0,
        0.0,
    )
    # chain: undirected degrees 1,2,2,1 → Σ(2-d) = 2, / ((n-1)(n-2)) = 6
    assert degree_centralisation(chain()) == approx(2 / 6)
    assert betweenness_centralisation(star()) == approx(1.0)
    assert betweenness_centralisation(ring()) == approx(0.0)
    # chain flow betweenness (0, 2/3, 2/3, 0): Σ(max - b) = 4/3, / (n-1) = 3
    assert betweenness_centralisation(chain()) == approx(4 / 9)


def test_redundancy() -> None:
    G = graph([("a", "b")], count=4)
    G["a"]["b"]["digests"] = ("x", "x", "x", "y")
    assert redundancy(G) == approx({"repeated_requests": 2 / 4, "repeated_pairs": 3 / 4})
    assert redundancy(star()) == {"repeated_requests": None, "repeated_pairs": 0.0}
