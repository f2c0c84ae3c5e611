"""The coordination score: how well the team worked together, judged from evidence in the trace.

The agent graph's shape (star, chain, mesh...) is described by the graph evaluator and never
scored by itself: a hub that delegates in parallel and merges the answers is doing its job.
The score instead rests on what the trace shows the team *did*, in parts that each have a
formula, a confidence, and the calls and agents behind them (``docs/scoring.md`` has the
worked examples)::

    score                = outcome_factor * coordination_quality
    outcome_factor       = 0.4 + 0.6 * answer_quality          (1 when there is no team outcome)
    coordination_quality = 0.22 participation + 0.18 efficiency + 0.14 parallelism
                           + 0.10 bottleneck + 0.16 robustness + 0.20 information_flow

Two numbers, two meanings: **answer quality** (the outcome part) says how good the team's
answer was; **coordination quality** says how well the agents worked together to get it. No
part multiplies the others: a member that did nothing costs its share of participation, not
the whole score.

- **outcome** (answer quality): 0 when the team gave no answer; else 1, or
  ``0.5 + 0.5 * min(1, s / 0.4)`` when the scenario has reference texts, ``s`` the answer's
  similarity to them (mean of TF-IDF cosine and ROUGE-L). With no answer the score is at most
  0.4, below any passing mark.
- **participation**: ``1 - (needed idle + 0.5 * other idle) / members``. A member contributed
  when it answered a useful call (or, never called itself, made one). An idle member counts
  fully when the trace shows the team needed it (it was called, it was down, or the task or a
  message between agents named it as a word; a peers directory names nobody), half otherwise:
  declared but not asked for.
- **efficiency**: useful calls / (the agents' calls + members that were down + needed members
  no agent ever called: work the team could not, or did not, hand out). Not
  useful: failed, duplicate (the same request as an earlier successful one), late (its
  result arrived after the request it was for had been answered), into a relay that added
  nothing, or unverified.
- **parallelism**: ``1 - max(0, s - 0.05) / 0.95`` with ``s = Σ serialisation / calls`` over
  the work calls of every request: a call's serialisation is how far it ran after a call of
  the same request it did not depend on (1 one after the other, 0 side by side, a fifth of the
  shorter call forgiven as jitter: :func:`~coordbench.evals.evidence.serialisation`); the
  first 5% is the noise floor. A hub that serialised its calls is named here.
- **bottleneck**: ``1 - worst hub penalty``; a hub (an agent delegating to, or serving, two or
  more agents) is penalised only by evidence that it held the team up: requests from different
  callers queued on it (the share of its concurrent requests it served strictly one after the
  other, :mod:`.bottleneck`; beyond the same 5% floor), or failures concentrate on it (two or more of
  its requests failed: its failed share). A hub that ran independent calls one after another is
  named by parallelism. Each delegating agent's own share of its requests' time is reported as
  a figure (``<agent>.own_share``) and not scored (:data:`OWN_SHARE_NOTE`).
- **robustness**: ``1 - (failed + unverified + down) / (calls + down)``, ``* 0.75`` if the
  trace is incomplete; unverified: calls whose callee's span never arrived and requests whose
  caller's span never did; down: members the assessor could not reach.
- **information_flow**: the mean of what can be measured of the messages' content: relays
  (``1 - (relay hops + unshown) / (delegating hops + unshown)``, unshown: work handed to an
  agent whose spans never arrived), what answers add (leaf work: the share of an answer's
  word trigrams not in its request, full marks from 0.1 up), uptake (delegating work: whether
  an agent's answer carries what its callees told it), and repetition (answers that repeat the
  agent's own earlier answers). Measured on captured text, else on fingerprints
  (:mod:`coordbench.sketch`), at a lower confidence.

Every part is 1 when there is nothing to fault (no calls to pair, no hub...), so leaving a
part out never raises a score, and each moves one way with each kind of evidence. Each part's
``confidence`` says how far its evidence was established (1: observed; less where it rests on
fingerprints, or where a dependency could not be told and was given the benefit of the doubt).

The package holds one module per part (:mod:`.outcome`, :mod:`.participation`,
:mod:`.efficiency`, :mod:`.parallelism`, :mod:`.bottleneck`, :mod:`.robustness`,
:mod:`.information`), the model they share (:mod:`.model`) and their combination into the score
and the evaluator (:mod:`.combination`).
"""

from coordbench.evals.coordination.combination import CoordinationEvaluator, assess_coordination
from coordbench.evals.coordination.model import (
    NOISE_FLOOR,
    OUTCOME_FLOOR,
    PROCESS_WEIGHTS,
    CoordinationResult,
    Part,
)

__all__ = [
    "NOISE_FLOOR",
    "OUTCOME_FLOOR",
    "PROCESS_WEIGHTS",
    "CoordinationEvaluator",
    "CoordinationResult",
    "Part",
    "assess_coordination",
]
