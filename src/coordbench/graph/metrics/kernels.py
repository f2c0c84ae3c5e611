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

from typing import Protocol, cast

from coordbench.envflags import env_flag

__all__ = ["KERNELS", "Kernels", "load_kernels"]


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


def load_kernels() -> Kernels | None:
    """The C kernels (``coordbench.graph.metrics._kernels``), unless not built or ``COORDBENCH_NATIVE=0``."""
    if not env_flag("COORDBENCH_NATIVE", True):
        return None
    try:
        from coordbench.graph.metrics import _kernels
    except ImportError:
        return None
    return cast("Kernels", _kernels)


KERNELS = load_kernels()
"""The kernels the metrics use, or ``None`` (the Python versions run)."""
