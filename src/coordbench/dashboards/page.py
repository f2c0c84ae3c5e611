"""The coordination dashboard's panels drawn from any Prometheus, as one self-contained page.

For where Grafana is not at hand (a CI artifact, a document, this repository's docs): every
panel of :mod:`coordbench.dashboards.grafana` is queried over a time range
(``/api/v1/query_range``) and drawn in the report's style. Time series are lines; a bar-gauge
panel shows each series' last value; the heatmap shows the range's last distribution, a bar
per bucket. Series and label values come from the traces (team names...): they reach the page
only through the templates, which escape them.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from markupsafe import Markup

from coordbench.dashboards.grafana import PANELS, Panel
from coordbench.report.templates import render

__all__ = ["PanelData", "Series", "chart_svg", "query_panels", "render_dashboard"]

PALETTE = ("#3b6ea8", "#c0392b", "#2e7d32", "#a86f00", "#7b4ea8", "#00838f", "#6d4c41", "#546e7a")
WIDTH, HEIGHT, LEFT, TOP, RIGHT, BOTTOM = 500, 220, 52, 10, 12, 24
MAX_SERIES = 12


@dataclass(frozen=True)
class Series:
    """One series of a panel: its legend and its (unix seconds, value) points."""

    name: str
    points: tuple[tuple[float, float], ...]


@dataclass
class PanelData:
    """A panel and what its queries returned."""

    panel: Panel
    series: list[Series] = field(default_factory=list[Series])
    error: str | None = None


def _concrete(expr: str, step: float) -> str:
    interval = f"{max(60, int(4 * step))}s"
    return expr.replace("$team", ".*").replace("$__rate_interval", interval)


def _legend(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), template) or "value"


def query_panels(
    prometheus: str, *, start: float, end: float, step: float = 15.0, timeout: float = 30.0
) -> list[PanelData]:
    """Every panel's series between ``start`` and ``end`` (unix seconds) from the Prometheus at ``prometheus``.

    A query that fails is reported on its panel (``error``) rather than raised.
    """
    import httpx

    out: list[PanelData] = []
    with httpx.Client(base_url=prometheus.rstrip("/"), timeout=timeout) as client:
        for panel in PANELS:
            data = PanelData(panel)
            for expr, legend in panel.exprs:
                params = {"query": _concrete(expr, step), "start": start, "end": end, "step": step}
                try:
                    answer = client.get("/api/v1/query_range", params=params)
                    document: Any = answer.json()
                except (httpx.HTTPError, ValueError) as exc:
                    data.error = f"{type(exc).__name__}: {exc}"
                    continue
                if answer.status_code != 200 or document.get("status") != "success":
                    data.error = str(document.get("error") or answer.status_code)
                    continue
                for result in cast("list[dict[str, Any]]", document["data"]["result"]):
                    points = tuple((float(t), float(v)) for t, v in result["values"] if math.isfinite(float(v)))
                    if points:
                        data.series.append(Series(_legend(legend, result["metric"]), points))
            out.append(data)
    return out


def _format(value: float, unit: str) -> str:
    if unit == "percentunit":
        return f"{value:.0%}"
    if unit == "s":
        return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "ops":
        return f"{value:,.0f}/s" if value >= 100 else f"{value:.3g}/s"
    return f"{value:,.3g}"


def _ticks(low: float, high: float, unit: str) -> list[dict[str, Any]]:
    plot = HEIGHT - TOP - BOTTOM
    ticks: list[dict[str, Any]] = []
    for n in range(5):
        value = low + (high - low) * n / 4
        ticks.append({"y": round(TOP + plot - plot * n / 4, 1), "text": _format(value, unit)})
    return ticks


def _clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(seconds))


def _lines(data: PanelData, start: float, end: float, x_text: Callable[[float], str]) -> dict[str, Any]:
    series = data.series[:MAX_SERIES]
    values = [v for s in series for _, v in s.points]
    low = 0.0
    high = 1.0 if data.panel.bounded else max([*values, 1e-9]) * 1.1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    span = max(end - start, 1e-9)
    lines: list[dict[str, Any]] = []
    for n, s in enumerate(series):
        xs = [LEFT + plot_w * (t - start) / span for t, _ in s.points]
        ys = [TOP + plot_h - plot_h * (min(v, high) - low) / (high - low) for _, v in s.points]
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))
        lines.append({"name": s.name, "colour": PALETTE[n % len(PALETTE)], "points": points})
    x_ticks = [
        {"x": LEFT + plot_w * f, "text": x_text(start + span * f), "anchor": anchor}
        for f, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end"))
    ]
    y_ticks = _ticks(low, high, data.panel.unit) if lines else []
    return {"lines": lines, "bars": [], "y_ticks": y_ticks, "x_ticks": x_ticks}


def _bars(entries: Sequence[tuple[str, float]], unit: str) -> dict[str, Any]:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top = max([v for _, v in entries] + [1e-9])
    height = plot_h / max(len(entries), 1)
    bars: list[dict[str, Any]] = []
    for n, (name, value) in enumerate(entries):
        width = plot_w * value / top
        y = TOP + n * height
        bars.append({
            "name": name, "colour": PALETTE[n % len(PALETTE)], "x": LEFT, "y": round(y + 2, 1),
            "width": round(width, 1), "height": round(max(height - 4, 1), 1),
            "label": f"{name}: {_format(value, unit)}", "label_x": LEFT + 4, "label_y": round(y + height / 2 + 4, 1),
            "anchor": "start",
        })  # fmt: skip
    return {"lines": [], "bars": bars, "y_ticks": [], "x_ticks": []}


def _last(series: Series) -> float:
    return series.points[-1][1]


def _heatmap(data: PanelData) -> dict[str, Any]:
    """The last distribution: each bucket's own count (cumulative ``le`` counts differenced)."""
    cumulative = sorted(
        ((float("inf") if s.name == "+Inf" else float(s.name), _last(s)) for s in data.series if s.name),
        key=lambda item: item[0],
    )
    entries: list[tuple[str, float]] = []
    previous_bound, previous = 0.0, 0.0
    for bound, count in cumulative:
        label = f"{previous_bound:g}-{bound:g}" if math.isfinite(bound) else f"> {previous_bound:g}"
        entries.append((label, max(0.0, count - previous)))
        previous_bound, previous = bound, count
    return _bars(entries, "short")


