"""What a rule of failure attribution finds, how strongly each rule points, and the thresholds they share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from coordbench.evals.attribution.said import Said, Unit, excerpt
from coordbench.evals.evidence import MIN_SAMPLE
from coordbench.sketch import containment
from coordbench.spans import SpanData

__all__ = ["EXTRA", "IN_ANSWER", "IN_REQUEST", "LOOKED_AHEAD", "LOST", "PASSED_ON", "RECOVERED", "REPEAT", "STRENGTH",
           "Finding", "quote", "share"]  # fmt: skip

STRENGTH: Mapping[str, float] = {
    "failed_call": 0.8,
    "member_down": 0.75,
    "member_silent": 0.3,
    "failed_step": 0.45,
    "wrong_content": 0.9,
    "lost_content": 0.75,
    "relay_changed": 0.65,
    "gave_up": 0.55,
    "declined": 0.5,
    "guessed": 0.4,
    "repeats_itself": 0.45,
    "repeated_request": 0.45,
    "ended_early": 0.45,
    "unasked_member": 0.4,
    "ignored_answer": 0.35,
    "answer_origin": 0.3,
    "never_said": 0.5,
}
"""Each rule's strength at full evidence (scaled down by how much of it there is; see each rule)."""
RECOVERED = 0.4
"""Factor on a failed call whose request was retried successfully (the team recovered)."""
IN_ANSWER = 0.6
"""Factor on what the team's answer itself says (an admission there is a symptom more often than a cause)."""
IN_REQUEST = 0.7
"""Factor on words an agent first said in a request it sent (it may ask, not admit)."""
PASSED_ON = 0.5
"""Share of the units an agent heard that an utterance must hold to pass them on."""
EXTRA = 0.4
"""Factor on following words of the answer beyond the expected one when no figure differs (it may only say more)."""
LOOKED_AHEAD = 8
"""Later utterances of a caller read for an answer's uptake (bounds the work on long traces)."""
REPEAT = 0.8
"""Share of an answer found in its agent's own earlier answers above which it repeats itself."""
LOST = 0.25
"""Share of the expected answer (beyond the task) the team's answer must lack, when no figure is lost, to follow it."""


@dataclass(eq=False)
class Finding:
    """What one rule found: an agent, the span where it shows, how strongly, and why.

    Attributes:
        rule: The rule's name (:data:`STRENGTH`).
        agent: The agent it points at.
        span: The span where the fault shows (``None``: the agent left none, a member that was down).
        time: When it happened (ns), for ordering causes before symptoms.
        strength: How strongly it points at the agent, in [0, 1].
        evidence: What the trace shows, in words.
        failure: It is a visible failure (not only where the assumed-wrong answer came from).
        trail: The content units the fault carried (followed into the team's answer), if any.
    """

    rule: str
    agent: str
    span: SpanData | None
    time: int
    strength: float
    evidence: str
    failure: bool = True
    trail: frozenset[Unit] = field(default_factory=frozenset[Unit])


def quote(s: Said, around: frozenset[Unit] = frozenset()) -> str:
    """An utterance's text quoted, in bounds, around ``around``."""
    return f"“{excerpt(s.text, sorted(around))}”"


def share(part: tuple[int, ...] | None, whole: tuple[int, ...] | None, minus: tuple[int, ...] = ()) -> float | None:
    """How much of ``part`` (less ``minus``) lies in ``whole``, estimated on fingerprints (``None``: cannot tell)."""
    if not part or not whole:
        return None
    estimate = containment(part, whole, minus=minus)
    return estimate.value if estimate is not None and estimate.sample >= MIN_SAMPLE else None
