"""Redundancy: messages that repeat earlier ones.

A repeated request is a message from the same caller to the same callee with the same content
(its ``a2a.message.digest``): the MAST "step repetition" failure mode, and the communication
redundancy AgentPrune removes at equal accuracy.

- ``repeated_requests``: ``(messages with a digest - distinct (caller, callee, digest)) / messages
  with a digest``; ``None`` when no message carries a digest;
- ``repeated_pairs``: ``(messages - distinct (caller, callee)) / messages``: how much traffic
  re-uses a pair at all (multi-round work does, so this is context, not a fault).
"""

from __future__ import annotations

import networkx as nx

from coordbench.graph.metrics.registry import Metric

__all__ = ["REDUNDANCY", "redundancy"]


def redundancy(G: nx.DiGraph[str]) -> dict[str, float | None]:
    """Repeated requests and repeated pairs (see the module docstring).

    Example:
        >>> G = nx.DiGraph()
        >>> G.add_edge("a", "b", count=3, digests=("x", "x", "y"))
        >>> G.add_edge("a", "c", count=1, digests=("x",))
        >>> redundancy(G)
        {'repeated_requests': 0.25, 'repeated_pairs': 0.5}
    """
    messages = sum(c for *_, c in G.edges(data="count", default=1))
    with_digest = 0
    distinct = 0
    for _u, _v, digests in G.edges(data="digests", default=()):
        with_digest += len(digests)
        distinct += len(set(digests))
    return {
        "repeated_requests": (with_digest - distinct) / with_digest if with_digest else None,
        "repeated_pairs": (messages - G.number_of_edges()) / messages if messages else 0.0,
    }


REDUNDANCY = Metric(
    "redundancy",
    lambda i: redundancy(i.graph),
    "Share of messages repeating an earlier request (same caller, callee and content).",
    "directed",
)
