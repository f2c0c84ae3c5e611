"""SpanTree: parents, orphans, agents, calls and call chains on hand-built spans."""

from __future__ import annotations

import pytest

from coordbench import semconv
from coordbench.spans import SpanData, SpanKind
from coordbench.testing import SpanTree

T = "0af7651916cd43dd8448eb211c80319c"
INVOKE = semconv.OPERATION_INVOKE_AGENT


def span(
    span_id: str,
    parent: str | None,
    name: str,
    kind: SpanKind = SpanKind.INTERNAL,
    *,
    start: int,
    service: str,
    agent: str | None = None,
    operation: str | None = None,
    caller: str | None = None,
) -> SpanData:
    attributes: dict[str, object] = {}
    if agent:
        attributes[semconv.GEN_AI_AGENT_NAME] = agent
    if operation:
        attributes[semconv.GEN_AI_OPERATION_NAME] = operation
    if caller:
        attributes[semconv.A2A_CALLER_NAME] = caller
    return SpanData(
        trace_id=T,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=start + 100,
        attributes=attributes,  # type: ignore[arg-type]
        resource={"service.name": service},
    )


def call(
    span_id: str, parent: str | None, callee: str, *, start: int, service: str, caller: str | None = None
) -> SpanData:
    return span(
        span_id, parent, f"invoke_agent {callee}", SpanKind.CLIENT, start=start, service=service, agent=callee,
        operation="invoke_agent", caller=caller,
    )  # fmt: skip


def serve(span_id: str, parent: str, agent: str, *, start: int) -> SpanData:
    return span(
        span_id, parent, f"invoke_agent {agent}", SpanKind.SERVER, start=start, service=f"svc-{agent}", agent=agent
    )


def fan_out() -> list[SpanData]:
    """host -> A; A -> B and A -> C (in that order); B -> C; one tool call in C."""
    return [
        span("h1", None, "invoke_workflow run", start=0, service="host"),
        call("c1", "h1", "A", start=1, service="host"),
        serve("s1", "c1", "A", start=2),
        span("t0", "s1", "plan", start=3, service="svc-A"),
        call("c2", "s1", "B", start=4, service="svc-A"),
        serve("s2", "c2", "B", start=5),
        call("c4", "s2", "C", start=6, service="svc-B"),
        serve("s4", "c4", "C", start=7),
        call("c3", "s1", "C", start=9, service="svc-A"),
        serve("s3", "c3", "C", start=10),
        span("t1", "s3", "execute_tool search", start=11, service="svc-C"),
    ]


def test_structure_and_order() -> None:
    tree = SpanTree(list(reversed(fan_out())))
    assert [s.span_id for s in tree.roots] == ["h1"]
    assert tree.orphans == []
    assert [c.span_id for c in tree.children(tree.get("s1"))] == ["t0", "c2", "c3"]  # type: ignore[arg-type]
    assert tree.parent(tree.get("s3")).span_id == "c3"  # type: ignore[arg-type, union-attr]
    assert [a.span_id for a in tree.ancestors(tree.get("t1"))] == ["s3", "c3", "s1", "c1", "h1"]  # type: ignore[arg-type]
    assert len(tree) == 11


def test_agents_calls_and_chains() -> None:
    tree = SpanTree(fan_out())
    assert tree.agent_of(tree.get("t0")) == "A"  # type: ignore[arg-type]
    assert tree.agent_of(tree.get("c2")) == "A"  # type: ignore[arg-type]  # a client span belongs to its caller
    assert tree.agent_of(tree.get("c1")) == "host"  # type: ignore[arg-type]
    assert [(c.caller, c.callee) for c in tree.calls()] == [("host", "A"), ("A", "B"), ("B", "C"), ("A", "C")]
    assert tree.call_chains() == [("host", "A", "B", "C"), ("host", "A", "C")]


