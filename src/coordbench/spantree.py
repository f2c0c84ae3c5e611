"""The shape of a trace: spans rebuilt into call trees, with the agents that did the work.

A :class:`SpanTree` groups spans by parent, keeps spans whose parent never arrived as
*orphans*, cuts parent cycles (bad input) at their earliest span, and knows which agent each
span belongs to: the agent whose A2A SERVER span encloses it, else the ``service.name`` of the
process that emitted it. From that it lists the agent-to-agent calls and the call chains
(``host → A → B → C``) a test or an evaluator asserts on.

This module is the one place that walks parents: the store's completeness reports and
scoped waits (:func:`completeness_of`, :func:`subtree_of`), the evaluators and the assessor
all read a trace's shape through it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from coordbench import semconv
from coordbench.spans import SpanData, SpanKind, StatusCode

__all__ = [
    "AgentCall",
    "Completeness",
    "SpanTree",
    "answer_of",
    "completeness_of",
    "is_agent_call",
    "is_agent_server_span",
    "subtree_of",
]


class AgentCall:
    """One agent-to-agent call: the caller, the callee and the caller's CLIENT span."""

    __slots__ = ("callee", "caller", "span")

    def __init__(self, caller: str, callee: str, span: SpanData) -> None:
        """Record a call."""
        self.caller = caller
        self.callee = callee
        self.span = span

    def __repr__(self) -> str:
        """``AgentCall('host' -> 'A')``."""
        return f"AgentCall({self.caller!r} -> {self.callee!r})"


_NONE: tuple[SpanData, ...] = ()
_BETWEEN = 6
"""Levels :meth:`SpanTree.server_of` looks through between an A2A call and the span that answered it."""


def _start(span: SpanData) -> tuple[int, str]:
    return span.start_time_unix_nano, span.span_id


def _cycle_cuts(by_id: dict[str, SpanData]) -> frozenset[str]:
    """Spans whose parent link closes a cycle: one per cycle, its earliest span.

    Parents normally form a forest; bad input (a span its own parent, two spans each
    other's) makes a loop that no walk up or down would leave. Each span's parents are
    followed until a span an earlier walk settled, so every span is visited once; meeting a
    span of the current walk again means a loop.
    """
    walk_of: dict[str, int] = {}
    cuts: set[str] = set()
    for walk, node in enumerate(by_id):
        while True:
            seen = walk_of.get(node)
            if seen is not None:
                if seen == walk:
                    loop = [node]
                    member = by_id[node].parent_span_id
                    while member is not None and member != node:
                        loop.append(member)
                        member = by_id[member].parent_span_id
                    cuts.add(min(loop, key=lambda i: _start(by_id[i])))
                break
            walk_of[node] = walk
            parent = by_id[node].parent_span_id
            if parent is None or parent not in by_id:
                break
            node = parent
    return frozenset(cuts)


def _process_key(span: SpanData) -> tuple[tuple[str, str], ...]:
    """A hashable stand-in for the span's resource (its process)."""
    return tuple(sorted((key, repr(value)) for key, value in span.resource.items()))


def is_agent_server_span(span: SpanData) -> bool:
    """Whether ``span`` is an A2A request handled by an agent (a SERVER span naming its agent)."""
    return span.kind is SpanKind.SERVER and span.attribute_str(semconv.GEN_AI_AGENT_NAME) is not None


def is_agent_call(span: SpanData) -> bool:
    """Whether ``span`` is an A2A message sent to an agent (a CLIENT ``invoke_agent`` span)."""
    return (
        span.kind is SpanKind.CLIENT
        and span.attributes.get(semconv.GEN_AI_OPERATION_NAME) == semconv.OPERATION_INVOKE_AGENT
        and span.attribute_str(semconv.GEN_AI_AGENT_NAME) is not None
    )


