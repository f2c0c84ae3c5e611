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
    # NetworkX's all_pairs_shortest_path_length and all_pairs_dijkstra_path_length, as they run, on
    # plain lists (their adjacency views cost more than the searches on an agent graph): the same
    # lengths in the same order, so the same sums
    successors = {node: list(G.adj[node]) for node in G}
    for source in G:
        for d in _hops_from(successors, source):
            hops.append(d)
            inverse += 1.0 / d
    costs = {node: [(u, data.get("distance", 1)) for u, data in G.adj[node].items()] for node in G}
    weighted: list[float] = []
    for source in G:
        lengths = _dijkstra_from(costs, source)
        weighted.extend(d for target, d in lengths.items() if target != source)
    return {
        "average": sum(hops) / len(hops) if hops else None,
        "diameter": max(hops) if hops else None,
        "reachability": len(hops) / pairs if pairs else 0.0,
        "efficiency": inverse / pairs if pairs else 0.0,
        "weighted_average": sum(weighted) / len(weighted) if weighted else None,
    }


def _hops_from(successors: dict[str, list[str]], source: str) -> list[int]:
    """Hops to each agent ``source`` reaches (not itself), in NetworkX's breadth-first order."""
    seen = {source}
    level_nodes: list[str] = [source]
    level = 0
    found: list[int] = []
    everyone = len(successors)
    while level_nodes:
        level += 1
        this_level = level_nodes
        level_nodes = []
        for v in this_level:
            for w in successors[v]:
                if w not in seen:
                    seen.add(w)
                    level_nodes.append(w)
                    found.append(level)
            if len(seen) == everyone:
                return found
    return found


def _dijkstra_from(costs: dict[str, list[tuple[str, float | None]]], source: str) -> dict[str, float]:
    """Distances from ``source`` as NetworkX's ``_dijkstra_multisource`` finds them (same heap, same ties)."""
    dist: dict[str, float] = {}
    seen: dict[str, float] = {source: 0}
    counter = itertools.count()
    fringe: list[tuple[float, int, str]] = [(0, next(counter), source)]
    while fringe:
        dist_v, _, v = heapq.heappop(fringe)
        if v in dist:
            continue
        dist[v] = dist_v
        for u, cost in costs[v]:
            if cost is None:
                continue
            vu_dist = dist_v + cost
            if u in dist:
                if vu_dist < dist[u]:
                    raise ValueError("Contradictory paths found:", "negative weights?")
            elif u not in seen or vu_dist < seen[u]:
                seen[u] = vu_dist
                heapq.heappush(fringe, (vu_dist, next(counter), u))
    return dist


PATHS = Metric(
    "path_lengths",
    lambda i: path_lengths(i.graph),
    "Hand-offs between agents over reachable pairs, with reachability and efficiency.",
    "directed",
)
