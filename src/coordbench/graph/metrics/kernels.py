"""The graph metrics' inner loops in C (``_kernels.c``), when built: the floats their Python versions make.

On a graph of twenty agents, a breadth-first search or a power iteration in Python costs a
hundred times its arithmetic; the metrics hand their loops (Brandes' betweenness, the
breadth-first and Dijkstra searches of closeness and path lengths, the triangles of clustering,
PageRank's iteration) to
:data:`KERNELS` when it is there. Each kernel makes the same floating-point operations in the
same order as its Python version, so the same floats bit for bit
(``tests/graph/test_kernels_native.py``); without a C compiler at install time, or with
``COORDBENCH_NATIVE=0``, the Python versions run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from coordbench.extensions import native_extension

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["KERNELS", "Kernels", "load_kernels", "neighbour_rows"]


class Kernels(Protocol):
    """What ``_kernels`` offers (its C source says each function's contract)."""

    def betweenness(self, rows: list[list[int]], /) -> list[float]:
        """Brandes' sums of pair dependencies per node, before rescaling."""
        ...

    def breadth_first(self, rows: list[list[int]], /) -> tuple[list[int], list[int], list[int], float]:
        """Per source: agents reached, their total hops, the farthest hop; and the sum of 1/hops."""
        ...

    def triangles(self, rows: list[list[int]], /) -> tuple[list[int], list[int]]:
        """Per node: its partners and twice the triangles through it."""
        ...

    def dijkstra(self, rows: list[list[tuple[int, float | None]]], /) -> list[float] | None:
        """Each source's distances in the order they settle (the source left out), or ``None``."""
        ...

    def pagerank(self, columns: list[list[tuple[int, float]]], dangling: list[int], /) -> list[float] | None:
        """PageRank's power iteration, or ``None`` without convergence."""
        ...


def neighbour_rows(graph: nx.Graph[str] | nx.DiGraph[str]) -> list[list[int]]:
    """What the kernels read of ``graph``: row ``i`` holds node ``i``'s neighbours (successors) as indices.

    Nodes are numbered in the graph's order and each row keeps NetworkX's adjacency order, so a
    search over the rows visits what NetworkX's would, in the same order.

    Example:
        >>> import networkx as nx
        >>> neighbour_rows(nx.DiGraph([("a", "b"), ("b", "c"), ("b", "a")]))
        [[1], [2, 0], []]
    """
    index = {node: i for i, node in enumerate(graph)}
    return [[index[w] for w in neighbours] for _, neighbours in graph.adjacency()]


def load_kernels() -> Kernels | None:
    """The C kernels (``coordbench.graph.metrics._kernels``), unless not built or ``COORDBENCH_NATIVE=0``."""
    return cast("Kernels | None", native_extension("coordbench.graph.metrics._kernels"))


KERNELS = load_kernels()
"""The kernels the metrics use, or ``None`` (the Python versions run)."""
