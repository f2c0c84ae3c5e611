"""The graph metrics' C kernels make their Python versions' floats, bit for bit, and refuse what is not a graph.

``coordbench.graph.metrics._kernels`` runs Brandes' betweenness, the breadth-first and Dijkstra
searches of closeness and path lengths, clustering's triangles and PageRank's iteration. Evaluations must stay byte for
byte what they were, so each kernel is checked against its Python version (which
``test_networkx_exact.py`` checks against NetworkX): on random rows (self-loops, a neighbour named
twice, nodes with no edge), on odd lengths and values, and through the metrics on random call
graphs with the kernels on and off. Bad rows get a ``TypeError`` or ``ValueError`` that names the
problem; a length Dijkstra's kernel is not sure of is handed back to the Python version.
"""

from __future__ import annotations

import math
import random
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordbench.graph.agentgraph import flow_view
from coordbench.graph.metrics import _kernels as native  # built by `uv sync`: a build without it fails here
from coordbench.graph.metrics import centrality, kernels, paths, structure
from support.fuzz_kernels import bits, random_columns, random_lengths, random_rows

from .test_networkx_exact import call_graphs


def test_the_package_uses_the_c_kernels() -> None:
    """``make test`` builds them: a build that silently lost them would pass every other test here."""
    assert kernels.KERNELS is native


def test_hand_worked_values() -> None:
    # a path a - b - c: b is on the one shortest path between a and c, both ways
    path = [[1], [0, 2], [1]]
    assert native.betweenness(path) == [0.0, 2.0, 0.0]
    # from a: b at 1, c at 2; from b: both at 1; from c: as from a. 1/hops: (1 + 1/2) * 2 + 2
    assert native.breadth_first(path) == ([2, 2, 2], [3, 2, 3], [2, 1, 2], 1.0 + 0.5 + 1.0 + 1.0 + 1.0 + 0.5)
    # a -> b (length 0.5), b -> c (0.25), a -> c (1.0): a settles b, then c by way of b
    assert native.dijkstra([[(1, 0.5), (2, 1.0)], [(2, 0.25)], []]) == [0.5, 0.75, 0.25]
    # two agents calling each other once: each holds half
    assert native.pagerank([[(1, 1.0)], [(0, 1.0)]], []) == [0.5, 0.5]
    # a triangle a b c with d hanging off c: c has 3 partners, one triangle (counted twice) among them
    assert native.triangles([[1, 2], [0, 2], [0, 1, 3], [2]]) == ([2, 2, 3, 1], [2, 2, 2, 0])
    # a self-call and a partner named twice count once, as NetworkX's sets count them
    assert native.triangles([[0, 1, 1], [0]]) == ([1, 1], [0, 0])
    assert native.betweenness([]) == [] and native.breadth_first([]) == ([], [], [], 0.0)
    assert native.triangles([]) == ([], [])
    assert native.dijkstra([]) == [] and native.pagerank([], []) == []


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.randoms(use_true_random=False))
def test_each_kernel_makes_the_python_versions_floats(rng: random.Random) -> None:
    rows = random_rows(rng)
    assert bits(native.betweenness(rows)) == bits(centrality.python_brandes_sums(rows))
    assert bits(native.breadth_first(rows)) == bits(paths.python_breadth_first(rows))
    assert native.triangles(rows) == structure.python_triangles(rows)
    lengths = random_lengths(rng, rows, odd=0.0)
    assert bits(native.dijkstra(lengths)) == bits(paths.python_dijkstra_lengths(lengths))
    if rows:
        columns, dangling = random_columns(rng, rows)
        expected = centrality.python_pagerank_iteration(columns, dangling)
        assert bits(native.pagerank(columns, dangling)) == bits(expected)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(call_graphs())
