"""Topology names on canonical shapes, worked out by hand."""

from __future__ import annotations

import networkx as nx
import pytest

from coordbench.graph.metrics import topology


@pytest.mark.parametrize(
    ("edges", "entries", "expected"),
    [
        ([], [], "none"),
        ([("a", "b")], [], "pair"),
        ([("a", "b"), ("c", "d")], [], "silos"),
        ([("hub", "a"), ("hub", "b"), ("hub", "c")], ["hub"], "star"),
        ([("a", "hub"), ("b", "hub"), ("c", "hub")], [], "star"),  # workers reporting to one agent
        ([("hub", "a"), ("hub", "b")], ["hub"], "star"),
        ([("a", "b"), ("b", "c")], ["a"], "chain"),  # the middle agent passes work on
        ([("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")], ["a"], "chain"),
        ([("entry", "relay"), ("relay", "a"), ("relay", "b"), ("relay", "c")], ["entry"], "bottleneck_relay"),
        ([("entry", "relay"), ("relay", "a"), ("relay", "b"), ("relay", "c")], [], "star"),  # entry unknown
        ([("c", "l1"), ("c", "l2"), ("l1", "w1"), ("l1", "w2"), ("l2", "w3"), ("l2", "w4")], ["c"], "tree"),
        ([("a", "b"), ("b", "c"), ("c", "a")], [], "mesh"),
        ([("a", "b"), ("b", "a"), ("a", "c"), ("c", "b")], [], "mesh"),
    ],
)
def test_topology_names(edges: list[tuple[str, str]], entries: list[str], expected: str) -> None:
    assert topology(nx.DiGraph(edges), entries=entries) == expected


def test_isolated_agents_do_not_change_the_shape() -> None:
    G = nx.DiGraph([("hub", "a"), ("hub", "b")])
    G.add_node("idle")
    assert topology(G, entries=["hub"]) == "star"
