"""A comparison in words: Markdown (a CI job summary) and rich tables (the console)."""

from __future__ import annotations

import re

from rich.console import Group
from rich.table import Table
from rich.text import Text

from coordbench.compare.model import Comparison, Delta, ScenarioComparison

__all__ = ["facts", "markdown", "tables", "verdict_text"]

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>&])")
"""What could make text markup: HTML (``<``, ``>``, ``&``), links and images (``[``), code, emphasis, table cells."""


def _md(text: str) -> str:
    """``text`` inert in Markdown and HTML: every character either could read is escaped."""
    return _MARKDOWN_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;", "&": "&amp;"}.get(m[1], "\\" + m[1]), text)


def _num(value: float | None, *, time: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if time else f"{value:.3f}"


def _change(delta: Delta) -> str:
    if delta.change is None:
        return "-"
    time = delta.name.endswith("_ms") or delta.name.startswith("latency:")
    relative = f" ({delta.relative:+.0%})" if time and delta.relative is not None else ""
    return (f"{delta.change:+.1f}" if time else f"{delta.change:+.3f}") + relative


def _interval(delta: Delta) -> str:
    if delta.interval is None:
        return "n/a" if delta.change is not None else "-"
    time = delta.name.endswith("_ms") or delta.name.startswith("latency:")
    low, high = delta.interval
    return f"{low:+.1f} to {high:+.1f}" if time else f"{low:+.3f} to {high:+.3f}"


def verdict_text(delta: Delta) -> str:
    """The delta's verdict in words: ``only in head`` / ``only in base`` for a figure one side lacks."""
    if delta.base is None and delta.head is None:
        return "not measured"
    return "only in head" if delta.base is None else "only in base" if delta.head is None else delta.verdict


def _cells(delta: Delta) -> list[str]:
    time = delta.name.endswith("_ms") or delta.name.startswith("latency:")
    verdict = verdict_text(delta)
    verdict = verdict if delta.scored else f"{verdict}*"
    return [delta.name, _num(delta.base, time=time), _num(delta.head, time=time), _change(delta), _interval(delta),
            verdict]  # fmt: skip


_HEADER = ["figure", "base", "head", "change", "95% interval", "verdict"]
_STARRED = "* described, not scored: the shape and the times are shown, never a regression on their own."


def facts(scenario: ScenarioComparison) -> list[str]:
    """The scenario's changes in words: evidence, graph, critical path."""
    lines: list[str] = []
    for label, changes in (("new evidence", scenario.evidence_new), ("cleared evidence", scenario.evidence_cleared),
                           ("new cause of failure", scenario.causes_new)):  # fmt: skip
        for change in changes:
            agents = f" ({', '.join(change.agents)})" if change.agents else ""
            lines.append(f"{label}: {change.evidence}{agents}, in {change.runs[0]} of {change.runs[1]} run(s)")
    graph = scenario.graph
    for label, names in (("agents added", graph.agents_added), ("agents gone", graph.agents_gone),
                         ("calls added", graph.edges_added), ("calls gone", graph.edges_gone)):  # fmt: skip
        if names:
            lines.append(f"{label}: {', '.join(names)}")
    if graph.hub_base != graph.hub_head:
        lines.append(f"busiest agent: {graph.hub_base or 'none'} -> {graph.hub_head or 'none'}")
    path = scenario.critical_path
    if path.joined:
        lines.append(f"joined the critical path: {', '.join(path.joined)}")
    if path.left:
        lines.append(f"left the critical path: {', '.join(path.left)}")
    return lines


def _headline(comparison: Comparison) -> str:
    return "regression" if comparison.regressed else "no regression"


def markdown(comparison: Comparison, failures: list[str] | None = None) -> str:
    """The comparison as Markdown (GitHub's job summary renders it); every name from the data is escaped."""
    out = [
        "## coordbench: coordination compared",
        "",
        f"Base: {_md(comparison.base)} · head: {_md(comparison.head)} · **{_headline(comparison)}**",
        "",
    ]

    def table(deltas: list[Delta]) -> None:
        out.append("| " + " | ".join(_HEADER) + " |")
        out.append("|" + "---|" * len(_HEADER))
        out.extend("| " + " | ".join(_md(c) for c in _cells(d)) + " |" for d in deltas)
        out.append("")

    out.append("### Overall")
    table(comparison.overall)
    for scenario in comparison.scenarios:
        out.append(f"### Scenario {_md(scenario.scenario)} ({scenario.runs[0]} vs {scenario.runs[1]} runs)")
        table(scenario.deltas)
        out.extend(f"- {_md(line)}" for line in facts(scenario))
        out.append("")
    for label, names in (("Only in the base", comparison.only_base), ("Only in the head", comparison.only_head)):
        if names:
            out.append(f"{label}: {_md(', '.join(names))}")
    out.append(_md(_STARRED))
    out.extend(f"> {_md(note)}" for note in comparison.notes)
    if failures:
        out += ["", "### Failed rules", *(f"- {_md(line)}" for line in failures)]
    return "\n".join(out).rstrip() + "\n"


def tables(comparison: Comparison) -> Group:
    """The comparison as rich renderables: one table overall, one per scenario, then the facts.

    Broken ``--fail-on`` rules are not in it: the command says them on stderr.
    """
    parts: list[Table | Text] = [
        Text(f"base {comparison.base}\nhead {comparison.head}\n{_headline(comparison)}", style="bold")
    ]

    def table(title: str, deltas: list[Delta]) -> Table:
        shown = Table(title=title, title_justify="left")
        measured = any(d.interval is not None for d in deltas)  # else the note says why there is none
        for name in _HEADER:
            if name != "95% interval" or measured:
                shown.add_column(name, justify="left" if name in ("figure", "verdict", "95% interval") else "right",
                                 no_wrap=name != "figure")  # fmt: skip
        for delta in deltas:
            style = {"regression": "red", "improvement": "green"}.get(delta.verdict) if delta.scored else None
            cells = _cells(delta)
            shown.add_row(*(cells if measured else cells[:4] + cells[5:]), style=style)
        return shown

    parts.append(table("overall", comparison.overall))
    for scenario in comparison.scenarios:
        parts.append(table(f"scenario {scenario.scenario} ({scenario.runs[0]} vs {scenario.runs[1]} runs)",
                           scenario.deltas))  # fmt: skip
        parts.extend(Text(f"  {line}") for line in facts(scenario))
    for label, names in (("only in the base", comparison.only_base), ("only in the head", comparison.only_head)):
        if names:
            parts.append(Text(f"{label}: {', '.join(names)}"))
    parts.append(Text(_STARRED))
    parts.extend(Text(note, style="yellow") for note in comparison.notes)
    return Group(*parts)