def test_orphans_are_kept_and_attributed() -> None:
    spans = [s for s in fan_out() if s.span_id not in {"c2"}]  # A's call to B never arrived
    tree = SpanTree(spans)
    assert [s.span_id for s in tree.orphans] == ["s2"]
    assert tree.agent_of(tree.get("c4")) == "B"  # type: ignore[arg-type]
    assert ("B", "C") in tree.call_chains()
    assert "(orphan)" in tree.render()


def test_caller_attribute_when_the_server_span_is_missing() -> None:
    spans = [call("x", None, "Z", start=0, service="proc", caller="Y")]
    assert SpanTree(spans).calls()[0].caller == "Y"


def test_duplicates_are_kept_once() -> None:
    spans = fan_out()
    tree = SpanTree(spans + spans[:3])
    assert len(tree) == len(spans)


def test_find_one_render_dump() -> None:
    tree = SpanTree(fan_out())
    assert [s.span_id for s in tree.find(kind=SpanKind.SERVER, gen_ai__agent__name="C")] == ["s4", "s3"]
    with pytest.raises(AssertionError, match="expected exactly one span"):
        tree.one(kind=SpanKind.SERVER, gen_ai__agent__name="C")
    assert tree.render().splitlines()[:3] == [
        "invoke_workflow run [INTERNAL] (host)",
        "  invoke_agent A [CLIENT] (host)",
        "    invoke_agent A [SERVER] (A)",
    ]
    first = tree.dump([semconv.GEN_AI_AGENT_NAME])[1]
    assert first == {
        "depth": 1,
        "name": "invoke_agent A",
        "kind": "CLIENT",
        "parent": "invoke_workflow run",
        "agent": "host",
        "attributes": {semconv.GEN_AI_AGENT_NAME: "A"},
    }


def test_deep_chains_do_not_recurse() -> None:
    spans = [span("0" * 15 + "0", None, "root", start=0, service="s")]
    for i in range(1, 5000):
        spans.append(span(f"{i:016x}", f"{i - 1:016x}" if i > 1 else "0" * 16, f"n{i}", start=i, service="s"))
    tree = SpanTree(spans)
    assert tree.agent_of(spans[-1]) == "s"
    assert len(tree.call_chains()) == 1


def test_parent_cycles_are_cut_so_every_walk_ends() -> None:
    """Spans whose parents loop back (a span its own parent; two spans each other's) from bad input.

    Each cycle is cut at its earliest span, which becomes an orphan with the rest of the
    cycle below it: nothing is lost, and walking up or down always ends.
    """
    spans = [
        span("a" * 16, None, "root", start=1, service="svc"),
        span("b" * 16, "b" * 16, "self", start=2, service="svc"),
        span("c" * 16, "d" * 16, "loop c", SpanKind.CLIENT, start=3, service="svc"),
        span("d" * 16, "c" * 16, "loop d", start=4, service="svc"),
        span("e" * 16, "c" * 16, "under c", SpanKind.CLIENT, start=5, service="svc", agent="E", operation=INVOKE),
    ]
    tree = SpanTree(spans)
    by_name = {s.name: s for s in spans}
    assert [s.name for s in tree.roots] == ["root"]
    assert [s.name for s in tree.orphans] == ["self", "loop c"]  # c started before d: the cut is above c
    assert tree.parent(by_name["self"]) is None and tree.children(by_name["self"]) == []
    assert tree.parent(by_name["loop d"]) == by_name["loop c"]
    assert [s.name for s in tree.children(by_name["loop c"])] == ["loop d", "under c"]
    assert [s.name for s in tree.ancestors(by_name["under c"])] == ["loop c"]
    assert sorted(s.name for _depth, s in tree.walk()) == sorted(by_name)
    assert {tree.agent_of(s) for s in spans} == {"svc"}
    assert [(c.caller, c.callee) for c in tree.calls()] == [("svc", "E")]
    assert tree.call_chains() == [("svc", "E")]