def answer_of(
    call: SpanData,
    children_of: Callable[[str], Sequence[SpanData]],
    *,
    depth: int = _BETWEEN,
    any_server: bool = False,
) -> SpanData | None:
    """The span that answered the A2A CLIENT span ``call``: the first A2A SERVER span below it.

    The walk goes down level by level (earliest first) through spans that are not A2A calls
    themselves, so spans of other instrumentations or of proxies between the two ends (httpx's
    HTTP CLIENT span, the callee's ASGI SERVER span) do not hide the answer; it never goes
    through another A2A call, below which is whoever that one called.

    Args:
        call: An A2A CLIENT span.
        children_of: The direct children of a span id, by start time.
        depth: How many levels below ``call`` to look.
        any_server: Accept any SERVER span (a callee that only an HTTP instrumentation traces
            has still answered), not only an A2A one.
    """
    level: Sequence[SpanData] = (call,)
    for _ in range(depth):
        below: list[SpanData] = []
        for span in level:
            for child in children_of(span.span_id):
                if is_agent_server_span(child) or (any_server and child.kind is SpanKind.SERVER):
                    return child
                if not is_agent_call(child):
                    below.append(child)
        if not below:
            return None
        level = sorted(below, key=_start)
    return None


class SpanTree:
    """Spans of one or more traces as a forest ordered by start time.

    Args:
        spans: The spans; a span id seen twice is kept once (the first copy).
    """

    def __init__(self, spans: Iterable[SpanData]) -> None:
        """Index ``spans`` by id and by parent."""
        given = tuple(spans)
        self.given: tuple[SpanData, ...] = given
        """The spans as given (their order, a repeated id too): what :meth:`subtree` and
        :meth:`completeness` read, so they answer as for the list."""
        by_id: dict[str, SpanData] = {}
        for span in given:
            by_id.setdefault(span.span_id, span)
        self._by_id = by_id
        self._cut = _cycle_cuts(by_id)
        children: dict[str, list[SpanData]] = {}
        roots: list[SpanData] = []
        orphans: list[SpanData] = []
        for span in by_id.values():
            parent = span.parent_span_id
            if parent is None:
                roots.append(span)
            elif parent in by_id and span.span_id not in self._cut:
                children.setdefault(parent, []).append(span)
            else:
                orphans.append(span)
        for siblings in children.values():
            siblings.sort(key=_start)
        self._children = children
        self._ordered = sorted(by_id.values(), key=_start)
        self.roots: list[SpanData] = sorted(roots, key=_start)
        """Spans without a parent."""
        self.orphans: list[SpanData] = sorted(orphans, key=_start)
        """Spans whose parent id was never seen (lost or not yet arrived), and the earliest span
        of each parent cycle (bad input), whose parent link is cut so that walks end."""
        self._agents: dict[str, str | None] = {}
        self._process_agents: dict[tuple[tuple[str, str], ...], set[str]] | None = None

    def __len__(self) -> int:
        """Number of distinct spans."""
        return len(self._by_id)

    @property
    def spans(self) -> list[SpanData]:
        """All spans, ordered by start time (a copy)."""
        return list(self._ordered)

    def ordered(self) -> Sequence[SpanData]:
        """All spans, ordered by start time, without copying (do not modify)."""
        return self._ordered

    @property
    def trace_ids(self) -> set[str]:
        """The trace ids present."""
        return {s.trace_id for s in self._by_id.values()}

    def get(self, span_id: str) -> SpanData | None:
        """The span with id ``span_id``."""
        return self._by_id.get(span_id)

    def children(self, span: SpanData) -> list[SpanData]:
        """Direct children of ``span``, by start time (a copy)."""
        return list(self._children.get(span.span_id, ()))

    def children_of(self, span_id: str) -> Sequence[SpanData]:
        """Direct children of the span with this id, by start time, without copying (do not modify)."""
        return self._children.get(span_id, _NONE)

    def parent(self, span: SpanData) -> SpanData | None:
        """The parent of ``span``, if it is in the tree."""
        if span.parent_span_id is None or span.span_id in self._cut:
            return None
        return self._by_id.get(span.parent_span_id)

    def ancestors(self, span: SpanData) -> Iterator[SpanData]:
        """Parent, grandparent... up to the root (or the orphan's top)."""
        current = self.parent(span)
        while current is not None:
            yield current
            current = self.parent(current)

    def descendants(self, span_id: str) -> list[SpanData]:
        """The span ``span_id`` and every span below it, depth first (empty if it is not in the tree)."""
        top = self._by_id.get(span_id)
        if top is None:
            return []
        out: list[SpanData] = []
        stack = [top]
        while stack:
            span = stack.pop()
            out.append(span)
            stack.extend(reversed(self._children.get(span.span_id, ())))
        return out

    def completeness(self, trace_id: str, idle_seconds: float, *, open_spans: Collection[str] = ()) -> Completeness:
        """Work out the completeness of the trace these spans are.

        Args:
            trace_id: The trace.
            idle_seconds: Seconds since it last grew.
            open_spans: Span ids known to be still running (an assessment's root span, say):
                children pointing at them are not orphans.
        """
        spans = self.given
        known = {s.span_id for s in spans} | set(open_spans)
        orphans = sorted(
            {s.parent_span_id for s in spans if s.parent_span_id is not None and s.parent_span_id not in known}
        )
        unmatched = sorted(
            s.span_id
            for s in spans
            if s.kind is SpanKind.CLIENT
            and semconv.A2A_METHOD in s.attributes
            and s.status_code is not StatusCode.ERROR
            and answer_of(s, self.children_of, any_server=True) is None
        )
        roots = sorted(s.span_id for s in spans if s.parent_span_id is None)
        return Completeness(
            trace_id=trace_id,
            span_count=len(spans),
            orphans=tuple(orphans),
            unmatched_clients=tuple(unmatched),
            roots=tuple(roots),
            idle_seconds=idle_seconds,
            complete=bool(spans) and not orphans and not unmatched,
        )

    def subtree(self, root: str, *, open_spans: Collection[str] = ()) -> tuple[list[SpanData], list[SpanData]]:
        """The spans under ``root`` (itself included), and the loose ones that might belong there.

        Loose spans hang (directly or through other spans) from a parent that has not arrived,
        so where they belong is not known yet: a subtree is complete only without any. Spans
        hanging from one of ``open_spans`` (known to be still running, so not sent yet) and from
        ``root``'s own parent are not loose: they are known to be elsewhere. A parent cycle (bad
        input) is cut at its earliest span: a cycle that ``root`` does not reach through that cut
        hangs from nothing and is in neither list.

        Returns:
            ``(subtree, loose)``, each in the order the spans were given.
        """
        top = self.get(root)
        elsewhere = set(open_spans)
        if top is not None and top.parent_span_id is not None:
            elsewhere.add(top.parent_span_id)
        inside = {s.span_id for s in self.descendants(root)}
        loose: set[str] = set()
        for orphan in self.orphans:
            parent = orphan.parent_span_id
            if parent is None or parent in elsewhere or self.get(parent) is not None:  # cycles are cut, not lost
                continue
            loose.update(s.span_id for s in self.descendants(orphan.span_id))
        loose -= inside
        return [s for s in self.given if s.span_id in inside], [s for s in self.given if s.span_id in loose]

    def walk(self) -> Iterator[tuple[int, SpanData]]:
        """Every span as ``(depth, span)``, depth first; roots first, then orphans as roots."""
        stack: list[tuple[int, SpanData]] = [(0, s) for s in reversed(self.roots + self.orphans)]
        while stack:
            depth, span = stack.pop()
            yield depth, span
            stack.extend((depth + 1, c) for c in reversed(self._children.get(span.span_id, ())))

    def find(self, predicate: Callable[[SpanData], bool] | None = None, **match: Any) -> list[SpanData]:
        """Spans matching ``predicate`` and every ``field=value`` given.

        Keywords ``name`` and ``kind`` compare with the span fields; any other keyword is an
        attribute name with dots written as ``__`` (``gen_ai__agent__name="A"``).
        """
        out: list[SpanData] = []
        for span in self._ordered:
            ok = predicate is None or predicate(span)
            for key, value in match.items():
                if not ok:
                    break
                if key == "name":
                    ok = span.name == value
                elif key == "kind":
                    ok = span.kind == value
                else:
                    ok = span.attributes.get(key.replace("__", ".")) == value
            if ok:
                out.append(span)
        return out

    def agent_of(self, span: SpanData) -> str | None:
        """The agent doing the work of ``span``.

        That is the agent of the nearest A2A SERVER span at or above ``span`` in the same
        process; a CLIENT span's own ``gen_ai.agent.name`` names the callee, so it does not
        count. Without such a server span above, a span that wraps one below it in the same
        process (the HTTP server span of an ASGI or FastAPI instrumentation, around our A2A
        server span) belongs to that agent, and so does any other server span (an agent-card
        fetch, a health check) of a process whose A2A server spans name one agent only.
        Otherwise: ``a2a.caller.name`` on a client span, else the ``service.name`` of the
        span's resource.
        """
        path: list[SpanData] = []
        current: SpanData | None = span
        agent: str | None = None
        while current is not None:
            cached = self._agents.get(current.span_id, "")
            if cached != "":
                agent = cached
                break
            path.append(current)
            if is_agent_server_span(current):
                agent = current.attribute_str(semconv.GEN_AI_AGENT_NAME)
                break
            parent = self.parent(current)
            current = parent if parent is not None and parent.resource == current.resource else None
        if agent is None and path:
            named = (p.attribute_str(semconv.A2A_CALLER_NAME) for p in path)
            agent = next((n for n in named if n is not None), None)
            if agent is None and path[-1].kind is SpanKind.SERVER:
                agent = self._agent_below(path[-1]) or self._only_agent_of_process(path[-1])
            agent = agent or path[-1].service_name
        for visited in path:
            self._agents[visited.span_id] = agent
        return agent

    def _only_agent_of_process(self, span: SpanData) -> str | None:
        """The agent a process serves, if its A2A SERVER spans name exactly one."""
        if self._process_agents is None:
            self._process_agents = {}
            for candidate in self._by_id.values():
                if is_agent_server_span(candidate):
                    name = candidate.attribute_str(semconv.GEN_AI_AGENT_NAME)
                    self._process_agents.setdefault(_process_key(candidate), set()).add(name or "")
        agents = self._process_agents.get(_process_key(span), set())
        return next(iter(agents)) if len(agents) == 1 else None

    def _agent_below(self, top: SpanData, depth: int = 4) -> str | None:
        """The one agent whose A2A SERVER span sits under the server span ``top`` (a few levels down).

        Only through the same process and not through client spans: below a client span is
        whoever it called.
        """
        found: set[str] = set()
        level = [top]
        for _ in range(depth):
            level = [
                c
                for s in level
                for c in self.children_of(s.span_id)
                if c.resource == top.resource and c.kind is not SpanKind.CLIENT
            ]
            for child in level:
                if is_agent_server_span(child):
                    found.add(child.attribute_str(semconv.GEN_AI_AGENT_NAME) or "")
            if found or not level:
                break
        found.discard("")
        return next(iter(found)) if len(found) == 1 else None

    def server_of(self, call: SpanData, *, depth: int = _BETWEEN) -> SpanData | None:
        """The A2A SERVER span that answered the CLIENT span ``call``, if it arrived.

        That is the earliest A2A SERVER span below ``call`` reached through spans that are
        not A2A calls themselves: the callee's server span is usually a direct child, but
        other instrumentations (httpx's HTTP CLIENT span, the callee's ASGI SERVER span) and
        proxies may sit in between (see :func:`answer_of`).

        Args:
            call: An A2A CLIENT span.
            depth: How many levels below ``call`` to look.
        """
        return answer_of(call, self.children_of, depth=depth)

    def client_of(self, server: SpanData, *, depth: int = _BETWEEN) -> SpanData | None:
        """The A2A CLIENT span that sent the request the SERVER span ``server`` answered, if it arrived.

        The inverse of :meth:`server_of`: the nearest A2A call above ``server`` through spans
        of other instrumentations; ``None`` when the walk meets another A2A SERVER span, a
        root or a missing parent first (the caller's spans are lost or it is uninstrumented).
        """
        current = self.parent(server)
        for _ in range(depth):
            if current is None or is_agent_server_span(current):
                return None
            if is_agent_call(current):
                return current
            current = self.parent(current)
        return None

    def request_of(self, span: SpanData) -> SpanData | None:
        """The A2A request ``span`` was done for: the nearest A2A SERVER span at or above it in its process.

        ``None`` when its agent was not serving a request (a host, a client script, or an
        agent whose server side is not instrumented).
        """
        current: SpanData | None = span
        while current is not None:
            if is_agent_server_span(current):
                return current
            parent = self.parent(current)
            current = parent if parent is not None and parent.resource == current.resource else None
        return None

    def calls(self) -> list[AgentCall]:
        """Every agent-to-agent message, caller → callee, by start time."""
        out: list[AgentCall] = []
        for span in self._ordered:
            if is_agent_call(span):
                callee = span.attribute_str(semconv.GEN_AI_AGENT_NAME) or "?"
                out.append(AgentCall(self.agent_of(span) or "?", callee, span))
        return out

    def call_chains(self) -> list[tuple[str, ...]]:
        """Maximal chains of agents, from each root's agent down through the A2A calls.

        ``[("host", "A", "B", "C")]`` for a host calling A, which calls B, which calls C.
        """
        chains: set[tuple[str, ...]] = set()
        stack: list[tuple[SpanData, tuple[str, ...]]] = [
            (top, (self.agent_of(top) or "?",)) for top in self.roots + self.orphans
        ]
        while stack:
            span, path = stack.pop()
            if is_agent_call(span):
                path = (*path, span.attribute_str(semconv.GEN_AI_AGENT_NAME) or "?")
            kids = self.children(span)
            if not kids:
                chains.add(path)
            stack.extend((child, path) for child in kids)
        maximal = {c for c in chains if not any(len(o) > len(c) and o[: len(c)] == c for o in chains)}
        return sorted(maximal)

    def render(self, attributes: Iterable[str] = ()) -> str:
        """The tree as indented text: ``name [KIND] (agent)``, plus chosen attributes."""
        keys = list(attributes)
        lines: list[str] = []
        for depth, span in self.walk():
            extra = "".join(f" {k}={span.attributes.get(k)!r}" for k in keys if k in span.attributes)
            orphan = " (orphan)" if span in self.orphans else ""
            lines.append(f"{'  ' * depth}{span.name} [{span.kind.name}] ({self.agent_of(span)}){extra}{orphan}")
        return "\n".join(lines)

    def dump(self, attributes: Iterable[str] = ()) -> list[dict[str, Any]]:
        """The spans as plain dicts (name, kind, parent name, agent, chosen attributes), depth first."""
        keys = list(attributes)
        out: list[dict[str, Any]] = []
        for depth, span in self.walk():
            parent = self.parent(span)
            out.append(
                {
                    "depth": depth,
                    "name": span.name,
                    "kind": span.kind.name,
                    "parent": None if parent is None else parent.name,
                    "agent": self.agent_of(span),
                    "attributes": {k: span.attributes[k] for k in keys if k in span.attributes},
                }
            )
        return out


