"""The report's pictures as inline SVG: the agent graph and a span waterfall with the critical path.

Layouts are deterministic: the same results give the same picture, byte for byte. The graph is
placed by networkx's Kamada-Kawai layout (a function of the graph alone; no random start) on the
agents sorted by name; the waterfall places spans by their times.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
from markupsafe import Markup

from coordbench.graph.agentgraph import induced_subgraph
from coordbench.graph.metrics.result import AgentSummary, EdgeSummary
from coordbench.graph.steptree import StepTree
from coordbench.report.templates import render
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import SpanTree

__all__ = ["agent_graph_svg", "lanes_svg", "waterfall_svg"]

_W, _H, _PAD = 560, 400, 60
_LEGEND = 30
"""Room under the legend's three rows before the topmost node."""
_COLOURS = {"agent": "#3b6ea8", "host": "#7a7a7a", "limited": "#c0392b", "isolated": "#bbbbbb"}
_BLAMED_RING = "#8e44ad"
"""The ring of the agent failure attribution named responsible."""
_FLAG_RING = "#e69a00"
"""The outline of an agent the PRD's rules flag as a bottleneck: a description of the shape, not a fault."""


def _positions(names: Sequence[str], edges: Sequence[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(sorted(names))
    graph.add_edges_from(sorted(edges))
    if len(graph) == 1:
        return {names[0]: (_W / 2, _H / 2)}
    placed: dict[str, Any] = {}
    components = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda c: (-len(c), c))
    connected = [c for c in components if len(c) > 1]
    alone = [c[0] for c in components if len(c) == 1]
    if connected:
        core = induced_subgraph(graph, [n for c in connected for n in c])  # in sorted order, whatever the hash seed
        placed = dict(nx.kamada_kawai_layout(core) if len(core) > 2 else nx.circular_layout(core))
    for i, name in enumerate(alone):  # isolated agents in a row along the bottom
        placed[name] = (-1.0 + 2.0 * (i + 1) / (len(alone) + 1), -1.35)
    xs = [float(p[0]) for p in placed.values()]
    ys = [float(p[1]) for p in placed.values()]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0

    def scale(point: Any) -> tuple[float, float]:
        x = _PAD + (float(point[0]) - min(xs)) / span_x * (_W - 2 * _PAD)
        y = _PAD + _LEGEND + (max(ys) - float(point[1])) / span_y * (_H - 2 * _PAD - _LEGEND)
        return round(x, 2), round(y, 2)

    return {name: scale(placed[name]) for name in sorted(placed)}


@dataclass(frozen=True)
class _Node:
    name: str
    x: float
    y: float
    r: float
    kind: str
    colour: str
    dashed: bool
    load: int
    ring: str
    ring_width: float
    note: str
    blamed: bool = False


@dataclass(frozen=True)
class _Edge:
    caller: str
    callee: str
    x1: float
    y1: float
    x2: float
    y2: float
    width: float
    colour: str
    count: object
    errors: object


def agent_graph_svg(
    agents: Sequence[AgentSummary],
    edges: Sequence[EdgeSummary],
    *,
    bottlenecks: Sequence[str] = (),
    isolated: Sequence[str] = (),
    limited: Sequence[str] = (),
    blamed: str | None = None,
    title: str = "",
) -> Markup:
    """The agent graph: node size = load (requests served + calls made), edge width = calls.

    Args:
        agents: ``GraphMetrics.agents`` (their ``name``, ``role``, ``requests`` and ``calls`` are drawn).
        edges: ``GraphMetrics.edges`` (their ``caller``, ``callee``, ``count`` and ``errors`` are drawn).
        bottlenecks: Agents the PRD's rules flag as bottlenecks (high betweenness): a description
            of the shape, drawn as an amber ring, never as a fault.
        isolated: Agents flagged as isolated (drawn grey, dashed).
        limited: Agents the coordination score judged to have held the team up (the agents its
            bottleneck part names, and those its parallelism part found serialising work): drawn red.
        blamed: The agent failure attribution named (drawn with a thick purple ring, ``data-blamed``).
        title: Accessible title.

    Returns:
        An ``<svg>`` element (every name in it escaped); nodes carry ``data-agent``, edges
        ``data-edge="caller->callee"``. An empty graph is an empty picture.
    """
    names = sorted(a.name for a in agents)
    pairs = [(e.caller, e.callee) for e in edges if e.caller != e.callee]
    position = _positions(names, pairs) if names else {}
    load = {a.name: a.requests + a.calls for a in agents}
    most = max(load.values(), default=1) or 1
    radius = {n: 12 + 14 * math.sqrt(load[n] / most) for n in names}
    counts = [e.count for e in edges] or [1]
    drawn: list[_Edge] = []
    for e in sorted(edges, key=lambda e: (e.caller, e.callee)):
        caller, callee = e.caller, e.callee
        if caller == callee or caller not in position or callee not in position:
            continue
        (x1, y1), (x2, y2) = position[caller], position[callee]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        drawn.append(
            _Edge(
                caller=caller,
                callee=callee,
                x1=x1 + ux * radius[caller],
                y1=y1 + uy * radius[caller],
                x2=x2 - ux * (radius[callee] + 2),
                y2=y2 - uy * (radius[callee] + 2),
                width=1.5 + 4.5 * e.count / max(counts),
                colour="#c0392b" if e.errors else "#555",
                count=e.count,
                errors=e.errors,
            )
        )
    roles = {a.name: a.role for a in agents}
    nodes: list[_Node] = []
    for name in names:
        x, y = position[name]
        kind = "limited" if name in limited else "isolated" if name in isolated else roles[name]
        flagged = name in bottlenecks
        notes = [
            {"limited": "held the team up (judged)", "isolated": "isolated"}.get(kind, kind),
            *(["flagged bottleneck (the PRD's rule: described, not scored)"] if flagged else []),
            *(["named responsible for the failure (attribution)"] if name == blamed else []),
        ]
        ring, ring_width = (_BLAMED_RING, 5.0) if name == blamed else (_FLAG_RING, 3.5) if flagged else ("#222", 1.0)
        nodes.append(
            _Node(
                name,
                x,
                y,
                radius[name],
                kind,
                _COLOURS.get(kind, _COLOURS["agent"]),
                name in isolated,
                load[name],
                ring,
                ring_width,
                "; ".join(notes),
                name == blamed,
            )
        )
    legend = [
        {"colour": _COLOURS[kind], "ring": ring, "text": text}
        for kind, ring, text in (("agent", "#222", "agent"), ("host", "#222", "host (assessor)"),
                                 ("limited", "#222", "held the team up (judged)"),
                                 ("agent", _FLAG_RING, "flagged bottleneck (described)"),
                                 ("isolated", "#222", "isolated"))
    ]  # fmt: skip
    if blamed is not None and blamed in position:
        legend.append({"colour": _COLOURS["agent"], "ring": _BLAMED_RING, "text": "responsible for the failure"})
    return render(
        "graph.svg.j2",
        width=_W,
        height=_H,
        title=title or "agent graph",
        edges=drawn,
        nodes=nodes,
        legend=legend,
    )


def _bar_colour(span: SpanData) -> str:
    """A span's bar: red when it failed, else by kind (handling a request, calling an agent, own work)."""
    if span.status_code is StatusCode.ERROR:
        return "#c0392b"
    return "#3b6ea8" if span.kind is SpanKind.SERVER else "#8fb3d9" if span.kind is SpanKind.CLIENT else "#9bbf85"


@dataclass(frozen=True)
class _Bar:
    span_id: str
    label: str
    label_x: float
    y: float
    x: float
    width: float
    colour: str
    name: str
    agent: str
    duration_ms: float


def waterfall_svg(
    spans: Sequence[SpanData],
    *,
    width: int = 900,
    row: int = 16,
    limit: int = 400,
    offset: int = 0,
    span_ns: int | None = None,
    decisive: str | None = None,
) -> Markup:
    """Each span as a bar on a shared time axis, depth first; critical-path segments highlighted.

    Args:
        spans: The spans.
        width: Width of the picture.
        row: Height of a bar's row.
        limit: Spans drawn at most.
        offset: Spans skipped first, depth first (a page of a large trace: ``offset=400`` draws the second 400).
        span_ns: Time the axis covers from the first start (at least the spans' own): two
            waterfalls given the same one share a scale, so they line up.
        decisive: The span failure attribution named decisive: outlined in purple, ``data-decisive``,
            and drawn even past ``limit``.

    Returns:
        An ``<svg>`` element; rows carry ``data-span`` (span id) and ``data-owner`` (its agent), critical
        segments ``class="critical"``.
    """
    tree = SpanTree(spans)
    if not len(tree):
        return Markup('<p class="empty">no spans</p>')
    walked = list(tree.walk())
    rows = walked[offset : offset + limit]
    if not rows:
        return Markup('<p class="empty">no spans on this page</p>')
    if decisive is not None and offset == 0 and all(s.span_id != decisive for _, s in rows):
        rows += [(d, s) for d, s in walked[limit:] if s.span_id == decisive]
    start = min(s.start_time_unix_nano for _, s in rows)
    end = max(s.end_time_unix_nano for _, s in rows)
    total = max(1, end - start, span_ns or 0)
    label_w = 300
    plot = width - label_w - 10
    top = 26  # the legend's row
    height = top + row * (len(rows) + 2) + 20

    def x(ns: int) -> float:
        return label_w + (ns - start) / total * plot

    bars: list[_Bar] = []
    for i, (depth, span) in enumerate(rows):
        agent = tree.agent_of(span) or "?"
        colour = _bar_colour(span)
        x0, x1 = x(span.start_time_unix_nano), x(span.end_time_unix_nano)
        bars.append(
            _Bar(
                span_id=span.span_id,
                label=f"{span.name} ({agent})"[: max(12, 46 - depth * 2)],
                label_x=4 + depth * 10,
                y=top + i * row,
                x=x0,
                width=max(1.0, x1 - x0),
                colour=colour,
                name=span.name,
                agent=agent,
                duration_ms=span.duration_ms,
            )
        )
    index = {span.span_id: i for i, (_, span) in enumerate(rows)}
    critical = [
        {"x": x(seg_start), "y": top + index[span_id] * row + 1, "width": max(2.0, x(seg_end) - x(seg_start))}
        for span_id, _agent, seg_start, seg_end in StepTree(tree).critical_path().segments
        if span_id in index
    ]
    marked = [{"x": bar.x - 2, "y": bar.y, "width": bar.width + 4} for bar in bars if bar.span_id == decisive]
    axis_y = top + len(rows) * row + 12
    ticks = [{"x": x(start + int(t * 1e6)), "text": _tick_text(t)} for t in _ticks(total / 1e6)]
    return render(
        "waterfall.svg.j2",
        width=width,
        height=height,
        row=row,
        rows=bars,
        critical=critical,
        decisive=marked,
        decisive_id=decisive,
        label_width=label_w,
        top=top,
        axis_y=axis_y,
        ticks=ticks,
        legend=[
            {"colour": "#3b6ea8", "text": "handling a request (SERVER)"},
            {"colour": "#8fb3d9", "text": "a call to an agent (CLIENT)"},
            {"colour": "#9bbf85", "text": "own work (TOOL, LLM, HOST)"},
            {"colour": "#c0392b", "text": "failed"},
        ],
    )


def _ticks(total_ms: float, most: int = 6) -> list[float]:
    """Round tick values (ms) from 0 to ``total_ms``: 1, 2 or 5 times a power of ten apart.

    Example:
        >>> _ticks(1234.0)
        [0.0, 250.0, 500.0, 750.0, 1000.0]
        >>> _ticks(0.4)
        [0.0, 0.1, 0.2, 0.3, 0.4]
    """
    if total_ms <= 0:
        return [0.0]
    raw = total_ms / (most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    count = int(total_ms / step + 1e-9)
    return [round(i * step, 9) for i in range(count + 1)]


def _tick_text(ms: float) -> str:
    """A tick's label: ms below a second, else seconds."""
    if ms >= 1000:
        return f"{ms / 1000:g} s"
    return f"{ms:g} ms"


def _merged_segments(
    pieces: Sequence[tuple[str, float, float]], lane_y: Callable[[str], float]
) -> list[dict[str, Any]]:
    """Critical-path pieces ``(agent, x0, x1)`` as bars, pieces of one lane that touch (within a pixel) made one.

    A trace of 10,000 spans has some 16,000 pieces on its critical path; drawn one by one they
    were most of a 2 MB picture, and no wider than a pixel each.
    """
    merged: dict[str, list[list[float]]] = {}
    for agent, x0, x1 in sorted(pieces, key=lambda p: (p[0], p[1], p[2])):
        bars = merged.setdefault(agent, [])
        if bars and x0 <= bars[-1][1] + 1.0:
            bars[-1][1] = max(bars[-1][1], x1)
        else:
            bars.append([x0, x1])
    return [
        {"x": x0, "y": lane_y(agent), "width": max(2.0, x1 - x0), "agent": agent}
        for agent in sorted(merged)
        for x0, x1 in merged[agent]
    ]


@dataclass(frozen=True)
class _LaneBar:
    span_id: str
    x: float
    width: float
    y: float
    height: float
    colour: str
    name: str
    duration_ms: float


@dataclass(frozen=True)
class _Lane:
    agent: str
    y: float
    busy_ms: float
    spans: int
    bars: tuple[_LaneBar, ...]


def lanes_svg(
    spans: Sequence[SpanData],
    *,
    width: int = 900,
    lane: int = 22,
    most_lanes: int = 60,
    most_bars: int = 2000,
    decisive: str | None = None,
) -> Markup:
    """One lane per agent on a shared time axis: what each agent was doing, and the critical path across them.

    A span is drawn in the lane of the agent it belongs to (its service): handling a request
    full height, its calls to other agents and its own work (tools, model calls) as thinner
    bars inside. The critical path is drawn on the lane of the agent whose work it was at each
    moment, so who waited on whom reads left to right.

    Args:
        spans: The trace's spans.
        width: Width of the picture.
        lane: Height of a lane.
        most_lanes: Lanes drawn at most (the busiest agents; the rest are counted in one line).
        most_bars: Bars drawn at most, the longest first (the rest are counted; their lanes stay).
        decisive: The span failure attribution named decisive: outlined in purple.

    Returns:
        An ``<svg>`` element; lanes carry ``data-lane`` (the agent), bars ``data-span``.
    """
    tree = SpanTree(spans)
    if not len(tree):
        return Markup('<p class="empty">no spans</p>')
    every = tree.ordered()  # by start time: each agent's spans below are too
    start = every[0].start_time_unix_nano
    end = max(s.end_time_unix_nano for s in every)
    total = max(1, end - start)
    by_agent: dict[str, list[SpanData]] = {}
    for span in every:
        by_agent.setdefault(tree.agent_of(span) or "?", []).append(span)
    busy = {agent: sum(s.duration_ms for s in found if s.kind is SpanKind.SERVER) for agent, found in by_agent.items()}
    first = {agent: found[0].start_time_unix_nano for agent, found in by_agent.items()}
    ordered = sorted(by_agent, key=lambda a: (-busy[a], first[a], a))
    shown = sorted(ordered[:most_lanes], key=lambda a: (first[a], a))
    hidden = len(ordered) - len(shown)
    candidates = sorted(
        (s for a in shown for s in by_agent[a]),
        key=lambda s: (-(s.end_time_unix_nano - s.start_time_unix_nano), s.span_id),
    )
    drawn_ids = {s.span_id for s in candidates[:most_bars]}
    if decisive is not None and any(s.span_id == decisive for s in candidates):
        drawn_ids.add(decisive)
    label_w = 180
    plot = width - label_w - 10
    top = 26

    def x(ns: int) -> float:
        return label_w + (ns - start) / total * plot

    lanes: list[_Lane] = []
    row_of: dict[str, int] = {}
    for i, agent in enumerate(shown):
        row_of[agent] = i
        y = top + i * lane
        bars: list[_LaneBar] = []
        for span in by_agent[agent]:
            if span.span_id not in drawn_ids:
                continue
            inner = span.kind is not SpanKind.SERVER
            x0, x1 = x(span.start_time_unix_nano), x(span.end_time_unix_nano)
            bars.append(
                _LaneBar(
                    span_id=span.span_id,
                    x=x0,
                    width=max(1.0, x1 - x0),
                    y=y + (8 if inner else 3),
                    height=lane - (13 if inner else 6),
                    colour=_bar_colour(span),
                    name=span.name,
                    duration_ms=span.duration_ms,
                )
            )
        lanes.append(_Lane(agent, y, busy[agent], len(by_agent[agent]), tuple(bars)))
    critical = _merged_segments(
        [(agent, x(seg_start), x(seg_end)) for _id, agent, seg_start, seg_end in StepTree(tree).critical_path().segments
         if agent in row_of],
        lambda agent: top + row_of[agent] * lane + lane - 4,
    )  # fmt: skip
    marked = [
        {"x": bar.x - 2, "y": ln.y + 1, "width": bar.width + 4}
        for ln in lanes
        for bar in ln.bars
        if bar.span_id == decisive
    ]
    bottom = top + len(lanes) * lane
    axis_y = bottom + 14
    ticks = [{"x": x(start + int(t * 1e6)), "text": _tick_text(t)} for t in _ticks(total / 1e6)]
    return render(
        "lanes.svg.j2",
        width=width,
        height=axis_y + (24 if hidden or len(drawn_ids) < len(candidates) else 8),
        lane=lane,
        lanes=lanes,
        critical=critical,
        decisive=marked,
        label_width=label_w,
        top=top,
        bottom=bottom,
        axis_y=axis_y,
        ticks=ticks,
        hidden_lanes=hidden,
        hidden_bars=len(candidates) - len(drawn_ids),
    )
