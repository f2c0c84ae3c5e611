"""Building the agent graph from spans: edges, stats, errors, hosts, tools, merging traces."""

from __future__ import annotations

import networkx as nx

from coordbench import semconv
from coordbench.graph import StepTree, agent_view, build_agent_graph, flow_view, with_tools
from coordbench.graph.agentgraph import induced_subgraph
from coordbench.spans import SpanKind, StatusCode
from support.spans import call, serve, sid, span


def team() -> list:
    """host runs a workflow, calls A twice; A calls B once (which fails) and uses a tool."""
    return [
        span("invoke_workflow run", span_id=sid(1), service="host", a2a__step__call_type="HOST"),
        call("host", "A", parent=sid(1), span_id=sid(2), start_ms=0, end_ms=40, digest="d1"),
        serve("A", parent=sid(2), span_id=sid(3), start_ms=1, end_ms=39),
        call("host", "A", parent=sid(1), span_id=sid(4), start_ms=50, end_ms=70, digest="d1"),
        serve("A", parent=sid(4), span_id=sid(5), start_ms=51, end_ms=69),
        call("A", "B", parent=sid(3), span_id=sid(6), start_ms=5, end_ms=15, status=StatusCode.ERROR),
        span(
            "execute_tool search",
            parent=sid(3),
            start_ms=16,
            end_ms=20,
            service="svc-A",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="search",
        ),
        span(
            "GetTask A",
            parent=sid(1),
            kind=SpanKind.CLIENT,
            service="host",
            start_ms=71,
            end_ms=72,
            a2a__method__name="GetTask",
            gen_ai__agent__name="A",
        ),
    ]


def test_edges_nodes_and_roles() -> None:
    G = build_agent_graph(team())
    assert list(G) == ["A", "B", "host"]
    assert G.graph["hosts"] == ["host"]
    assert G.nodes["host"]["role"] == "host" and G.nodes["A"]["role"] == "agent"
    assert sorted(G.edges(data="count")) == [("A", "B", 1), ("host", "A", 2)]
    edge = G["host"]["A"]
    assert edge["latency_ms"] == (40.0, 20.0)
    assert (edge["latency_mean_ms"], edge["latency_p50_ms"], edge["latency_max_ms"]) == (30.0, 30.0, 40.0)
    assert (edge["distance"], edge["polls"], edge["digests"]) == (0.5, 1, ("d1", "d1"))
    assert G["A"]["B"]["errors"] == 1
    a = G.nodes["A"]
    assert (a["requests"], a["calls"], a["errors"], a["tool_calls"], a["tools"]) == (2, 1, 1, 1, {"search": 1})
    assert a["tool_time_ms"] == 4.0
    assert G.nodes["B"]["requests"] == 0  # B's side was never traced: its edge still exists


def test_views() -> None:
    G = build_agent_graph(team())
    assert list(agent_view(G)) == ["A", "B"]
    assert list(agent_view(G, include_hosts=True)) == ["A", "B", "host"]
    H = flow_view(agent_view(G, include_hosts=True))
    assert H["A"]["host"]["count"] == 2
    T = with_tools(G)
    assert T.nodes["tool:search"]["role"] == "tool" and T["A"]["tool:search"]["count"] == 1


def test_traces_merge_into_one_graph() -> None:
    one = [call("A", "B", trace_id="11" * 16, span_id=sid(1))]
    two = [call("A", "B", trace_id="22" * 16, span_id=sid(2)), call("B", "C", trace_id="22" * 16, span_id=sid(3))]
    G = build_agent_graph(one + two)
    assert G.graph["traces"] == ["11" * 16, "22" * 16]
    assert sorted(G.edges(data="count")) == [("A", "B", 2), ("B", "C", 1)]


def test_explicit_hosts() -> None:
    G = build_agent_graph([call("pytest", "A", span_id=sid(1))], hosts=["pytest"])
    assert G.nodes["pytest"]["role"] == "host"
    assert semconv.GEN_AI_AGENT_NAME  # the callee attribute is what names the target


