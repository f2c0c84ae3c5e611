"""The cost benchmark's scaling picture: each part's time against the trace's spans, log-log, baseline beside today.

A plain SVG (no plotting library): one panel per tree, a line per part, and a grey dashed line of
slope one through the total at the smallest size, so a part that grows faster than the spans
shows as steeper than the guide. ``make bench`` writes it to ``docs/images/cost-scaling.svg``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

__all__ = ["PALETTE", "scaling_svg"]

PALETTE = ("#3b6ea8", "#c0392b", "#2e7d32", "#a86f00", "#7b4ea8", "#00838f", "#6d4c41", "#546e7a", "#000000")
"""A colour per part, in the order the parts are listed (the total last, in black)."""

PANEL_W, PANEL_H = 380, 300
LEFT, TOP, GAP, LEGEND_W = 64, 40, 40, 120
WIDTH = LEFT + 2 * PANEL_W + GAP + LEGEND_W
HEIGHT = TOP + PANEL_H + 48

Parts = Mapping[int, Mapping[str, float]]
"""Spans -> part -> milliseconds, for one tree."""


def _decades(low: float, high: float) -> list[int]:
    return list(range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1))


def scaling_svg(trees: Mapping[str, Parts], parts: Sequence[str]) -> str:
    """The picture as SVG text.

    Args:
        trees: Tree name (``baseline``, ``today``) -> spans -> part -> milliseconds.
        parts: The parts to draw, in legend order; ``total`` (their sum) is added as the last line.

    Returns:
        A standalone SVG document; the same figures give the same bytes.
    """
    names = [*parts, "total"]

    def value(ms: Mapping[str, float], name: str) -> float:
        return sum(ms[p] for p in parts if p in ms) if name == "total" else ms.get(name, 0.0)

    sizes = sorted({size for by_size in trees.values() for size in by_size})
    shown = [value(ms, n) for by_size in trees.values() for ms in by_size.values() for n in names]
    positive = [v for v in shown if v > 0]
    if not sizes or not positive:
        raise ValueError("no figures to draw")
    x_dec = _decades(sizes[0], sizes[-1])
    y_dec = _decades(min(positive), max(positive))

    def x_of(panel: int, spans: float) -> float:
        share = (math.log10(spans) - x_dec[0]) / (x_dec[-1] - x_dec[0] or 1)
        return LEFT + panel * (PANEL_W + GAP) + share * PANEL_W

    def y_of(ms: float) -> float:
        share = (math.log10(ms) - y_dec[0]) / (y_dec[-1] - y_dec[0] or 1)
        return TOP + PANEL_H - share * PANEL_H

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
    ]
    for panel, (tree, by_size) in enumerate(trees.items()):
        x0, x1 = x_of(panel, 10 ** x_dec[0]), x_of(panel, 10 ** x_dec[-1])
        out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{TOP - 16}" text-anchor="middle" font-size="13">'
                   f"{escape(tree)}</text>")  # fmt: skip
        for d in y_dec:
            y = y_of(10**d)
            out.append(f'<line x1="{x0:.1f}" y1="{y:.1f}" x2="{x1:.1f}" y2="{y:.1f}" stroke="#e0e0e0"/>')
            if panel == 0:
                out.append(f'<text x="{x0 - 6:.1f}" y="{y + 4:.1f}" text-anchor="end">{_label(10**d)} ms</text>')
        for d in x_dec:
            x = x_of(panel, 10**d)
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + PANEL_H}" stroke="#e0e0e0"/>')
            out.append(f'<text x="{x:.1f}" y="{TOP + PANEL_H + 16}" text-anchor="middle">{_label(10**d)}</text>')
        out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{TOP + PANEL_H + 34}" text-anchor="middle">spans</text>')
        first = sorted(by_size)[0]
        start = value(by_size[first], "total")
        if start > 0:  # slope one: linear in spans, through the total at the smallest size
            end_spans = min(10 ** x_dec[-1], 10 ** y_dec[-1] / start * first)
            out.append(
                f'<line x1="{x_of(panel, first):.1f}" y1="{y_of(start):.1f}" x2="{x_of(panel, end_spans):.1f}" '
                f'y2="{y_of(start * end_spans / first):.1f}" stroke="#9e9e9e" stroke-dasharray="5,4"/>'
            )
        for n, name in enumerate(names):
            points = [(x_of(panel, s), y_of(v)) for s in sorted(by_size) if (v := value(by_size[s], name)) > 0]
            if points:
                drawn = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
                width = 2.5 if name == "total" else 1.6
                out.append(f'<polyline fill="none" stroke="{PALETTE[n % len(PALETTE)]}" stroke-width="{width}" '
                           f'points="{drawn}"><title>{escape(tree)}: {escape(name)}</title></polyline>')  # fmt: skip
    legend_x = LEFT + 2 * PANEL_W + GAP + 16
    for n, name in enumerate([*names, "linear in spans"]):
        y = TOP + 8 + n * 18
        colour, dash = ("#9e9e9e", ' stroke-dasharray="5,4"') if n == len(names) else (PALETTE[n % len(PALETTE)], "")
        out.append(f'<line x1="{legend_x}" y1="{y}" x2="{legend_x + 18}" y2="{y}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')  # fmt: skip
        out.append(f'<text x="{legend_x + 24}" y="{y + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _label(value: float) -> str:
    """``0.1``, ``1``, ``10``, ``1k``, ``10k``, ``100k``, ``1M``: a decade's tick."""
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"
