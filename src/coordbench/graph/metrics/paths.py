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

import networkx as nx

from coordbench.graph.metrics.registry import Metric

__all__ = ["PATHS", "path_lengths"]


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
    hops: list[int] = []
    inverse = 0.0
    for _source, lengths in nx.all_pairs_shortest_path_length(G):
        for d in lengths.values():
            if d > 0:
                hops.append(d)
                inverse += 1.0 / d
    weighted: list[float] = []
    for _source, lengths in nx.all_pairs_dijkstra_path_length(G, weight="distance"):
        weighted.extend(d for target, d in lengths.items() if target != _source)
    return {
        "average": sum(hops) / len(hops) if hops else None,
        "diameter": max(hops) if hops else None,
        "reachability": len(hops) / pairs if pairs else 0.0,
        "efficiency": inverse / pairs if pairs else 0.0,
        "weighted_average": sum(weighted) / len(weighted) if weighted else None,
    }


PATHS = Metric(
    "path_lengths",
    lambda i: path_lengths(i.graph),
    "Hand-offs between agents over reachable pairs, with reachability and efficiency.",
    "directed",
)
