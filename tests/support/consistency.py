"""Checks that an assessment's report never contradicts its own figures.

:func:`contradictions` reads a ``results.json`` row and the HTML report rendered from it, and
lists every sentence or drawing that disagrees with a number: the formula line whose figures do
not give the score, a strength that denies evidence that fired, a weakness no fired part gave,
a node drawn as holding the team up that neither the bottleneck nor the parallelism part names
(or the reverse).
"""

from __future__ import annotations

import math
from html.parser import HTMLParser
from typing import Any

from coordbench.evals.coordination import OUTCOME_FLOOR, PROCESS_WEIGHTS

_CLAIMS = {  # a strength's words -> the part whose evidence it would deny
    "every member contributed": "participation",
    "no message between agents was wasted": "efficiency",
    "independent sub-tasks ran side by side": "parallelism",
    "every call succeeded and the trace is complete": "robustness",
    "every agent that passed work on added to it": "information_flow",
    "coordinated without holding the team up": "bottleneck",
}


class _Page(HTMLParser):
    """The figures of a report page, by scenario: the formula line's values and the graph's node kinds."""

    def __init__(self) -> None:
        super().__init__()
        self.scenario = ""
        self.formulas: dict[str, list[float | None]] = {}
        self.nodes: dict[str, dict[str, str]] = {}
        self._in_formula = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("data-scenario"):
            self.scenario = str(a["data-scenario"])
            self.formulas[self.scenario] = []
            self.nodes[self.scenario] = {}
        if tag == "p" and a.get("class") == "formula":
            self._in_formula += 1
        if self._in_formula and tag == "span" and "data-value" in a:
            value = a["data-value"]
            self.formulas[self.scenario].append(None if value == "none" else float(str(value)))
        if tag == "g" and a.get("data-agent") and self.scenario:
            self.nodes[self.scenario][str(a["data-agent"])] = str(a.get("class", "")).removeprefix("node ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._in_formula:
            self._in_formula -= 1


def contradictions(row: dict[str, Any], html: str) -> list[str]:
    """Every disagreement between the row's figures and what the report (and the row's own words) say."""
    page = _Page()
    page.feed(html)
    found: list[str] = []
    for entry in row["detail"]["scenarios"]:
        sid = str(entry["id"])
        coordination = (entry.get("results") or {}).get("coordination")
        if not coordination:
            continue
        parts: dict[str, dict[str, Any]] = coordination["parts"]
        fired = {name for name, part in parts.items() if part["fired"]}
        # the formula line: score = factor x quality; factor = floor + (1 - floor) x answer; quality = sum w x v
        figures = page.formulas.get(sid, [])
        answer = coordination["answer_quality"]
        head = 4 if answer is not None else 3
        if len(figures) != head + 2 * len(PROCESS_WEIGHTS):
            found.append(f"{sid}: the formula line shows {len(figures)} figures, not every part's")
        else:
            score, factor = figures[0], figures[1]
            quality = figures[head - 1]
            pairs = list(zip(figures[head::2], figures[head + 1 :: 2], strict=True))
            assert score is not None and factor is not None and quality is not None
            if not math.isclose(score, factor * quality, abs_tol=2e-3):
                found.append(f"{sid}: the formula line says {score} = {factor} x {quality}")
            expected = OUTCOME_FLOOR + (1 - OUTCOME_FLOOR) * answer if answer is not None else None
            if expected is not None and not math.isclose(factor, expected, abs_tol=2e-3):
                found.append(f"{sid}: outcome factor {factor} is not 0.4 + 0.6 x answer quality {answer}")
            total = sum((w or 0) * (v or 0) for w, v in pairs)
            if not math.isclose(total, quality, abs_tol=2e-3):
                found.append(f"{sid}: the parts' weighted sum {total:.4f} is not coordination quality {quality}")
            if not math.isclose(coordination["score"], entry["results"]["coordination"]["score"], abs_tol=1e-9):
                found.append(f"{sid}: two coordination scores")
        # strengths never deny evidence that fired; weaknesses are all evidence of fired parts
        judge = (entry.get("results") or {}).get("llm_judge") or {}
        strengths: list[str] = list(coordination.get("strengths") or []) + list(judge.get("strengths") or [])
        weaknesses: list[str] = list(coordination.get("weaknesses") or [])
        if judge.get("judge") == "rules":
            weaknesses += [w for w in judge.get("weaknesses") or [] if not w.startswith("text addressed to")]
        for strength in strengths:
            for words, part in _CLAIMS.items():
                if words in strength and part in fired:
                    found.append(f"{sid}: strength {strength!r} while {part} fired {parts[part]['fired']}")
        said = {e for name in fired for e in parts[name]["evidence"]}
        for weakness in weaknesses:
            if weakness not in said:
                found.append(f"{sid}: weakness {weakness!r} is not evidence of any part that fired")
        for name in fired:
            for evidence in parts[name]["evidence"]:
                if any(words in evidence for words in ("no evidence", "nothing to fault")):
                    found.append(f"{sid}: {name} fired yet says {evidence!r}")
        # the picture: red (held the team up) exactly where the bottleneck or parallelism part found an agent that did
        drawn = {agent for agent, kind in page.nodes.get(sid, {}).items() if kind == "limited"}
        judged = {a for name in ("bottleneck", "parallelism") if name in fired for a in parts[name]["agents"]}
        if drawn != judged:
            found.append(f"{sid}: drawn as holding the team up {sorted(drawn)}, judged {sorted(judged)}")
        if (
            entry.get("answer_quality") != answer
            or entry.get("coordination_quality") != coordination["coordination_quality"]
        ):
            found.append(f"{sid}: the scenario's answer/coordination quality differ from the coordination result")
    return found
