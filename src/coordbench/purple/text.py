"""Deterministic text work for the rule-based purple agents: sentences, key terms, extracts, critiques.

Everything here is a pure function of its input: the same task gives the same answer, so
the benchmark's own runs are reproducible without a model. The methods are the classic
extractive ones (term frequency over content words, sentences scored by the terms they hold).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = [
    "STOPWORDS",
    "extract",
    "key_terms",
    "numbers",
    "risks",
    "sentences",
    "words",
]

# fmt: off
STOPWORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
    "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has",
    "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not",
    "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
    "please", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours", "yourself", "yourselves", "task", "team"
))
# fmt: on
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NUMBER = re.compile(r"\b\d[\d,.:/-]*\b")
_RISK = re.compile(
    r"\b(risk|risks|delay|delays|late|block|blocker|blocked|fail|failure|fails|outage|budget|cost|costs|"
    r"depend|depends|dependency|unknown|uncertain|incident|error|errors|limit|limits|deadline|issue|issues)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    r"""The sentences (and lines) of ``text``, stripped, empty ones left out.

    Example:
        >>> sentences("Plan the launch. Owners matter!\nRisks: budget")
        ['Plan the launch.', 'Owners matter!', 'Risks: budget']
    """
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def words(text: str) -> list[str]:
    """Content words of ``text``, lower case, stop words left out.

    Example:
        >>> words("The launch of the App, and its owners")
        ['launch', 'app', 'owners']
    """
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in STOPWORDS]


def key_terms(texts: Iterable[str], limit: int = 8) -> list[tuple[str, int]]:
    """The most frequent content words of ``texts`` with their counts (ties by the word).

    Example:
        >>> key_terms(["budget risk budget", "risk owners budget"], limit=2)
        [('budget', 3), ('risk', 2)]
    """
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(words(text))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]


def extract(text: str, limit: int = 3, *, exclude: Sequence[str] = ()) -> list[str]:
    """The ``limit`` sentences of ``text`` that best cover its key terms, in their original order.

    A sentence scores the summed frequencies of its distinct content words over its length
    (so a long sentence does not win by size); sentences in ``exclude`` are skipped.

    Example:
        >>> extract("Budget is tight. The sky is blue. Budget risks delay the launch.", limit=2)
        ['Budget is tight.', 'Budget risks delay the launch.']
    """
    skip = set(exclude)
    candidates = [s for s in sentences(text) if s not in skip]
    frequencies = Counter(words(text))
    scored: list[tuple[float, int, str]] = []
    for index, sentence in enumerate(candidates):
        terms = set(words(sentence))
        if not terms:
            continue
        score = sum(frequencies[t] for t in terms) / (len(words(sentence)) ** 0.5)
        scored.append((score, index, sentence))
    best = sorted(scored, key=lambda item: (-item[0], item[1]))[:limit]
    return [sentence for _, _, sentence in sorted(best, key=lambda item: item[1])]


def risks(text: str, limit: int = 3) -> list[str]:
    """Sentences of ``text`` that name a risk, delay, cost or dependency (at most ``limit``).

    Example:
        >>> risks("We ship in May. The budget may slip. Owners agreed.")
        ['The budget may slip.']
    """
    return [s for s in sentences(text) if _RISK.search(s)][:limit]


def numbers(text: str) -> list[str]:
    """Numbers, dates and times in ``text``, in order, once each.

    Example:
        >>> numbers("Ship 2 apps by 2026-12-01, budget 40,000.")
        ['2', '2026-12-01', '40,000']
    """
    return list(dict.fromkeys(m.group(0).rstrip(".,:") for m in _NUMBER.finditer(text)))
