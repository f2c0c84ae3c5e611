"""The coordination score's model: its parts and result, the constants the formulas use, the helpers parts share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.evidence import (
    TeamCall,
)

PROCESS_WEIGHTS: dict[str, float] = {
    "participation": 0.22,
    "efficiency": 0.18,
    "parallelism": 0.14,
    "bottleneck": 0.10,
    "robustness": 0.16,
    "information_flow": 0.20,
}
"""Weights of the coordination parts (they sum to 1)."""


OUTCOME_FLOOR = 0.4
"""The outcome factor when the team gave no answer: the score cannot reach 0.4."""


GOOD_REFERENCE_SIMILARITY = 0.4
"""Similarity to the references at which an answer counts as fully matching them."""


OWN_SHARE_NOTE = (
    "An agent's own share (its requests' time outside the work it waited for) is reported, not scored: "
    "it is the agent's own processing, and beside two CPU-bound processes the same star's coordinator "
    "went from 0.25 to 0.43 of its time."
)
"""Why ``<agent>.own_share`` is a figure of the bottleneck part and never a penalty."""


INCOMPLETE_FACTOR = 0.75
"""Robustness factor for a trace that was incomplete when evaluated."""


NOISE_FLOOR = 0.05
"""Share of serialisation (and of queueing) no timing evidence is read from: what a busy machine adds."""


UNNEEDED_IDLE = 0.5
"""What an idle member the trace shows no need for costs, in members (a needed one costs 1)."""


ECHO_NOVELTY = 0.1
"""An answer adding less than this share of new word trigrams to its request only echoes it."""


UPTAKE = 0.25
"""Share of what its callees added an agent's answer must carry to have taken their work up."""


REPEAT = 0.8
"""Share of an answer found in the agent's own earlier answers above which it repeats itself."""


LISTED = 8


class Part(BaseModel):
    """One part of the coordination score.

    Attributes:
        value: In [0, 1]; 1 when there is nothing to fault. ``None``: cannot be judged (the
            outcome in ground-truth mode).
        weight: Its weight in coordination quality (``None`` for the outcome).
        confidence: How far its evidence was established, in [0, 1]: 1 when observed; lower
            where it rests on fingerprints or gave a dependency the benefit of the doubt.
        formula: How the value was computed, with the figures filled in.
        figures: The numbers in the formula.
        fired: Names of the evidence that lowered it.
        evidence: What the trace shows, in words naming the agents and calls.
        agents: The agents behind the evidence, sorted.
        calls: Span ids of the calls behind the evidence (at most eight), by start time.
    """

    model_config = ConfigDict(frozen=True)

    value: float | None
    weight: float | None = None
    confidence: float = 1.0
    formula: str
    figures: dict[str, float | int] = Field(default_factory=dict[str, float | int])
    fired: list[str] = Field(default_factory=list[str])
    evidence: list[str] = Field(default_factory=list[str])
    agents: list[str] = Field(default_factory=list[str])
    calls: list[str] = Field(default_factory=list[str])


class CoordinationResult(BaseModel):
    """The coordination score of a scenario and its parts.

    Attributes:
        score: ``outcome_factor * coordination_quality``, in [0, 1].
        answer_quality: The outcome part (``None`` in ground-truth mode): how good the answer was.
        coordination_quality: The weighted mean of the coordination parts: how well the agents
            worked together, apart from the answer.
        outcome_factor: ``0.4 + 0.6 * answer_quality`` (1 without a team outcome).
        confidence: The parts' confidences, weighted as the parts are.
        parts: Each part, by name.
        hubs: Agents that delegated to, or served, two or more agents.
        members: The members the participation is counted over.
        fired: Every piece of evidence that lowered the score, by part.
        strengths: What went well, from parts that scored full marks with something to judge.
        weaknesses: What lowered the score, largest loss first.
    """

    model_config = ConfigDict(frozen=True)

    score: float
    answer_quality: float | None = None
    coordination_quality: float
    outcome_factor: float
    confidence: float = 1.0
    parts: dict[str, Part]
    hubs: list[str]
    members: list[str]
    fired: list[str]
    strengths: list[str]
    weaknesses: list[str]


def names(agents: Iterable[str]) -> str:
    """Agent names, sorted, once each, comma-separated."""
    return ", ".join(sorted(set(agents)))


def call_ids(calls: Iterable[TeamCall]) -> list[str]:
    """The ids of the first :data:`LISTED` calls (what a part names as its evidence)."""
    return [c.id for c in calls][:LISTED]


def floored(share: float) -> float:
    """``share`` with the noise floor taken off and the rest scaled back to [0, 1]."""
    return max(0.0, share - NOISE_FLOOR) / (1.0 - NOISE_FLOOR)


def tally(counter: Counter[str]) -> str:
    """``a, b *3``: each kind once, with its count when it is more than one."""
    return ", ".join(f"{k} *{n}" if n > 1 else k for k, n in sorted(counter.items()))


def call_order(c: TeamCall) -> tuple[int, str]:
    """Calls in the order they started (ties by id)."""
    return c.span.start_time_unix_nano, c.id
