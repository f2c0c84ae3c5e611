"""The team's topology by name: what shape the interactions had, described, never judged.

Read on the undirected flow view of the agents that interacted (hosts and isolated agents
left out), with call directions and the entry agents (those the host called) to tell shapes
with the same outline apart:

- ``none``: no two agents interacted;
- ``pair``: two agents;
- ``silos``: the interacting agents fall apart into separate groups;
- ``star``: one agent linked to every other, the others only to it (an orchestrator and its
  workers, or workers all reporting to one agent);
- ``bottleneck_relay``: a star whose centre is not the entry: the entry hands everything to one
  relay that delegates to two or more agents, so all work funnels through it;
- ``chain``: a line (a pipeline; a three-agent line where the middle agent passes work on);
- ``tree``: no cycles, otherwise (a hierarchy: coordinator, leads, workers);
- ``mesh``: a cycle somewhere (specialists consulting each other).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import networkx as nx

from coordbench.graph.agentgraph import flow_view

__all__ = ["TOPOLOGIES", "Topology", "topology"]

Topology = Literal["none", "pair", "silos", "star", "bottleneck_relay", "chain", "tree", "mesh"]
TOPOLOGIES: tuple[Topology, ...] = ("none", "pair", "silos", "star", "bottleneck_relay", "chain", "tree", "mesh")


def topology(G: nx.DiGraph[str], *, entries: Iterable[str] = (), flow: nx.Graph[str] | None = None) -> Topology:
    """Name the shape of the interactions in the agent graph ``G`` (hosts already left out).

    Args:
        G: The agent view (:func:`~coordbench.graph.agentgraph.agent_view`).
        entries: Agents the host handed the task to, when known.
        flow: ``flow_view(G)``, when already built (read when no agent of ``G`` is isolated).

    Example:
        >>> topology(nx.DiGraph([("hub", "a"), ("hub", "b"), ("hub", "c")]))
        'star'
        >>> topology(nx.DiGraph([("entry", "relay"), ("relay", "a"), ("relay", "b")]), entries=["entry"])
        'bottleneck_relay'
        >>> topology(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "d")]))
        'chain'
        >>> topology(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a")]))
        'mesh'
    """
    active = G.subgraph([n for n in G if G.degree(n) > 0])
    H = flow if flow is not None and active.number_of_nodes() == G.number_of_nodes() else flow_view(active)
    n = H.number_of_nodes()
    if n < 2:
        return "none"
    if not nx.is_connected(H):
        return "silos"
    if n == 2:
        return "pair"
    if H.number_of_edges() != n - 1:
        return "mesh"
    degrees = dict(H.degree())
    centre = next((a for a in sorted(degrees) if degrees[a] == n - 1), None)
    if centre is not None:
        delegates = set(active.successors(centre))
        entry_set = set(entries)
        if entry_set and centre not in entry_set and len(delegates) >= 2 and entry_set & (set(active) - delegates):
            return "bottleneck_relay"
        if not (n == 3 and len(delegates) == 1 and active.in_degree(centre) == 1):
            return "star"
    return "chain" if max(degrees.values()) <= 2 else "tree"
