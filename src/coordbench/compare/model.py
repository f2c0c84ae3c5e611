"""What a comparison of two runs says: its models (``coordbench compare --json`` is their JSON)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coordbench.graph.metrics.result import canonical_json

__all__ = ["Comparison", "Delta", "EvidenceChange", "GraphChange", "PathChange", "ScenarioComparison", "Verdict"]

Verdict = Literal["regression", "improvement", "unchanged"]


class Delta(BaseModel):
    """One figure, base against head.

    Attributes:
        name: The figure (``score``, ``answer``, ``coordination``, a part's name, ``critical_path_ms``,
            ``centralisation``, ``hub_share``, ``latency:<agent>``).
        base: Its mean over the base runs (``None``: not there).
        head: Its mean over the head runs.
        change: ``head - base``.
        relative: ``change / base`` (``None`` when ``base`` is 0 or missing).
        interval: 95% bootstrap interval of the change; ``None`` with one run on a side.
        p_value: Two-sided permutation p-value; ``None`` with one run on a side.
        runs: Runs with the figure on each side.
        higher_is_better: Which way is better.
        verdict: ``regression`` or ``improvement`` when the change is beyond the noise (see
            :mod:`coordbench.compare.diff`), else ``unchanged``.
        scored: The figure is one the verdict of a comparison rests on (latencies are shown, not judged).
    """

    model_config = ConfigDict(frozen=True)

    name: str
    base: float | None
    head: float | None
    change: float | None
    relative: float | None = None
    interval: tuple[float, float] | None = None
    p_value: float | None = None
    runs: tuple[int, int] = (0, 0)
    higher_is_better: bool = True
    verdict: Verdict = "unchanged"
    scored: bool = True


class EvidenceChange(BaseModel):
    """Evidence that fired on one side and not on the other.

    Attributes:
        evidence: ``part.name`` (``participation.idle_members``).
        runs: In how many of that side's runs it fired, and out of how many (``[2, 3]``).
        agents: The agents the part named where it fired, sorted.
    """

    model_config = ConfigDict(frozen=True)

    evidence: str
    runs: tuple[int, int]
    agents: list[str] = Field(default_factory=list[str])

    @property
    def name(self) -> str:
        """The evidence's name without its part (``idle_members``)."""
        return self.evidence.split(".", 1)[-1]

    @property
    def majority(self) -> bool:
        """It fired in more than half of its side's runs (once in one run counts)."""
        return self.runs[0] * 2 > self.runs[1]


class GraphChange(BaseModel):
    """How the agent graph changed (over all runs of each side).

    Attributes:
        agents_added: Agents only the head's graphs hold.
        agents_gone: Agents only the base's graphs hold.
        edges_added: ``caller -> callee`` pairs only the head's graphs hold.
        edges_gone: Pairs only the base's graphs hold.
        hub_base: The busiest agent of the base (most runs; ties by name).
        hub_head: The busiest agent of the head.
    """

    model_config = ConfigDict(frozen=True)

    agents_added: list[str] = Field(default_factory=list[str])
    agents_gone: list[str] = Field(default_factory=list[str])
    edges_added: list[str] = Field(default_factory=list[str])
    edges_gone: list[str] = Field(default_factory=list[str])
    hub_base: str | None = None
    hub_head: str | None = None


class PathChange(BaseModel):
    """How the critical path changed: which calls joined it and which left it (``caller -> callee``).

    A call counts as on a side's path when it is on the path of most of that side's runs.
    """

    model_config = ConfigDict(frozen=True)

    joined: list[str] = Field(default_factory=list[str])
    left: list[str] = Field(default_factory=list[str])


class ScenarioComparison(BaseModel):
    """One scenario, base against head.

    Attributes:
        scenario: The scenario's id (``base-id vs head-id`` when two single traces were paired).
        runs: Evaluated runs on each side.
        deltas: The figures, in a fixed order: score, answer, coordination, the parts, the
            critical path, centralisation, the hub's share, then each agent's latency.
        evidence_new: Evidence that fired in the head and in no base run.
        evidence_cleared: Evidence that fired in the base and in no head run.
        causes_new: Causes of failure (``cause.<rule>``, with the agent attribution named) found in
            the head's failed runs and in no base run: a run that now fails, or fails another way.
        graph: How the agent graph changed.
        critical_path: How the critical path changed.
        trace_ids: The traces of each side's runs (for the waterfalls).
    """

    model_config = ConfigDict(frozen=True)

    scenario: str
    runs: tuple[int, int]
    deltas: list[Delta]
    evidence_new: list[EvidenceChange] = Field(default_factory=list[EvidenceChange])
    evidence_cleared: list[EvidenceChange] = Field(default_factory=list[EvidenceChange])
    causes_new: list[EvidenceChange] = Field(default_factory=list[EvidenceChange])
    graph: GraphChange = Field(default_factory=GraphChange)
    critical_path: PathChange = Field(default_factory=PathChange)
    trace_ids: tuple[list[str], list[str]] = ([], [])

    def delta(self, name: str) -> Delta | None:
        """The figure called ``name``, if it is there."""
        return next((d for d in self.deltas if d.name == name), None)

    @property
    def regressions(self) -> list[Delta]:
        """The scored figures that got worse beyond the noise."""
        return [d for d in self.deltas if d.scored and d.verdict == "regression"]


class Comparison(BaseModel):
    """Two runs compared: overall and per scenario.

    Attributes:
        base: What the base was (paths or trace ids).
        head: What the head was.
        overall: The overall figures (score, answer, coordination) over each side's runs.
        scenarios: Each scenario both sides ran, by id order.
        only_base: Scenarios only the base ran.
        only_head: Scenarios only the head ran.
        notes: What the reader must know (no interval with one run a side, say).
    """

    model_config = ConfigDict(frozen=True)

    base: str
    head: str
    overall: list[Delta]
    scenarios: list[ScenarioComparison]
    only_base: list[str] = Field(default_factory=list[str])
    only_head: list[str] = Field(default_factory=list[str])
    notes: list[str] = Field(default_factory=list[str])

    @property
    def regressed(self) -> bool:
        """Some scored figure, overall or of a scenario, got worse beyond the noise, or new evidence fired.

        New evidence (or a new cause of failure) counts when it was found in most of the head's runs.
        """
        return any(d.scored and d.verdict == "regression" for d in self.overall) or any(
            s.regressions or any(e.majority for e in [*s.evidence_new, *s.causes_new]) for s in self.scenarios
        )

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, floats at 12 digits): the same inputs give the same bytes."""
        return canonical_json(self.model_dump(mode="json"))

    def wire(self) -> dict[str, Any]:
        """The comparison as plain data."""
        return json.loads(self.to_json())
