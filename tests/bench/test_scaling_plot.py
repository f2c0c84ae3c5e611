"""The cost benchmark's scaling picture: where each figure lands, worked by hand on log-log axes."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from benchmarks import cost
from benchmarks.scaling_plot import LEFT, PANEL_H, PANEL_W, TOP, scaling_svg

SVG = "{http://www.w3.org/2000/svg}"

# 100 to 100,000 spans: three decades across; 1 ms to 1,000 ms: three decades up
TREES = {
    "baseline": {100: {"graph": 1.0, "coordination": 1.0}, 100_000: {"graph": 10.0, "coordination": 990.0}},
    "today": {100: {"graph": 1.0, "coordination": 1.0}, 100_000: {"graph": 10.0, "coordination": 100.0}},
}


def _lines(svg: str) -> dict[str, list[tuple[float, float]]]:
    root = ET.fromstring(svg)  # noqa: S314 - our own output
    found: dict[str, list[tuple[float, float]]] = {}
    for line in root.iter(f"{SVG}polyline"):
        title = line.find(f"{SVG}title")
        assert title is not None and title.text is not None
        pairs = [p.split(",") for p in line.attrib["points"].split()]
        found[title.text] = [(float(x), float(y)) for x, y in pairs]
    return found


def test_each_part_lands_where_its_figures_say() -> None:
    lines = _lines(scaling_svg(TREES, ["graph", "coordination"]))
    assert set(lines) == {f"{t}: {p}" for t in TREES for p in ("graph", "coordination", "total")}
    bottom, right = TOP + PANEL_H, LEFT + PANEL_W
    # graph: 1 ms at 100 spans (bottom left) to 10 ms at 100,000 (a third of the way up: 1 of 3 decades)
    assert lines["baseline: graph"] == [(LEFT, bottom), (right, round(bottom - PANEL_H / 3, 1))]
    # today's panel is the same axes moved right by a panel and the gap between
    shift = lines["today: graph"][0][0] - LEFT
    assert shift > PANEL_W
    assert lines["today: coordination"] == [(LEFT + shift, bottom), (right + shift, round(bottom - 2 * PANEL_H / 3, 1))]
    # the total is the parts' sum: 2 ms, then 1,000 ms at the top
    assert lines["baseline: total"][1] == (right, TOP)


def test_the_guide_grows_as_the_spans_do() -> None:
    root = ET.fromstring(scaling_svg(TREES, ["graph", "coordination"]))  # noqa: S314 - our own output
    guide = next(
        g for g in root.iter(f"{SVG}line") if g.attrib.get("stroke-dasharray") and g.attrib["x1"] == f"{LEFT:.1f}"
    )
    # from the total at 100 spans (2 ms) with slope one: 1,000 ms at 50,000 spans, where the axis ends
    x1, y1, x2, y2 = (float(guide.attrib[k]) for k in ("x1", "y1", "x2", "y2"))
    assert (x1, y1) == (LEFT, round(TOP + PANEL_H - math.log10(2) / 3 * PANEL_H, 1))
    assert (x2, y2) == (round(LEFT + math.log10(500) / 3 * PANEL_W, 1), TOP)


def test_the_same_figures_give_the_same_bytes_and_none_is_refused() -> None:
    assert scaling_svg(TREES, ["graph", "coordination"]) == scaling_svg(TREES, ["graph", "coordination"])
    with pytest.raises(ValueError, match="no figures"):
        scaling_svg({"today": {}}, ["graph"])
    with pytest.raises(ValueError, match="no figures"):
        scaling_svg({"today": {100: {"graph": 0.0}}}, ["graph"])


def test_the_benchmark_draws_its_own_parts() -> None:
    figures = {size: {"spans": size, "ms": {"graph": size / 100, "coordination": size / 50}} for size in cost.SIZES}
    result = cost.CostResult(parts={"baseline": figures, "today": figures})
    lines = _lines(cost.plot(result))
    assert set(lines) == {f"{t}: {p}" for t in ("baseline", "today") for p in ("graph", "coordination", "total")}
    assert all(len(points) == len(cost.SIZES) for points in lines.values())
