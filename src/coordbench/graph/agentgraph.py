"""Span trees → the agent graph: who called whom, how often, how fast, how often it failed.

The graph is a ``networkx.DiGraph`` (never a multigraph: parallel calls are one edge with a
``count``: NetworkX's path and centrality functions would count each parallel edge as a path
of its own).

- **Nodes** are agents: the agent of every span (``SpanTree.agent_of``) and every callee.
  Attributes: ``role`` (``"agent"`` or ``"host"``: the orchestrator that owns a trace's root
  HOST step, such as the assessor; excluded from coordination metrics by default),
  ``requests`` (A2A requests it served), ``calls`` (messages it sent), ``errors`` (its failed
  spans), ``tool_calls`` and ``tool_time_ms`` (its TOOL steps), ``tools`` (tool name → count).
- **Edges** caller → callee, one per pair that exchanged at least one A2A message
  (``invoke_agent``). Attributes: ``count`` (messages), ``errors`` (failed ones),
  ``latency_ms`` (tuple of call durations, in start order), ``latency_mean_ms``,
  ``latency_p50_ms``, ``latency_max_ms``, ``distance = 1 / count`` (for path measures, so a
  busy link is short), ``polls`` (other A2A calls on the pair: GetTask, CancelTask...) and
  ``digests`` (message digests, for redundancy).

Nodes and edges are inserted in sorted order, so every algorithm sees the same graph however
the spans arrived: the same spans give the same metrics, byte for byte.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, TypeVar, cast

import networkx as nx

from coordbench import semconv
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import SpanTree, is_agent_call
from coordbench.steps import CallType, call_type_of

__all__ = [
    "AGENT",
    "HOST",
    "UNKNOWN_AGENT",
    "add_declared_agents",
    "agent_view",
    "build_agent_graph",
    "flow_view",
    "induced_subgraph",
    "with_tools",
]

AGENT = "agent"
HOST = "host"
UNKNOWN_AGENT = "?"
"""Stands for an agent no span names (a caller outside any instrumented process)."""

_Graph = TypeVar("_Graph", bound="nx.Graph[str]")

_POLL_METHODS = frozenset(
    {"GetTask", "CancelTask", "SubscribeToTask", "ListTasks", "tasks/get", "tasks/cancel", "tasks/resubscribe"}
)


def _hosts_of(tree: SpanTree) -> set[str]:
    hosts: set[str] = set()
    for root in tree.roots:
        if call_type_of(root) is CallType.HOST:
            agent = tree.agent_of(root)
            if agent:
                hosts.add(agent)
    return hosts


def build_agent_graph(spans: Iterable[SpanData] | SpanTree, *, hosts: Iterable[str] = ()) -> nx.DiGraph[str]:
    """Build the agent graph of one or more traces.

    Nodes come from what A2A spans say: agents that serve requests, make or receive calls
    (polls included), run tool steps, or own a trace's root HOST step. Other spans (HTTP
    client and server spans of other instrumentations, agent-card fetches, database calls)
    count toward their agent's errors but make no node of their own: named after a process's
    ``service.name``, they would show up as idle, isolated agents.

    Args:
        spans: The spans (any number of traces: they merge into one graph) or their tree.
        hosts: Agents to treat as hosts besides those owning a root HOST step.

    Returns:
        The graph; ``G.graph`` holds ``traces`` (trace ids) and ``hosts`` (host agents), sorted.

    Example:
        >>> from coordbench.spans import SpanData, SpanKind
        >>> def call(i, caller, callee):
        ...     attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": callee}
        ...     return SpanData("ab" * 16, f"{i:016x}", None, f"invoke_agent {callee}", SpanKind.CLIENT,
        ...                     i, i + 5_000_000, attrs, resource={"service.name": caller})
        >>> G = build_agent_graph([call(1, "A", "B"), call(2, "A", "B"), call(3, "B", "C")])
        >>> sorted(G.edges(data="count"))
        [('A', 'B', 2), ('B', 'C', 1)]
        >>> G["A"]["B"]["latency_mean_ms"], G["A"]["B"]["distance"]
        (5.0, 0.5)
    """
    tree = spans if isinstance(spans, SpanTree) else SpanTree(spans)
    root_hosts = _hosts_of(tree)
    host_names = root_hosts | set(hosts)
    nodes: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"requests": 0, "calls": 0, "errors": 0, "tool_calls": 0, "tool_time_ms": 0.0, "tools": Counter[str]()}
    )
    edges: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"latency_ms": [], "errors": 0, "polls": 0, "digests": []}
    )
    polls: Counter[tuple[str, str]] = Counter()
    errors: Counter[str] = Counter()
    for span in tree.ordered():
        agent = tree.agent_of(span) or UNKNOWN_AGENT
        if span.status_code is StatusCode.ERROR:
            errors[agent] += 1  # counted for agents the A2A spans below make nodes
        if span.kind is SpanKind.SERVER and span.attribute_str(semconv.GEN_AI_AGENT_NAME):
            nodes[agent]["requests"] += 1
        if is_agent_call(span):
            node = nodes[agent]
            callee = span.attribute_str(semconv.GEN_AI_AGENT_NAME) or UNKNOWN_AGENT
            nodes[callee]
            node["calls"] += 1
            edge = edges[(agent, callee)]
            edge["latency_ms"].append(span.duration_ms)
            if span.status_code is StatusCode.ERROR:
                edge["errors"] += 1
            digest = span.attribute_str(semconv.A2A_MESSAGE_DIGEST)
            if digest:
                edge["digests"].append(digest)
        elif span.kind is SpanKind.CLIENT and span.attributes.get(semconv.A2A_METHOD) in _POLL_METHODS:
            callee = span.attribute_str(semconv.GEN_AI_AGENT_NAME) or UNKNOWN_AGENT
            nodes[agent]
            nodes[callee]
            polls[(agent, callee)] += 1
        elif call_type_of(span) is CallType.TOOL:
            node = nodes[agent]
            node["tool_calls"] += 1
            node["tool_time_ms"] += span.duration_ms
            node["tools"][span.attribute_str(semconv.GEN_AI_TOOL_NAME) or span.name] += 1

    for host in root_hosts:
        nodes[host]
    for agent, count in errors.items():
        if agent in nodes:
            nodes[agent]["errors"] += count
    graph: nx.DiGraph[str] = nx.DiGraph(traces=sorted(tree.trace_ids), hosts=sorted(host_names & set(nodes)))
    for name in sorted(nodes):
        data = nodes[name]
        graph.add_node(
            name,
            role=HOST if name in host_names else AGENT,
            requests=data["requests"],
            calls=data["calls"],
            errors=data["errors"],
            tool_calls=data["tool_calls"],
            tool_time_ms=data["tool_time_ms"],
            tools=dict(sorted(data["tools"].items())),
        )
    for caller, callee in sorted(edges):
        data = edges[(caller, callee)]
        latencies: list[float] = data["latency_ms"]
        count = len(latencies)
        graph.add_edge(
            caller,
            callee,
            count=count,
            errors=data["errors"],
            latency_ms=tuple(latencies),
            latency_mean_ms=statistics.fmean(latencies),
            latency_p50_ms=statistics.median(latencies),
            latency_max_ms=max(latencies),
            distance=1.0 / count,
            polls=polls.get((caller, callee), 0),
            digests=tuple(data["digests"]),
        )
    return graph


def add_declared_agents(graph: nx.DiGraph[str], names: Iterable[str]) -> None:
    """Add agents expected to take part that no span mentions, as idle agent nodes (in place).

    Their absence then shows as isolation rather than not at all.
    """
    for name in sorted(set(names) - set(graph)):
        graph.add_node(name, role=AGENT, requests=0, calls=0, errors=0, tool_calls=0, tool_time_ms=0.0, tools={})


def agent_view(graph: nx.DiGraph[str], *, include_hosts: bool = False) -> nx.DiGraph[str]:
    """The graph the coordination metrics look at: agents only, hosts left out unless asked.

    The host (say, the assessor handing out tasks) calls every participant once per task;
    counting it would make every team look like a star around the assessor. Calls an agent
    makes to itself (recursion, or delegating to another instance of itself) are left out too:
    they are work inside one agent, not coordination between agents, and as loops they would
    push density and an agent's share of the interactions above 1 and hide an agent that talks
    to no one else from the isolation check. They stay in ``graph`` and in the result's edges.

    Example:
        >>> G = nx.DiGraph([("A", "A"), ("A", "B")])
        >>> sorted(agent_view(G).edges())
        [('A', 'B')]
    """
    roles = cast("Iterable[tuple[str, str]]", graph.nodes(data="role", default=None))
    return induced_subgraph(graph, [n for n, role in roles if include_hosts or role != HOST], self_loops=False)


def induced_subgraph(graph: _Graph, nodes: Iterable[str], *, self_loops: bool = True) -> _Graph:
    """``graph.subgraph(nodes).copy()`` in ``graph``'s own order of nodes and edges, whatever the hash seed.

    NetworkX's subgraph view walks a *set* of the nodes when it keeps fewer than half of them
    (``FilterAtlas``), so its copy's order (and every sum over it, and a drawing's layout) would
    follow the string hash seed of the process: a team whose hosts outnumber its agents, or whose
    idle agents outnumber the active ones, would get its nodes in another order in every process.
    Here nodes and edges keep ``graph``'s order (sorted, as :func:`build_agent_graph` inserts them);
    the subgraph is of ``graph``'s class, directed or not; graph, node and edge data are copied as
    ``copy()`` copies them (each dict, its values shared); and calls of an agent to itself are left
    out unless ``self_loops``.

    Example:
        >>> G = nx.DiGraph([("a", "b"), ("b", "b"), ("b", "c")])
        >>> list(induced_subgraph(G, ["c", "b"]).edges()), list(induced_subgraph(G, "bc", self_loops=False).edges())
        ([('b', 'b'), ('b', 'c')], [('b', 'c')])
    """
    keep = set(nodes)
    sub = graph.__class__()
    sub.graph.update(graph.graph)
    # each data dict is copied by add_nodes_from and add_edges_from (into a dict of its own, as copy() copies it)
    sub.add_nodes_from((n, data) for n, data in graph.nodes.items() if n in keep)
    sub.add_edges_from(
        (u, v, data)
        for u, neighbours in graph.adj.items()
        if u in keep
        for v, data in neighbours.items()
        if v in keep and (self_loops or u != v)
    )
    return sub


def flow_view(graph: nx.DiGraph[str]) -> nx.Graph[str]:
    """Undirected view for information flow: a call carries a request one way and a reply back.

    Edge ``count`` is the sum over both directions; ``distance = 1 / count``. Nodes carry no data.

    Example:
        >>> G = nx.DiGraph()
        >>> G.add_edge("A", "B", count=2)
        >>> G.add_edge("B", "A", count=1)
        >>> H = flow_view(G)
        >>> H["A"]["B"]["count"], H["A"]["B"]["distance"]
        (3, 0.3333333333333333)
    """
    undirected: nx.Graph[str] = nx.Graph()
    undirected.add_nodes_from(graph)  # structure only: copying node data cost more than the metrics
    for u, v, count in graph.edges(data="count", default=1):
        a, b = sorted((u, v))
        if undirected.has_edge(a, b):
            undirected[a][b]["count"] += count
        else:
            undirected.add_edge(a, b, count=count)
    for _, _, data in undirected.edges(data=True):
        data["distance"] = 1.0 / data["count"] if data["count"] else float("inf")
    return undirected


def with_tools(graph: nx.DiGraph[str]) -> nx.DiGraph[str]:
    """The graph with each tool an agent used as a node (``role="tool"``, named ``tool:<name>``).

    Edges agent → tool carry the call ``count``; tools used by several agents are one node.
    """
    extended = graph.copy()
    tools_by_agent = cast("Iterable[tuple[str, dict[str, int]]]", graph.nodes(data="tools", default={}))
    for agent, tools in sorted(tools_by_agent):
        for tool, count in sorted(tools.items()):
            node = f"tool:{tool}"
            if node not in extended:
                extended.add_node(node, role="tool")
            extended.add_edge(agent, node, count=count, distance=1.0 / count)
    return extended
