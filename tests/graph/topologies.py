"""Canonical topologies for metric tests (agent graphs as build_agent_graph makes them)."""

from __future__ import annotations

import networkx as nx


def graph(edges: list[tuple[str, str]], nodes: list[str] | None = None, count: int = 1) -> nx.DiGraph:
    G = nx.DiGraph()
    for node in sorted(set(nodes or []) | {n for e in edges for n in e}):
        G.add_node(node, role="agent")
    for u, v in edges:
        G.add_edge(u, v, count=count, distance=1.0 / count, digests=())
    return G


def star() -> nx.DiGraph:
    """hub calls a, b, c, d (calls only)."""
    return graph([("hub", x) for x in "abcd"])


def chain() -> nx.DiGraph:
    """a → b → c → d."""
    return graph([("a", "b"), ("b", "c"), ("c", "d")])


def ring() -> nx.DiGraph:
    """a → b → c → d → a."""
    return graph([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])


def mesh() -> nx.DiGraph:
    """Every ordered pair of a, b, c, d."""
    return graph([(u, v) for u in "abcd" for v in "abcd" if u != v])


def star_with_isolated() -> nx.DiGraph:
    """The star plus z, who never interacts."""
    return graph([("hub", x) for x in "abcd"], nodes=["z"])
