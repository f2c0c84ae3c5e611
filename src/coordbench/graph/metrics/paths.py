"""Paths: how many hand-offs separate agents, defined on graphs that are not strongly connected.

NetworkX's ``average_shortest_path_length`` and ``diameter`` raise on any digraph that is not
strongly connected, which is every call tree. Here distances are directed hop counts
(breadth-first, unweighted: a call count is not a length) over the ordered pairs where the
target is reachable, and the share of reachable pairs is reported beside them:

- ``average``: mean hops over reachable ordered pairs ``(u, v)``, ``u != v``;
- ``diameter``: the largest of those hop counts;
- ``reachability``: reachable ordered pairs / ``n (n - 1)``;
- ``efficiency``: ``Σ 1/d(u, v)`` over all ordered pairs / ``n (n - 1)``, an unreachable pair
  counting 0 (Latora-Marchiori, directed): 1 when everyone calls everyone directly;
- ``weighted_average``: like ``average`` but with ``distance = 1/count`` per edge, so a path
  over busy links is short.

``average``, ``diameter`` and ``weighted_average`` are ``None`` when no pair is reachable.
"""

from __future__ import annotations

import heapq
import itertools

import networkx as nx

from coordbench.graph.metrics import kernels
from coordbench.graph.metrics.registry import Metric

__all__ = [
    "PATHS",
    "breadth_first",
    "dijkstra_lengths",
    "path_lengths",
    "python_breadth_first",
    "python_dijkstra_lengths",
]


def path_lengths(G: nx.DiGraph[str]) -> dict[str, float | int | None]:
    """Directed path statistics over reachable pairs (see the module docstring).

    Example:
        >>> result = path_lengths(nx.DiGraph([("a", "b"), ("b", "c")]))
        >>> result["average"], result["diameter"], result["reachability"]
        (1.3333333333333333, 2, 0.5)
        >>> round(result["efficiency"], 4)  # (1 + 1 + 1/2) / 6
        0.4167
    """
    n = G.number_of_nodes()
    pairs = n * (n - 1)
    # NetworkX's all_pairs_shortest_path_length and all_pairs_dijkstra_path_length, as they run, on
    # plain lists (their adjacency views cost more than the searches on an agent graph): the same
    # lengths in the same order, so the same sums
    reached, totals, farthest, inverse = breadth_first(kernels.neighbour_rows(G))
    found = sum(reached)
    index = {node: i for i, node in enumerate(G)}
    weighted = dijkstra_lengths(
        [[(index[u], data.get("distance", 1)) for u, data in G.adj[node].items()] for node in G]
    )
    return {
        "average": sum(totals) / found if found else None,
        "diameter": max(farthest) if found else None,
        "reachability": found / pairs if pairs else 0.0,
        "efficiency": inverse / pairs if pairs else 0.0,
        "weighted_average": sum(weighted) / len(weighted) if weighted else None,
    }


def breadth_first(rows: list[list[int]]) -> tuple[list[int], list[int], list[int], float]:
    """Breadth-first searches from every node (``rows[i]``: node ``i``'s neighbours, in NetworkX's order).

    Returns:
        Per source: the nodes it reaches (itself left out), the sum of their hops, the farthest
        hop (0 when it reaches none); and ``Σ 1/hops`` over every reached pair, sources in
        order. The C kernel (:data:`~coordbench.graph.metrics.kernels.KERNELS`) when built, else
        :func:`python_breadth_first`: the same numbers.
    """
    native = kernels.KERNELS
    return native.breadth_first(rows) if native is not None else python_breadth_first(rows)


def python_breadth_first(rows: list[list[int]]) -> tuple[list[int], list[int], list[int], float]:
    """:func:`breadth_first` in Python: NetworkX's ``_single_shortest_path_length`` from each node in turn."""
    reached: list[int] = []
    totals: list[int] = []
    farthest: list[int] = []
    inverse = 0.0
    for source in range(len(rows)):
        seen = {source}
        level_nodes: list[int] = [source]
        level = count = total = 0
        while level_nodes:
            level += 1
            this_level = level_nodes
            level_nodes = []
            for v in this_level:
                for w in rows[v]:
                    if w not in seen:
                        seen.add(w)
                        level_nodes.append(w)
                        count += 1
                        total += level
                        inverse += 1.0 / level
        reached.append(count)
        totals.append(total)
        farthest.append(level - 1)  # the last level found nothing
    return reached, totals, farthest, inverse


def dijkstra_lengths(rows: list[list[tuple[int, float | None]]]) -> list[float]:
    """Dijkstra's distances from every node (``rows[i]``: node ``i``'s ``(neighbour, length)``, ``None``: no edge).

    Returns:
        Each source's distances to the nodes it reaches (itself left out) in the order the search
        settles them (NetworkX's ``_dijkstra_multisource``: the same heap, the same ties), sources in
        order. The C kernel (:data:`~coordbench.graph.metrics.kernels.KERNELS`) when built and
        every length is a float, not negative, else :func:`python_dijkstra_lengths`: the same floats.
    """
    native = kernels.KERNELS
    found = native.dijkstra(rows) if native is not None else None
    return found if found is not None else python_dijkstra_lengths(rows)


def python_dijkstra_lengths(rows: list[list[tuple[int, float | None]]]) -> list[float]:
    """:func:`dijkstra_lengths` in Python.

    Raises:
        ValueError: On a negative length that makes a shorter path to a node already settled.
    """
    lengths: list[float] = []
    for source in range(len(rows)):
        dist: dict[int, float] = {}
        seen: dict[int, float] = {source: 0}
        counter = itertools.count()
        fringe: list[tuple[float, int, int]] = [(0, next(counter), source)]
        while fringe:
            dist_v, _, v = heapq.heappop(fringe)
            if v in dist:
                continue
            dist[v] = dist_v
            if v != source:
                lengths.append(dist_v)
            for u, cost in rows[v]:
                if cost is None:
                    continue
                vu_dist = dist_v + cost
                if u in dist:
                    if vu_dist < dist[u]:
                        raise ValueError("Contradictory paths found:", "negative weights?")
                elif u not in seen or vu_dist < seen[u]:
                    seen[u] = vu_dist
                    heapq.heappush(fringe, (vu_dist, next(counter), u))
    return lengths


PATHS = Metric(
    "path_lengths",
    lambda i: path_lengths(i.graph),
    "Hand-offs between agents over reachable pairs, with reachability and efficiency.",
    "directed",
)
