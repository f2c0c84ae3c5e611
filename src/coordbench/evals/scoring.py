"""The overall score: a weighted mean of the evaluators' scores.

``overall = Σ w_i · s_i / Σ w_i`` over the evaluators ``i`` that have a weight ``w_i > 0`` in
the configuration *and* produced a score ``s_i`` (in [0, 1]) for this scenario. Evaluators
that failed, were disabled, or have nothing to say (the text evaluator without reference
texts or message content) drop out and the remaining weights are renormalised, so a missing
part neither rewards nor punishes. With no scored evaluator at all the overall score is 0.
The default weights are graph 0.4, LLM judge 0.3, protocol 0.2, text 0.1; latency has no
weight because latencies are comparable only within one run of one system.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

__all__ = ["Score", "combine"]


class Score(BaseModel):
    """The overall score and how it was made.

    Attributes:
        overall: The weighted mean, in [0, 1].
        components: Each counted evaluator's score.
        weights: Each counted evaluator's weight after renormalisation (they sum to 1).
    """

    model_config = ConfigDict(frozen=True)

    overall: float
    components: dict[str, float]
    weights: dict[str, float]


def combine(scores: Mapping[str, float | None], weights: Mapping[str, float]) -> Score:
    """Combine evaluator scores with the configured weights.

    Args:
        scores: Score per evaluator (``None``: it has none).
        weights: Configured weight per evaluator.

    Returns:
        The score; see the module docstring for the formula.

    Example:
        >>> # text has no score: (0.4 * 1.0 + 0.3 * 0.5) / (0.4 + 0.3)
        >>> weights = {"graph": 0.4, "llm_judge": 0.3, "text": 0.1}
        >>> score = combine({"graph": 1.0, "llm_judge": 0.5, "text": None}, weights)
        >>> round(score.overall, 4), sorted(score.components)
        (0.7857, ['graph', 'llm_judge'])
    """
    counted = {
        name: min(1.0, max(0.0, float(score)))
        for name, score in sorted(scores.items())
        if score is not None and weights.get(name, 0.0) > 0
    }
    used = {name: weights[name] for name in counted}
    total = sum(used.values())
    if not math.isfinite(total) and counted:  # finite weights near the float maximum: scale them down first
        largest = max(used.values())
        used = {name: weight / largest for name, weight in used.items()}
        total = sum(used.values())
    if not counted or not total > 0:
        return Score(overall=0.0, components={}, weights={})
    normalised = {name: used[name] / total for name in counted}
    overall = sum(normalised[name] * counted[name] for name in counted)
    return Score(overall=overall, components=counted, weights=normalised)