@dataclass(frozen=True)
class Completeness:
    """Whether a trace looks whole, and why not.

    Attributes:
        trace_id: The trace.
        span_count: Spans stored.
        orphans: Parent span ids that spans point to but that never arrived, sorted.
        unmatched_clients: A2A CLIENT spans (not failed) with no SERVER span below them, also
            through spans of other instrumentations between the two (httpx's CLIENT span, a
            proxy's): the callee is uninstrumented, or its spans have not arrived.
        roots: Span ids of root spans (no parent), sorted.
        idle_seconds: Seconds since the trace last grew.
        complete: No orphans and no unmatched client spans (and at least one span).
        timed_out: ``wait_complete`` gave up before the trace was complete and quiet.
    """

    trace_id: str
    span_count: int
    orphans: tuple[str, ...] = ()
    unmatched_clients: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    idle_seconds: float = 0.0
    complete: bool = False
    timed_out: bool = False


def completeness_of(
    trace_id: str, spans: Sequence[SpanData] | SpanTree, idle_seconds: float, *, open_spans: Collection[str] = ()
) -> Completeness:
    """Work out the completeness of a trace from its spans (see :meth:`SpanTree.completeness`)."""
    tree = spans if isinstance(spans, SpanTree) else SpanTree(spans)
    return tree.completeness(trace_id, idle_seconds, open_spans=open_spans)


def subtree_of(
    spans: Sequence[SpanData] | SpanTree, root: str, *, open_spans: Collection[str] = ()
) -> tuple[list[SpanData], list[SpanData]]:
    """The spans under ``root`` (itself included), and the loose ones (see :meth:`SpanTree.subtree`)."""
    tree = spans if isinstance(spans, SpanTree) else SpanTree(spans)
    return tree.subtree(root, open_spans=open_spans)
