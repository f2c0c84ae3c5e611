"""The report's pictures as inline SVG: the agent graph and a span waterfall with the critical path.

Layouts are deterministic: the same results give the same picture, byte for byte. The graph is
placed by networkx's Kamada-Kawai layout (a function of the graph alone; no random start) on the
agents sorted by name; the waterfall places spans by their times.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import networkx as nx

from coordbench.graph.steptree import StepTree
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import SpanTree

__all__ = ["agent_graph_svg", "waterfall_svg"]

_W, _H, _PAD = 560, 380, 60
_COLOURS = {"agent": "#3b6ea8", "host": "#7a7a7a", "bottleneck": "#c0392b", "isolated": "#bbbbbb"}


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
        core = graph.subgraph([n for c in connected for n in c])
        placed = dict(nx.kamada_kawai_layout(core) if len(core) > 2 else nx.circular_layout(core))
    for i, name in enumerate(alone):  # isolated agents in a row along the bottom
        placed[name] = (-1.0 + 2.0 * (i + 1) / (len(alone) + 1), -1.35)
    xs = [float(p[0]) for p in placed.values()]
    ys = [float(p[1]) for p in placed.values()]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0

    def scale(point: Any) -> tuple[float, float]:
        x = _PAD + (float(point[0]) - min(xs)) / span_x * (_W - 2 * _PAD)
        y = _PAD + (max(ys) - float(point[1])) / span_y * (_H - 2 * _PAD)
        return round(x, 2), round(y, 2)

    return {name: scale(placed[name]) for name in sorted(placed)}


def agent_graph_svg(
    agents: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    *,
    bottlenecks: Sequence[str] = (),
    isolated: Sequence[str] = (),
    title: str = "",
) -> str:
    """The agent graph: node size = load (requests served + calls made), edge width = calls.

    Args:
        agents: ``GraphMetrics.agents`` entries (``name``, ``role``, ``requests``, ``calls``).
        edges: ``GraphMetrics.edges`` entries (``caller``, ``callee``, ``count``, ``errors``).
        bottlenecks: Agents flagged as bottlenecks (drawn red).
        isolated: Agents flagged as isolated (drawn grey, dashed).
        title: Accessible title.

    Returns:
        An ``<svg>`` element; nodes carry ``data-agent``, edges ``data-edge="caller->callee"``.
    """
    names = sorted(str(a["name"]) for a in agents)
    pairs = [(str(e["caller"]), str(e["callee"])) for e in edges if e["caller"] != e["callee"]]
    position = _positions(names, pairs)
    load = {str(a["name"]): int(a.get("requests", 0)) + int(a.get("calls", 0)) for a in agents}
    most = max(load.values(), default=1) or 1
    radius = {n: 12 + 14 * math.sqrt(load[n] / most) for n in names}
    out = [
        f'<svg class="agent-graph" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title or "agent graph")}</title>',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="11" markerHeight="11" '
        'markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    counts = [int(e.get("count", 1)) for e in edges] or [1]
    for e in sorted(edges, key=lambda e: (str(e["caller"]), str(e["callee"]))):
        caller, callee = str(e["caller"]), str(e["callee"])
        if caller == callee or caller not in position or callee not in position:
            continue
        (x1, y1), (x2, y2) = position[caller], position[callee]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        sx, sy = x1 + ux * radius[caller], y1 + uy * radius[caller]
        ex, ey = x2 - ux * (radius[callee] + 2), y2 - uy * (radius[callee] + 2)
        width = 1.5 + 4.5 * int(e.get("count", 1)) / max(counts)
        colour = "#c0392b" if int(e.get("errors", 0)) else "#555"
        label = f"{caller} → {callee}: {e.get('count', 1)} call(s), {e.get('errors', 0)} failed"
        out.append(
            f'<line data-edge="{escape(caller)}->{escape(callee)}" x1="{sx:.1f}" y1="{sy:.1f}" x2="{ex:.1f}" '
            f'y2="{ey:.1f}" stroke="{colour}" stroke-width="{width:.1f}" marker-end="url(#arrow)">'
            f"<title>{escape(label)}</title></line>"
        )
    roles = {str(a["name"]): str(a.get("role", "agent")) for a in agents}
    for name in names:
        x, y = position[name]
        kind = "bottleneck" if name in bottlenecks else "isolated" if name in isolated else roles[name]
        colour = _COLOURS.get(kind, _COLOURS["agent"])
        dash = ' stroke-dasharray="4 3"' if name in isolated else ""
        out.append(
            f'<g class="node {escape(kind)}" data-agent="{escape(name)}">'
            f'<circle cx="{x}" cy="{y}" r="{radius[name]:.1f}" '
            f'fill="{colour}" fill-opacity="0.85" stroke="#222"{dash}><title>{escape(name)}: {load[name]} messages '
            f"({escape(kind)})</title></circle>"
            f'<text x="{x}" y="{y + radius[name] + 14:.1f}" text-anchor="middle">{escape(name)}</text></g>'
        )
    legend = [("agent", "agent"), ("host", "host (assessor)"), ("bottleneck", "bottleneck"), ("isolated", "isolated")]
    for i, (kind, text) in enumerate(legend):
        out.append(
            f'<g class="legend"><circle cx="{14 + i * 130}" cy="14" r="6" fill="{_COLOURS[kind]}"/>'
            f'<text x="{24 + i * 130}" y="18">{text}</text></g>'
        )
    out.append(f'<text class="legend" x="14" y="{_H - 8}">node size: messages handled and sent; '
               "edge width: calls; red edge: failures</text>")  # fmt: skip
    out.append("</svg>")
    return "".join(out)


def waterfall_svg(spans: Sequence[SpanData], *, width: int = 900, row: int = 16, limit: int = 400) -> str:
    """Each span as a bar on a shared time axis, depth first; critical-path segments highlighted.

    Returns:
        An ``<svg>`` element; bars carry ``data-span`` (span id), critical segments ``class="critical"``.
    """
    tree = SpanTree(spans)
    if not len(tree):
        return '<p class="empty">no spans</p>'
    rows = list(tree.walk())[:limit]
    start = min(s.start_time_unix_nano for _, s in rows)
    end = max(s.end_time_unix_nano for _, s in rows)
    total = max(1, end - start)
    label_w = 300
    plot = width - label_w - 10
    height = row * (len(rows) + 2) + 20

    def x(ns: int) -> float:
        return label_w + (ns - start) / total * plot

    out = [
        f'<svg class="waterfall" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg" role="img"><title>span waterfall</title>'
    ]
    for i, (depth, span) in enumerate(rows):
        y = 10 + i * row
        agent = tree.agent_of(span) or "?"
        colour = "#c0392b" if span.status_code is StatusCode.ERROR else (
            "#3b6ea8" if span.kind is SpanKind.SERVER else "#8fb3d9" if span.kind is SpanKind.CLIENT else "#9bbf85"
        )  # fmt: skip
        x0, x1 = x(span.start_time_unix_nano), x(span.end_time_unix_nano)
        name = f"{'  ' * depth}{span.name} ({agent})"
        out.append(
            f'<g data-span="{span.span_id}"><text x="{4 + depth * 10}" y="{y + 11}" class="label">'
            f"{escape(name[:60])}</text>"
            f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(1.0, x1 - x0):.1f}" height="{row - 4}" fill="{colour}">'
            f"<title>{escape(span.name)} — {agent}, {span.duration_ms:.1f} ms</title></rect></g>"
        )
    index = {span.span_id: i for i, (_, span) in enumerate(rows)}
    for span_id, _agent, seg_start, seg_end in StepTree(tree).critical_path().segments:
        if span_id in index:
            y = 10 + index[span_id] * row
            out.append(
                f'<rect class="critical" x="{x(seg_start):.1f}" y="{y + row - 4}" '
                f'width="{max(1.0, x(seg_end) - x(seg_start)):.1f}" height="3" fill="#e67e22"/>'
            )
    y = 10 + len(rows) * row + 12
    out.append(
        f'<text x="{label_w}" y="{y}" class="axis">0 ms</text><text x="{width - 10}" y="{y}" text-anchor="end" '
        f'class="axis">{total / 1e6:.1f} ms</text><text x="4" y="{y}" class="axis">orange: critical path</text>'
    )
    out.append("</svg>")
    return "".join(out)
