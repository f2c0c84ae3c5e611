"""Tier 3: what the agents said: the answer against reference texts, and diversity between agents.

This evaluator is also the worked example of an evaluator plugin in ``docs/extending.md``.

- **Reference similarity**: the team's answer against each reference text (for instance the
  human reviews of the paper the team reviewed): TF-IDF cosine and ROUGE-L F1, each averaged
  over the references; ``reference_similarity`` is the mean of the two averages.
- **Information diversity** (GEMMAS' IDS): for every pair of agents that exchanged messages,
  the TF-IDF cosine between what one said and what the other said on that link;
  ``diversity = 1 - mean similarity``. Low diversity means agents repeat each other. Needs
  message content on the spans (content capture, see ``A2AInstrumentor``).
- **Repetition**: the share of messages that repeat an earlier message word for word (same
  tokens in the same order, ignoring case and punctuation). Exact repeats are counted in
  linear time; a near-duplicate search would be quadratic in the messages of a long trace.

Score: the mean of ``reference_similarity`` and ``diversity`` where present; ``None`` (no
contribution) when neither can be computed. It carries no weight by default: the reference
similarity counts in the coordination score's outcome part, and diversity is reported (it moves
with who happens to talk to whom, so it cannot be a judgement by itself).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict

from coordbench.evals.base import TIER_TEXT, EvalContext, Evaluator
from coordbench.evals.textcache import words
from coordbench.evals.textsim import cosine, pair_similarity, rouge_l, tfidf_vectors

__all__ = ["PairDiversity", "TextEvaluator", "TextResult", "reference_similarity"]


def _similarities(answer: str, references: list[str]) -> tuple[list[float], list[float]]:
    """TF-IDF cosines and ROUGE-L F1s of ``answer`` against each reference."""
    vectors = tfidf_vectors([answer, *references])
    return [cosine(vectors[0], v) for v in vectors[1:]], [rouge_l(answer, r) for r in references]


def reference_similarity(answer: str, references: list[str]) -> float:
    """Similarity of ``answer`` to the references: the mean of the mean TF-IDF cosine and mean ROUGE-L F1.

    0 without an answer or references.

    Example:
        >>> round(reference_similarity("the cat sat on the mat", ["the cat sat on the mat"]), 6)
        1.0
    """
    if not answer.strip() or not references:
        return 0.0
    cos_values, rouge_values = _similarities(answer, references)
    return (statistics.fmean(cos_values) + statistics.fmean(rouge_values)) / 2


class PairDiversity(BaseModel):
    """Similarity of what two connected agents said to each other."""

    model_config = ConfigDict(frozen=True)

    agents: tuple[str, str]
    messages: int
    similarity: float


class TextResult(BaseModel):
    """Text measures of a scenario (``None`` where there was nothing to compare).

    Attributes:
        references: Number of reference texts.
        tfidf_cosine: Mean TF-IDF cosine of the answer to the references.
        tfidf_cosine_max: Best TF-IDF cosine to one reference.
        rouge_l: Mean ROUGE-L F1 of the answer against the references.
        rouge_l_max: Best ROUGE-L F1.
        reference_similarity: Mean of ``tfidf_cosine`` and ``rouge_l``.
        messages: Messages with captured text.
        pairs: Per pair of connected agents.
        diversity: ``1 -`` the mean pair similarity.
        repetition: Share of messages repeating an earlier one word for word.
        note: What was missing, if anything.
    """

    model_config = ConfigDict(frozen=True)

    references: int
    tfidf_cosine: float | None
    tfidf_cosine_max: float | None
    rouge_l: float | None
    rouge_l_max: float | None
    reference_similarity: float | None
    messages: int
    pairs: list[PairDiversity]
    diversity: float | None
    repetition: float | None
    note: str | None = None


class TextEvaluator(Evaluator):
    """Similarity of the answer to reference texts and diversity of the agents' messages."""

    name = "text"
    tier = TIER_TEXT
    blocking = True  # computes only: run on a worker thread
    description = "TF-IDF cosine and ROUGE-L to reference texts; information diversity and repetition of messages."

    async def evaluate(self, ctx: EvalContext) -> TextResult:
        """Compare the answer with the references and the agents' messages with each other."""
        notes: list[str] = []
        refs = [r for r in ctx.scenario.references if r.strip()]
        answer = ctx.outcome.output if ctx.outcome is not None else ""
        cos_values: list[float] = []
        rouge_values: list[float] = []
        if refs and answer.strip():
            cos_values, rouge_values = _similarities(answer, refs)
        elif refs:
            notes.append("the team gave no answer to compare with the references")
        else:
            notes.append("the scenario has no reference texts")

        said: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        texts: list[str] = []
        for call in ctx.agent_calls:
            pair = (min(call.caller, call.callee), max(call.caller, call.callee))
            if call.request_text:
                said[pair][call.caller].append(call.request_text)
                texts.append(call.request_text)
            if call.response_text:
                said[pair][call.callee].append(call.response_text)
                texts.append(call.response_text)
        # each message's tokens once (in the evaluation's cache, shared with the coordination measures): a
        # message is read for its pair's diversity and for repetition (the tokens of texts joined by a
        # space are the texts' tokens one after another)
        tokens_of = words

        pairs: list[PairDiversity] = []
        for pair in sorted(said):
            sides = said[pair]
            if len(sides) < 2:
                continue
            a, b = ([w for m in sides[side] for w in tokens_of(m)] for side in pair)
            count = len(sides[pair[0]]) + len(sides[pair[1]])
            pairs.append(PairDiversity(agents=pair, messages=count, similarity=pair_similarity(a, b)))
        repetition: float | None = None
        if texts:
            seen: set[tuple[str, ...]] = set()
            repeats = 0
            for message in texts:
                key = tokens_of(message)
                if key and key in seen:
                    repeats += 1
                seen.add(key)
            repetition = repeats / len(texts)
        elif ctx.agent_calls:
            notes.append("no message content on the spans (turn on content capture to measure diversity)")
        diversity = 1 - statistics.fmean(p.similarity for p in pairs) if pairs else None

        tfidf = statistics.fmean(cos_values) if cos_values else None
        rouge = statistics.fmean(rouge_values) if rouge_values else None
        return TextResult(
            references=len(refs),
            tfidf_cosine=tfidf,
            tfidf_cosine_max=max(cos_values) if cos_values else None,
            rouge_l=rouge,
            rouge_l_max=max(rouge_values) if rouge_values else None,
            reference_similarity=(tfidf + rouge) / 2 if tfidf is not None and rouge is not None else None,
            messages=len(texts),
            pairs=pairs,
            diversity=diversity,
            repetition=repetition,
            note="; ".join(notes) or None,
        )

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """Mean of ``reference_similarity`` and ``diversity`` where present, else ``None``."""
        if not isinstance(result, TextResult):
            return None
        parts = [v for v in (result.reference_similarity, result.diversity) if v is not None]
        return statistics.fmean(parts) if parts else None
