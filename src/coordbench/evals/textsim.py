"""Lightweight, deterministic text similarity: TF-IDF cosine and ROUGE-L, no model download.

Tokenisation and weighting follow the common reference implementations so results can be
reproduced elsewhere: TF-IDF as scikit-learn's ``TfidfVectorizer`` defaults (lower case,
tokens of two or more word characters, raw counts, smoothed ``idf = ln((1 + n) / (1 + df)) + 1``,
L2-normalised rows); ROUGE-L as Google's ``rouge-score`` without stemming (lower case,
``[a-z0-9]+`` tokens, F1 of LCS precision and recall).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["cosine", "rouge_l", "tfidf_vectors", "tokens"]

_TFIDF_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """TF-IDF tokens: lower case, two or more word characters.

    Example:
        >>> tokens("The cat, a cat!")
        ['the', 'cat', 'cat']
    """
    return _TFIDF_TOKEN.findall(text.lower())


def tfidf_vectors(documents: Sequence[str]) -> list[dict[str, float]]:
    """L2-normalised TF-IDF vectors of ``documents`` (sparse, term → weight).

    Example:
        >>> [sorted(v) for v in tfidf_vectors(["red apple", "green apple"])]
        [['apple', 'red'], ['apple', 'green']]
    """
    counts = [Counter(tokens(d)) for d in documents]
    n = len(documents)
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    idf = {term: math.log((1 + n) / (1 + f)) + 1 for term, f in df.items()}
    vectors: list[dict[str, float]] = []
    for c in counts:
        weights = {t: tf * idf[t] for t, tf in sorted(c.items())}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        vectors.append({t: w / norm for t, w in weights.items()} if norm else {})
    return vectors


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """Cosine of two L2-normalised sparse vectors (their dot product); 0 when either is empty."""
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in sorted(a.items()))


def _lcs(x: Sequence[str], y: Sequence[str]) -> int:
    previous = [0] * (len(y) + 1)
    for xi in x:
        current = [0]
        for j, yj in enumerate(y, start=1):
            current.append(previous[j - 1] + 1 if xi == yj else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F1 of ``candidate`` against ``reference`` (0 when either has no tokens).

    Example:
        >>> # LCS("the cat sat on the mat", "the cat lay on the mat") = 5 tokens: P = R = 5/6
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
    """
    c = _ROUGE_TOKEN.findall(candidate.lower())
    r = _ROUGE_TOKEN.findall(reference.lower())
    if not c or not r:
        return 0.0
    lcs = _lcs(c, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(c), lcs / len(r)
    return 2 * precision * recall / (precision + recall)
