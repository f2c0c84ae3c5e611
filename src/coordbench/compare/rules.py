"""``--fail-on`` rules: which regressions make ``coordbench compare`` (and a team's CI) fail.

A rule list is comma-separated; each rule is one of:

- ``<figure><op><number>`` or ``<figure><op><number>%``: a figure's change (head - base; with
  ``%``, relative to the base) compared with the number by ``<``, ``<=``, ``>`` or ``>=``.
  Figures: ``score``, ``answer``, ``coordination``, the parts (``participation``, ``efficiency``,
  ``parallelism``, ``bottleneck``, ``robustness``, ``information_flow``), ``critical_path_ms``,
  ``centralisation``, ``hub_share``, ``latency:<agent>`` (``latency:*``: any agent). It is checked
  overall (score, answer, coordination) and in every scenario, and fires only where the change is
  also a regression beyond the noise (:mod:`coordbench.compare.diff`): ``score<-0.05`` fails on a
  score that fell more than 0.05 and beyond its noise, never on noise.
- ``new:<evidence>``: that evidence fired in most of the head's runs of a scenario and in none of
  the base's (``new:idle_members`` or ``new:participation.idle_members``; ``new:*``: any). A new
  cause of failure is evidence too: ``new:cause`` (any), ``new:cause.failed_call`` (one rule).
- ``regression``: any regression at all (a scored figure beyond the noise, or new evidence).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from coordbench.compare.diff import FIGURES
from coordbench.compare.model import Comparison, Delta
from coordbench.errors import CoordbenchError

__all__ = ["Rule", "RuleError", "broken", "parse_rules", "worse_than"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_RULE = re.compile(  # bounded: a number of at most 12 digits either side of the point
    r"^(?P<figure>[a-z_]+(?::[^<>=\s]{1,200})?)\s*(?P<op><=|>=|<|>)\s*(?P<number>[+-]?\d{1,12}(?:\.\d{1,12})?)(?P<percent>%?)$"
)
_EVIDENCE = re.compile(r"^[a-z_]{1,64}(?:\.[a-z_]{1,64})?$|^\*$")
_MAX_RULES = 64


class RuleError(CoordbenchError, ValueError):
    """A ``--fail-on`` rule that cannot be read; the message names it and says what is allowed."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``--fail-on`` rule.

    Attributes:
        text: The rule as written.
        figure: The figure it checks (``None`` for ``new:`` and ``regression`` rules).
        op: The comparison.
        threshold: The number (a fraction when ``relative``).
        relative: The change is read relative to the base.
        evidence: The evidence a ``new:`` rule names (``*``: any).
    """

    text: str
    figure: str | None = None
    op: str = "<"
    threshold: float = 0.0
    relative: bool = False
    evidence: str | None = None

    def _matches(self, delta: Delta) -> bool:
        if self.figure is None or delta.verdict != "regression" or delta.change is None:
            return False
        if self.figure == "latency:*":
            if not delta.name.startswith("latency:"):
                return False
        elif delta.name != self.figure:
            return False
        value = delta.relative if self.relative else delta.change
        return value is not None and _OPS[self.op](value, self.threshold)

    def check(self, comparison: Comparison) -> list[str]:
        """Where this rule is broken, one sentence each (empty: nowhere)."""
        found: list[str] = []
        if self.figure == "regression" and comparison.regressed:
            return [f"{self.text}: the comparison found a regression"]
        for delta in comparison.overall:
            if self._matches(delta):
                found.append(f"{self.text}: overall {_described(delta)}")
        for scenario in comparison.scenarios:
            for delta in scenario.deltas:
                if self._matches(delta):
                    found.append(f"{self.text}: scenario {scenario.scenario}: {_described(delta)}")
            if self.evidence is not None:
                for change in [*scenario.evidence_new, *scenario.causes_new]:
                    cause = change.evidence.startswith("cause.") and self.evidence == "cause"
                    wanted = cause or self.evidence in ("*", change.evidence, change.name)
                    if wanted and change.majority:
                        agents = f" ({', '.join(change.agents)})" if change.agents else ""
                        what = "was the cause of failure" if change.evidence.startswith("cause.") else "fired"
                        found.append(
                            f"{self.text}: scenario {scenario.scenario}: {change.evidence} {what}{agents} "
                            f"in {change.runs[0]} of {change.runs[1]} run(s), never in the base"
                        )
        return found


def _described(delta: Delta) -> str:
    assert delta.change is not None and delta.base is not None and delta.head is not None  # noqa: S101 - a regression
    interval = (
        f", 95% interval {delta.interval[0]:+.3f} to {delta.interval[1]:+.3f}"
        if delta.interval is not None
        else ", one run a side: no interval"
    )
    relative = f" ({delta.relative:+.0%})" if delta.relative is not None else ""
    return f"{delta.name} {delta.base:.3f} -> {delta.head:.3f}, change {delta.change:+.3f}{relative}{interval}"


def _figure_known(figure: str) -> bool:
    return figure in FIGURES or (figure.startswith("latency:") and len(figure) > 8)


def parse_rules(text: str) -> list[Rule]:
    """Read a comma-separated rule list.

    Raises:
        RuleError: If a rule cannot be read (the message names it and lists the figures).

    Example:
        >>> [r.text for r in parse_rules("score<-0.05, new:idle_members")]
        ['score<-0.05', 'new:idle_members']
    """
    rules: list[Rule] = []
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > _MAX_RULES:
        raise RuleError(f"--fail-on: at most {_MAX_RULES} rules, got {len(parts)}")
    for part in parts:
        if not part:
            raise RuleError(f"--fail-on: empty rule in {text[:200]!r}")
        if part == "regression":
            rules.append(Rule(text=part, figure="regression"))
            continue
        if part.startswith("new:"):
            evidence = part[4:]
            if not _EVIDENCE.match(evidence):
                raise RuleError(f"--fail-on: {part[:200]!r}: new: takes an evidence name (idle_members, "
                                "participation.idle_members) or *")  # fmt: skip
            rules.append(Rule(text=part, evidence=evidence))
            continue
        found = _RULE.match(part)
        if found is None or not _figure_known(found["figure"]):
            raise RuleError(
                f"--fail-on: cannot read {part[:200]!r}: expected <figure><op><number>[%] (op <, <=, > or >=), "
                f"new:<evidence> or regression; figures: {', '.join(FIGURES)}, latency:<agent>"
            )
        relative = found["percent"] == "%"
        number = float(found["number"])
        rules.append(
            Rule(
                text=part,
                figure=found["figure"],
                op=found["op"],
                threshold=number / 100 if relative else number,
                relative=relative,
            )
        )
    return rules


def worse_than(figure: str, fall: float) -> Rule:
    """The rule ``<figure><-fall``: the figure fell by more than ``fall`` (and beyond its noise)."""
    return Rule(text=f"{figure}<{-fall:.6f}", figure=figure, op="<", threshold=-fall)


def broken(rules: list[Rule], comparison: Comparison) -> list[str]:
    """Every place any rule is broken, one sentence each (empty: the comparison passes)."""
    return [line for rule in rules for line in rule.check(comparison)]
