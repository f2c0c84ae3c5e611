"""The coordination score: the parts combined, strengths and weaknesses, and the evaluator."""

from __future__ import annotations

from typing import Any

from coordbench.evals.base import TIER_JUDGEMENT, EvalContext, Evaluator
from coordbench.evals.coordination.bottleneck import bottleneck_part, hubs_of
from coordbench.evals.coordination.efficiency import efficiency_part
from coordbench.evals.coordination.information import information_part
from coordbench.evals.coordination.model import OUTCOME_FLOOR, PROCESS_WEIGHTS, CoordinationResult, Part, names
from coordbench.evals.coordination.outcome import outcome_part
from coordbench.evals.coordination.parallelism import parallelism_part
from coordbench.evals.coordination.participation import members_of, needs_of, participation_part, unasked_members
from coordbench.evals.coordination.robustness import robustness_part
from coordbench.evals.evidence import (
    TeamTrace,
)

_STRENGTHS = {
    "participation": "every member contributed",
    "efficiency": "no message between agents was wasted (failed, duplicated, late or relayed)",
    "parallelism": "independent sub-tasks ran side by side",
    "robustness": "every call succeeded and the trace is complete",
    "information_flow": "every agent that passed work on added to it",
}


def assess_coordination(ctx: EvalContext) -> CoordinationResult:
    """Score the team's coordination in ``ctx`` (see the module docstring for the formulas)."""
    trace = ctx.team_trace()
    members = members_of(ctx)
    hubs = hubs_of(trace)
    needs = needs_of(ctx, trace, members)
    parts: dict[str, Part] = {
        "outcome": outcome_part(ctx),
        "participation": participation_part(trace, members, needs),
        "efficiency": efficiency_part(trace, ctx.unreachable, unasked_members(needs, members, trace, ctx.unreachable)),
        "parallelism": parallelism_part(trace),
        "bottleneck": bottleneck_part(trace, hubs),
        "robustness": robustness_part(trace, ctx),
        "information_flow": information_part(trace),
    }
    quality = sum(PROCESS_WEIGHTS[name] * (parts[name].value or 0.0) for name in PROCESS_WEIGHTS)
    confidence = sum(PROCESS_WEIGHTS[name] * parts[name].confidence for name in PROCESS_WEIGHTS)
    outcome = parts["outcome"].value
    outcome_factor = 1.0 if outcome is None else OUTCOME_FLOOR + (1 - OUTCOME_FLOOR) * outcome
    score = outcome_factor * quality

    losses: list[tuple[float, str, str]] = []
    if outcome is not None and outcome < 1:
        losses.append((quality * (1 - outcome_factor), "outcome", parts["outcome"].evidence[0]))
    for name, weight in PROCESS_WEIGHTS.items():
        part = parts[name]
        if part.fired:
            loss = outcome_factor * weight * (1 - (part.value or 0.0))
            losses.extend((loss, name, text) for text in part.evidence[:2])
    losses.sort(key=lambda item: (-item[0], item[1]))
    return CoordinationResult(
        score=score,
        answer_quality=outcome,
        coordination_quality=quality,
        outcome_factor=outcome_factor,
        confidence=confidence,
        parts=parts,
        hubs=hubs,
        members=members,
        fired=[f"{name}.{f}" for name, part in parts.items() for f in part.fired],
        strengths=_strengths(parts, trace, hubs),
        weaknesses=list(dict.fromkeys(text for _, _, text in losses)),
    )


def _strengths(parts: dict[str, Part], trace: TeamTrace, hubs: list[str]) -> list[str]:
    """What went well, said only of parts at full marks with something to judge (never beside a fault it denies)."""
    strengths: list[str] = []
    if parts["outcome"].value == 1.0:
        strengths.append("the team answered the task")
    relays_anywhere = any(c.relay for c in trace.calls)
    for name, text in _STRENGTHS.items():
        part = parts[name]
        if part.value != 1.0 or part.fired or part.formula.startswith("1: no"):
            continue
        if name == "efficiency" and relays_anywhere:
            continue  # a relay on the host's own call is no waste between agents, but the claim would read as denial
        if name == "participation" and part.figures.get("not_picked"):
            text = "every member the team picked contributed"
        strengths.append(text)
    if hubs and not parts["bottleneck"].fired and not parts["outcome"].fired:
        strengths.append(f"hub {names(hubs)} coordinated without holding the team up")
    return strengths


class CoordinationEvaluator(Evaluator):
    """How well the team coordinated, judged from evidence in the trace (the score's main part)."""

    name = "coordination"
    tier = TIER_JUDGEMENT
    blocking = True  # computes only: run on a worker thread
    description = (
        "Coordination quality from trace evidence: outcome, participation, efficiency, parallelism, "
        "real bottlenecks, robustness, information flow."
    )

    async def evaluate(self, ctx: EvalContext) -> CoordinationResult:
        """Assess the scenario's trace."""
        return assess_coordination(ctx)

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """The coordination score."""
        return result.score if isinstance(result, CoordinationResult) else None
