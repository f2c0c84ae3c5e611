"""What failure attribution says about a run: the agent, the decisive span, the chain of evidence, the others."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Attribution", "Candidate", "Link"]


class Link(BaseModel):
    """One step of the chain of evidence, from the decisive span to the failure.

    Attributes:
        span_id: The span that shows it (``None``: the agent left none, a member that was down).
        agent: The agent whose span it is.
        what: What it shows, in words: the text or figure, quoted.
    """

    model_config = ConfigDict(frozen=True)

    span_id: str | None
    agent: str
    what: str


class Candidate(BaseModel):
    """An agent the evidence points at, with what points at it.

    Attributes:
        agent: The agent.
        span_id: Its span the evidence points at first.
        score: How strongly the evidence points at it, in [0, 1] (the rules' weights combined).
        rules: The rules that fired on it, strongest first.
        evidence: What each rule found, in words.
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    span_id: str | None
    score: float
    rules: list[str]
    evidence: list[str]


class Attribution(BaseModel):
    """Which agent, and which step, made a run fail (``docs/attribution.md``).

    Attributes:
        agent: The responsible agent (``None`` when none can be named; ``reason`` says why).
        span_id: The decisive span: the step whose correction would most likely have saved the
            run (16 hex digits; ``None`` when none).
        rule: The rule that found the decisive span.
        confidence: How far the finding can be trusted, in [0, 1].
        ranker: ``rules``, or ``model:<name>`` when a model ranked the candidates the rules proposed.
        failure_visible: The trace shows a failure (an error, a wrong or lost answer against the
            expected one, an agent that gave up...); otherwise the run was only assumed to fail.
        reason: The finding, or why there is none, in words.
        evidence: The chain from the decisive span to the failure.
        candidates: Every agent the evidence points at, the responsible one first.
    """

    model_config = ConfigDict(frozen=True)

    agent: str | None
    span_id: str | None
    rule: str | None = None
    confidence: float
    ranker: str = "rules"
    failure_visible: bool
    reason: str
    evidence: list[Link] = Field(default_factory=list[Link])
    candidates: list[Candidate] = Field(default_factory=list[Candidate])
