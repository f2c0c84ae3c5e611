"""The outcome part (answer quality): was the task answered, and how close to the references."""

from __future__ import annotations

from coordbench.evals.base import EvalContext
from coordbench.evals.coordination.model import GOOD_REFERENCE_SIMILARITY, Part
from coordbench.evals.text import reference_similarity


def outcome_part(ctx: EvalContext) -> Part:
    """Answer quality: 0 without an answer, else 1 or its closeness to the reference texts."""
    if ctx.outcome is None:
        return Part(value=None, formula="no team outcome (ground-truth mode): not judged")
    if not ctx.outcome.succeeded:
        why = ctx.outcome.error or f"the task ended {ctx.outcome.state} without an answer"
        return Part(
            value=0.0,
            formula="0: the team did not deliver an answer",
            fired=["no_answer"],
            evidence=[f"the team did not deliver an answer ({why})"],
        )
    refs = [r for r in ctx.scenario.references if r.strip()]
    if not refs:
        return Part(value=1.0, formula="1: the team answered (no reference texts to compare with)")
    similarity = reference_similarity(ctx.outcome.output, refs)
    closeness = min(1.0, similarity / GOOD_REFERENCE_SIMILARITY)
    value = 0.5 + 0.5 * closeness
    fired = ["far_from_references"] if closeness < 1 else []
    return Part(
        value=value,
        formula=f"0.5 + 0.5 * min(1, {similarity:.3f} / {GOOD_REFERENCE_SIMILARITY}) = {value:.3f}",
        figures={"reference_similarity": similarity, "references": len(refs)},
        fired=fired,
        evidence=[f"the answer's similarity to the {len(refs)} reference text(s) is {similarity:.2f}"],
    )