def chart_svg(
    data: PanelData, start: float, end: float, x_text: Callable[[float], str] | None = None
) -> tuple[Markup, list[dict[str, Any]]]:
    """One panel drawn from its data, and its legend (name, colour, last value).

    Args:
        data: The panel and its series.
        start: Where the x axis starts (unix seconds, unless ``x_text`` reads it otherwise).
        end: Where it ends.
        x_text: How an x value is written under the axis (default: the time of day, UTC).
    """
    panel = data.panel
    if panel.kind == "heatmap":
        geometry = _heatmap(data)
        legend: list[dict[str, Any]] = []
    elif panel.kind == "bargauge":
        ranked = sorted(((s.name, _last(s)) for s in data.series), key=lambda e: -e[1])[:MAX_SERIES]
        geometry = _bars(ranked, panel.unit)
        legend = []
    else:
        geometry = _lines(data, start, end, x_text or _clock)
        legend = [
            {"name": s.name, "colour": PALETTE[n % len(PALETTE)], "last": _format(_last(s), panel.unit)}
            for n, s in enumerate(data.series[:MAX_SERIES])
        ]
    svg = render(
        "chart.svg.j2",
        title=panel.title,
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        top=TOP,
        plot_width=WIDTH - LEFT - RIGHT,
        plot_height=HEIGHT - TOP - BOTTOM,
        **geometry,
    )
    return svg, legend


def render_dashboard(panels: Sequence[PanelData], *, start: float, end: float, source: str) -> str:
    """The page: the dashboard's rows and panels, each drawn from its data."""
    from coordbench.report.html import page_html

    rows: list[dict[str, Any]] = []
    for row in dict.fromkeys(p.panel.row for p in panels):
        drawn: list[dict[str, Any]] = []
        for data in (p for p in panels if p.panel.row == row):
            svg, legend = chart_svg(data, start, end)
            description = data.panel.description + (f" (query failed: {data.error})" if data.error else "")
            drawn.append({"title": data.panel.title, "description": description, "svg": svg, "legend": legend,
                          "series_count": len(data.series)})  # fmt: skip
        rows.append({"name": row, "panels": drawn})
    subtitle = f"From {source}, {_clock(start)} to {_clock(end)} UTC: the panels of dashboards/grafana, drawn here."
    body = render("dashboard.html.j2", title="coordbench: coordination", subtitle=subtitle, rows=rows)
    return page_html("coordbench: coordination dashboard", body)