def test_http_spans_of_other_instrumentations_make_no_agents() -> None:
    """httpx CLIENT and ASGI SERVER spans around A2A calls, and an agent-card fetch with no A2A below.

    Named after their processes' service.name they used to add idle agents 'svc-A' and 'svc-B',
    which the detections then called isolated. They belong to the agents of their processes, and
    the 500 of B's card endpoint counts as B's error.
    """
    spans = [
        call("host", "A", span_id=sid(2), start_ms=1, end_ms=99),
        span("POST", span_id=sid(3), parent=sid(2), kind=SpanKind.CLIENT, service="host"),
        span("POST /", span_id=sid(4), parent=sid(3), kind=SpanKind.SERVER, service="svc-A"),
        serve("A", parent=sid(4), span_id=sid(5)),
        call("svc-A", "B", parent=sid(5), span_id=sid(6)),
        span("POST", span_id=sid(7), parent=sid(6), kind=SpanKind.CLIENT, service="svc-A"),
        span("POST /", span_id=sid(8), parent=sid(7), kind=SpanKind.SERVER, service="svc-B"),
        serve("B", parent=sid(8), span_id=sid(9)),
        span("GET", span_id=sid(20), parent=sid(5), kind=SpanKind.CLIENT, service="svc-A"),
        span(
            "GET /.well-known/agent-card.json",
            span_id=sid(21),
            parent=sid(20),
            kind=SpanKind.SERVER,
            service="svc-B",
            status=StatusCode.ERROR,
        ),
    ]
    G = build_agent_graph(spans)
    assert sorted(G) == ["A", "B", "host"]
    assert sorted(G.edges(data="count")) == [("A", "B", 1), ("host", "A", 1)]
    assert G.nodes["B"]["errors"] == 1
    assert StepTree(spans).critical_path().by_agent_ms.keys() <= {"A", "B", "host"}


def _hosts_outnumber_agents() -> nx.DiGraph[str]:
    """Ten agents in a ring with chords, twenty-five hosts each calling one: NetworkX's view walks a set here."""
    G: nx.DiGraph[str] = nx.DiGraph()
    agents = [f"agent-{k:02d}" for k in range(10)]
    for k in range(25):
        G.add_node(f"host-{k:02d}", role="host")
    for name in agents:
        G.add_node(name, role="agent", calls=1)
    for k, name in enumerate(agents):
        G.add_edge(name, agents[(k + 1) % 10], count=k + 1)
        G.add_edge(name, agents[(k + 3) % 10], count=1)
        G.add_edge(name, name, count=2)  # a self-call: left out of the view
    for k in range(25):
        G.add_edge(f"host-{k:02d}", agents[k % 10], count=1)
    return G


def test_the_agent_view_keeps_the_graphs_order_whatever_the_hash_seed() -> None:
    G = _hosts_outnumber_agents()
    view = agent_view(G)
    # NetworkX's subgraph(...).copy() walks a set of the kept nodes when they are fewer than half:
    # its order followed the hash seed (ten agents: one chance in millions of matching this)
    assert list(view) == [n for n in G if G.nodes[n]["role"] == "agent"]
    assert list(view.edges()) == [
        (u, v) for u, v in G.edges() if u.startswith("agent") and v.startswith("agent") and u != v
    ]
    assert view.nodes["agent-03"] == {"role": "agent", "calls": 1} and view.nodes["agent-03"] is not G.nodes["agent-03"]
    assert (
        view["agent-01"]["agent-02"] == {"count": 2} and view["agent-01"]["agent-02"] is not G["agent-01"]["agent-02"]
    )
    assert list(view.predecessors("agent-05")) == ["agent-02", "agent-04"]


def test_an_induced_subgraph_keeps_the_graphs_order_and_copies_its_data() -> None:
    G = _hosts_outnumber_agents()
    kept = ["agent-07", "agent-01", "agent-00", "agent-04"]  # fewer than half, in another order
    sub = induced_subgraph(G, kept)
    assert list(sub) == ["agent-00", "agent-01", "agent-04", "agent-07"]
    # each agent's calls as they were added: the next one, the chord three ahead, itself
    assert list(sub.edges()) == [
        ("agent-00", "agent-01"), ("agent-00", "agent-00"), ("agent-01", "agent-04"), ("agent-01", "agent-01"),
        ("agent-04", "agent-07"), ("agent-04", "agent-04"), ("agent-07", "agent-00"), ("agent-07", "agent-07"),
    ]  # fmt: skip
    sub["agent-00"]["agent-01"]["count"] = 99
    assert G["agent-00"]["agent-01"]["count"] == 1
    assert induced_subgraph(G, []).number_of_nodes() == 0
