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
from collections.abc import Iterable, Sequence
from typing import Protocol, cast

from coordbench.extensions import native_extension
from coordbench.sketch import tokens  # one tokenizer for similarity and fingerprints

__all__ = [
    "TEXT_KERNELS",
    "TextKernels",
    "cosine",
    "pair_similarity",
    "python_pair_similarity",
    "rouge_l",
    "tfidf_of_tokens",
    "tfidf_vectors",
    "tokens",
]

_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")
_PAIR_IDF = {f: math.log((1 + 2) / (1 + f)) + 1 for f in (1, 2)}
"""The idf of a term in one or both of two documents, as :func:`tfidf_of_tokens` computes it (``n = 2``)."""


def tfidf_vectors(documents: Sequence[str]) -> list[dict[str, float]]:
    """L2-normalised TF-IDF vectors of ``documents`` (sparse, term → weight).

    Example:
        >>> [sorted(v) for v in tfidf_vectors(["red apple", "green apple"])]
        [['apple', 'red'], ['apple', 'green']]
    """
    return tfidf_of_tokens([tokens(d) for d in documents])


def tfidf_of_tokens(documents: Sequence[Iterable[str]]) -> list[dict[str, float]]:
    """:func:`tfidf_vectors` of documents already cut into :func:`tokens` (a text's tokens read once).

    Example:
        >>> tfidf_of_tokens([tokens("red apple"), tokens("green apple")]) == tfidf_vectors(["red apple", "green apple"])
        True
    """
    counts = [Counter(d) for d in documents]
    n = len(documents)
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    # a term's idf depends on its document frequency alone: one logarithm per frequency, not per term
    idf_of = {f: math.log((1 + n) / (1 + f)) + 1 for f in set(df.values())}
    vectors: list[dict[str, float]] = []
    for c in counts:
        weights = {t: tf * idf_of[df[t]] for t, tf in sorted(c.items())}
        squares = 0.0
        for w in weights.values():  # one addition after another, on every Python (3.12's sum() compensates)
            squares += w * w
        norm = math.sqrt(squares)
        vectors.append({t: w / norm for t, w in weights.items()} if norm else {})
    return vectors


class TextKernels(Protocol):
    """What ``_text`` offers (its C source says each function's contract)."""

    def words(self, text: str, /) -> tuple[str, ...] | None:
        """``text``'s lower-cased words of two or more word characters, interned; ``None``: not an exact str."""
        ...

    def trigrams(self, said: tuple[str, ...], /) -> frozenset[tuple[str, ...]] | None:
        """The word trigrams of ``said`` (the words themselves when fewer than three); ``None``: not str words."""
        ...

    def pair_similarity(self, a: Sequence[str], b: Sequence[str], one: float, both: float, /) -> float | None:
        """:func:`python_pair_similarity`'s float; ``None``: a token is not an exact str."""
        ...


TEXT_KERNELS = cast("TextKernels | None", native_extension("coordbench.evals._text"))
"""The text measures' C loops (``_text.c``), or ``None`` (not built, or ``COORDBENCH_NATIVE=0``): Python runs."""


def pair_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """The TF-IDF cosine of two documents cut into :func:`tokens`: ``cosine(*tfidf_of_tokens([a, b]))``, the same float.

    The C loop (:data:`TEXT_KERNELS`) when built, else :func:`python_pair_similarity`: the same float.

    Example:
        >>> a, b = ["red", "apple"], ["green", "apple"]
        >>> pair_similarity(a, b) == cosine(*tfidf_of_tokens([a, b]))
        True
    """
    native = TEXT_KERNELS
    found = native.pair_similarity(a, b, _PAIR_IDF[1], _PAIR_IDF[2]) if native is not None else None
    return found if found is not None else python_pair_similarity(a, b)


def python_pair_similarity(a: Iterable[str], b: Iterable[str]) -> float:
    """:func:`pair_similarity` in Python: what the C loop must match.

    Only the terms both documents hold add to the cosine, and there the idf is 1, so the
    vectors are not built: each document's norm (its weights squared, summed in term order, as
    :func:`tfidf_of_tokens` sums them) and the products of the shared terms (in term order, as
    :func:`cosine` adds them; a term one side lacks adds ``0.0``, which changes no sum of
    non-negative floats).
    """
    counts_a, counts_b = Counter(a), Counter(b)
    if not counts_a or not counts_b:
        return 0.0
    norm_a, norm_b = _norm(counts_a, counts_b), _norm(counts_b, counts_a)
    shared = _PAIR_IDF[2]
    total = 0.0
    for t in sorted(counts_a):
        if t in counts_b:
            total += (counts_a[t] * shared / norm_a) * (counts_b[t] * shared / norm_b)
    return total


def _norm(counts: Counter[str], other: Counter[str]) -> float:
    """The L2 norm of one of two documents' TF-IDF weights (``other``: the other document's counts)."""
    one, both = _PAIR_IDF[1], _PAIR_IDF[2]
    total = 0.0
    for t, tf in sorted(counts.items()):
        weight = tf * (both if t in other else one)
        total += weight * weight
    return math.sqrt(total)


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """Cosine of two L2-normalised sparse vectors (their dot product); 0 when either is empty."""
    if len(a) > len(b):
        a, b = b, a
    total = 0.0
    for t, w in sorted(a.items()):  # in term order, one addition after another, as :func:`tfidf_of_tokens` sums
        total += w * b.get(t, 0.0)
    return total


def _lcs(x: Sequence[str], y: Sequence[str]) -> int:
    """Length of the longest common subsequence of ``x`` and ``y``, bit-parallel.

    Hyyrö's bit-vector form of the LCS recurrence (H. Hyyrö, "Bit-parallel LCS-length
    computation revisited", 2004): one big integer holds a row of the dynamic programme, one bit
    per token of ``x``, and each token of ``y`` updates the whole row with a few integer
    operations. The result equals the textbook O(len(x) * len(y)) table's (checked against it
    in the tests); the work is O(len(x) * len(y) / 64) machine words, so a 20,000-token answer
    against a 20,000-token reference takes a fraction of a second instead of minutes.
    """
    if not x or not y:
        return 0
    # each token of y that x holds: the bits of its positions in x, built once from a byte array
    # (OR-ing bit by bit into a growing integer copies it each time: quadratic when a token repeats)
    wanted = set(y)
    positions: dict[str, list[int]] = {}
    for i, token in enumerate(x):
        if token in wanted:
            positions.setdefault(token, []).append(i)
    matches: dict[str, int] = {}
    for token, where in positions.items():
        bits = bytearray((len(x) + 7) // 8)
        for i in where:
            bits[i >> 3] |= 1 << (i & 7)
        matches[token] = int.from_bytes(bits, "little")
    mask = (1 << len(x)) - 1
    row = mask  # bit i set: the LCS did not grow at x[i] (all ones before any token of y)
    for token in y:
        match = matches.get(token, 0)
        if match:
            common = row & match
            row = ((row + common) | (row - common)) & mask
    return len(x) - row.bit_count()


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
