"""What is read from each message once per evaluation: a text's words, its trigrams, its content units.

Every measure that compares messages (dependency, repetition, relays, attribution) reads the
same texts many times over. :func:`per_text` caches a function of a text for the evaluation
running (:func:`evaluation_cache`, which :class:`~coordbench.evals.pipeline.EvalPipeline` opens
for each scenario): every text of the trace is read once, however many passes read it, and the
cache goes with the evaluation, so its memory is the trace's, never more. Outside an evaluation
a small least-recently-used cache answers: a pass over more texts than it holds would miss on
every text (a 100,000-span trace read each of its texts' trigrams five times over).

The value is the same with or without a cache: the cached functions are pure.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Generator, Hashable
from contextvars import ContextVar
from typing import TypeVar, cast

from coordbench.evals.textsim import TEXT_KERNELS
from coordbench.sketch import tokens

__all__ = ["evaluation_cache", "per_text", "python_words", "words"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

OUTSIDE = 8192
"""Texts each function keeps outside an evaluation (least recently used first out)."""

_CACHES: ContextVar[dict[object, dict[object, object]] | None] = ContextVar("coordbench_text_cache", default=None)


@contextlib.contextmanager
def evaluation_cache() -> Generator[None]:
    """Keep what :func:`per_text` functions read until the block ends (nested blocks share the outer one).

    The cache follows the context: code the block runs on worker threads (``asyncio.to_thread``
    copies the context) shares it.
    """
    if _CACHES.get() is not None:
        yield
        return
    token = _CACHES.set({})
    try:
        yield
    finally:
        _CACHES.reset(token)


def per_text(function: Callable[[K], T]) -> Callable[[K], T]:
    """``function`` of a text, computed once per text within an :func:`evaluation_cache` block."""
    outside = functools.lru_cache(maxsize=OUTSIDE)(function)

    @functools.wraps(function)
    def cached(text: K) -> T:
        caches = _CACHES.get()
        if caches is None:
            return outside(text)
        try:
            return cast("T", caches[function][text])  # read once already: the common case, one lookup each
        except KeyError:
            value = caches.setdefault(function, {})[text] = function(text)
            return value

    return cached


@per_text
def words(text: str) -> tuple[str, ...]:
    """The :func:`~coordbench.sketch.tokens` of ``text``, read once per evaluation for every measure.

    Each word is interned: a word said in many messages is one string, so the word trigrams of
    two messages compare by identity (no string's characters read) and a trace's vocabulary is
    held once, however many messages repeat it. The C loop (``_text.c``) when built, else
    :func:`python_words`: the same words.
    """
    native = TEXT_KERNELS
    found = native.words(text) if native is not None else None
    return found if found is not None else python_words(text)


def python_words(text: str) -> tuple[str, ...]:
    """:func:`words` in Python, uncached: what the C loop must match."""
    return tuple(map(sys.intern, tokens(text)))