def test_the_metrics_are_the_same_with_the_kernels_and_without(graph: nx.DiGraph[str]) -> None:
    flow = flow_view(graph)

    def measured() -> list[Any]:
        return [
            centrality.betweenness(graph),
            centrality.flow_betweenness(graph, flow=flow),
            centrality.closeness(graph, flow=flow),
            {"clustering": structure.clustering(graph, flow=flow)},
            centrality.pagerank(graph),
            paths.path_lengths(graph),
        ]

    with_kernels = measured()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "KERNELS", None)
        without = measured()
    assert [bits(list(m.items())) for m in with_kernels] == [bits(list(m.items())) for m in without]


@pytest.mark.parametrize(
    ("lengths", "why"),
    [
        ([[(1, 1)], []], "an int"),
        ([[(1, True)], []], "a bool"),
        ([[(1, -1.0)], []], "negative"),
        ([[(1, -5e-324)], []], "negative, the smallest"),
        ([[(1, math.nan)], []], "NaN"),
        ([[(1, "1.0")], []], "a string"),
    ],
)
def test_dijkstra_hands_back_lengths_it_is_not_sure_of(lengths: list[list[tuple[int, Any]]], why: str) -> None:
    assert native.dijkstra(lengths) is None, why
    # the metric then runs the Python version, which reads them (or raises) as it always did
    assert _outcome(paths.dijkstra_lengths, lengths) == _outcome(paths.python_dijkstra_lengths, lengths)


def _outcome(search: Any, lengths: Any) -> Any:
    try:
        return bits(search(lengths))
    except TypeError as exc:
        return str(exc)


def test_dijkstra_leaves_out_an_edge_with_no_length_as_the_python_version_does() -> None:
    lengths: list[list[tuple[int, float | None]]] = [[(1, None), (2, 2.0)], [], [(1, 0.5)]]
    assert native.dijkstra(lengths) == paths.python_dijkstra_lengths(lengths) == [2.0, 2.5, 0.5]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: native.betweenness(([1], [0])), TypeError, "the rows must be a list, not tuple"),
        (lambda: native.betweenness("rows"), TypeError, "the rows must be a list, not str"),
        (lambda: native.betweenness([[1], (0,)]), TypeError, "row 1 must be a list, not tuple"),
        (lambda: native.betweenness([[1], [2]]), ValueError, "node index out of range for 2 nodes"),
        (lambda: native.betweenness([[-1]]), ValueError, "node index out of range for 1 nodes"),
        (lambda: native.breadth_first([[2**64]]), ValueError, "node index out of range for 1 nodes"),
        (lambda: native.breadth_first([[True]]), TypeError, "a node index must be an int, not bool"),
        (lambda: native.breadth_first([[0.0]]), TypeError, "a node index must be an int, not float"),
        (lambda: native.triangles([[0], None]), TypeError, "row 1 must be a list, not NoneType"),
        (lambda: native.dijkstra([[1]]), TypeError, "row 0: an edge must be an (index, weight) tuple"),
        (lambda: native.dijkstra([[(0, 1.0, 2.0)]]), TypeError, "row 0: an edge must be an (index, weight) tuple"),
        (lambda: native.dijkstra([[(1, 1.0)]]), ValueError, "node index out of range for 1 nodes"),
        (lambda: native.dijkstra([[(1, None)]]), ValueError, "node index out of range for 1 nodes"),
        (lambda: native.pagerank([[(0, 1)]], []), TypeError, "row 0: a value must be a float, not int"),
        (lambda: native.pagerank([[(0, 1.0)]], [1]), ValueError, "node index out of range for 1 nodes"),
        (lambda: native.pagerank([[(0, 1.0)]], (0,)), TypeError, "dangling must be a list, not tuple"),
        (lambda: native.pagerank([[(0, 1.0)]]), TypeError, "pagerank() takes exactly 2 arguments (1 given)"),
    ],
)
def test_what_is_not_a_graph_is_refused_by_name(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        call()
    assert message in str(raised.value)


def test_pagerank_that_does_not_converge_is_handed_back() -> None:
    # a NaN in M never converges: the Python iteration gives up after 1,000 steps as well
    columns = [[(1, math.nan)], [(0, 1.0)]]
    assert native.pagerank(columns, []) is None
    assert centrality.python_pagerank_iteration(columns, []) is None
