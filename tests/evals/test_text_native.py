"""The text measures' C loops give their Python versions' words and floats, and refuse what is not text.

``coordbench.evals._text`` cuts every message into words (once per evaluation) and gives the
TF-IDF cosine of what two agents said to each other. Evaluations must stay byte for byte what
they were, so each is checked against its Python version: on hand-worked values, on any Unicode
text and random token lists, and through the text evaluator with the loops on and off. A str
subclass is handed back to the Python version (``None``); what is not text gets a ``TypeError``.
"""

from __future__ import annotations

import math
import random
import re
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordbench.evals import _text as native  # built by `uv sync`: a build without it fails here
from coordbench.evals import textcache, textsim
from coordbench.evals.evidence import python_trigrams
from coordbench.evals.text import TextEvaluator
from coordbench.evals.textcache import evaluation_cache, python_words
from coordbench.evals.textsim import _PAIR_IDF, cosine, python_pair_similarity, tfidf_of_tokens  # pyright: ignore[reportPrivateUsage]
from evals.traces import context, team_trace
from support.fuzz_text import Text, random_text, random_tokens

ONE, BOTH = _PAIR_IDF[1], _PAIR_IDF[2]


def bits(value: float | None) -> bytes | None:
    return None if value is None else struct.pack("<d", value)


def test_the_package_uses_the_c_text_loops() -> None:
    """``make test`` builds them: a build that silently lost them would pass every other test here."""
    assert textsim.TEXT_KERNELS is native


def test_words_by_hand() -> None:
    assert native.words("The cat, a CAT! x_y 42 7 Über-straße") == ("the", "cat", "cat", "x_y", "42", "über", "straße")
    assert native.words("") == () and native.words("a b c . ,") == ()
    # str.lower's own rules: a final sigma; a dotted capital I lowers to i and a combining dot, which is
    # no word character, so the i is a word of one letter and the rest a word of its own
    assert native.words("ΟΔΟΣ İstanbul") == ("οδος", "stanbul")
    assert "ΟΔΟΣ".lower()[-1] == "ς" and native.words("ΟΔΟΣ")[0][-1] == "ς"
    # a combining accent is no word character (\w does not take it), digits of any script are
    assert native.words("e\u0301t ٣٤ 五六") == ("٣٤", "五六")
    found = native.words("unusual-" + "vocabulary" * 3)
    assert all(sys.intern(w) is w for w in found)  # interned: the same string for the same word


def test_trigrams_by_hand() -> None:
    assert native.trigrams(("a", "b", "c", "a", "b", "c")) == {("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")}
    assert native.trigrams(("ab", "cd")) == frozenset({("ab", "cd")})  # fewer than three: the words themselves
    assert native.trigrams(()) == frozenset()
    assert type(native.trigrams(("x", "y", "z"))) is frozenset


def test_pair_similarity_by_hand() -> None:
    # red and green are in one document each (idf ln(3/2) + 1), apple in both (idf 1): cosine 1 / (1 + idf^2)
    idf = math.log(1.5) + 1
    assert native.pair_similarity(["red", "apple"], ["green", "apple"], ONE, BOTH) == pytest.approx(1 / (1 + idf**2))
    assert native.pair_similarity(("apple", "apple"), ["apple"], ONE, BOTH) == pytest.approx(1.0)
    assert native.pair_similarity([], ["apple"], ONE, BOTH) == 0.0
    assert native.pair_similarity(["red"], ["green"], ONE, BOTH) == 0.0


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80) | st.text(alphabet="aZ_7 é\u0301ΣςİǅﬃŉⅫ²٣五😀\ud800-", max_size=80))
def test_words_are_the_python_versions_on_any_text(text: str) -> None:
    said = native.words(text)
    assert said == python_words(text) == tuple(re.findall(r"(?u)\b\w\w+\b", text.lower()))
    assert said is not None and native.trigrams(said) == python_trigrams(said)


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_loops_are_the_python_versions_on_random_input(rng: random.Random) -> None:
    text = random_text(rng)
    said = python_words(text)
    assert native.words(text) == said and native.trigrams(said) == python_trigrams(said)
    a, b = random_tokens(rng), random_tokens(rng)
    expected = python_pair_similarity(a, b)
    assert bits(native.pair_similarity(a, b, ONE, BOTH)) == bits(expected)
    assert bits(expected) == bits(cosine(*tfidf_of_tokens([a, b])))  # and the vectors' cosine, float for float


async def test_the_text_evaluator_is_the_same_with_the_loops_and_without() -> None:
    """The evaluator's pair diversities and repetition, on a team that talked, with and without the C loops."""
    ctx = context(team_trace())

    async def evaluated() -> Any:
        with evaluation_cache():
            return (await TextEvaluator().evaluate(ctx)).model_dump_json()

    with_loops = await evaluated()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textsim, "TEXT_KERNELS", None)
        patch.setattr(textcache, "TEXT_KERNELS", None)
        without = await evaluated()
    assert with_loops == without
    assert '"pairs":[{' in with_loops  # a pair was compared: the loops ran on real messages


@pytest.mark.parametrize(
    ("call", "why"),
    [
        (lambda: native.words(Text("A subclass")), "a str subclass's lower() may be its own"),
        (lambda: native.words(b"bytes"), "bytes are not text"),
        (lambda: native.words(None), "None is not text"),
        (lambda: native.trigrams(("a", Text("b"), "c")), "a subclass may hash its own way"),
        (lambda: native.trigrams(["a", "b", "c"]), "words come as a tuple"),
        (lambda: native.pair_similarity(["a", Text("b")], ["a"], ONE, BOTH), "a subclass may hash its own way"),
        (lambda: native.pair_similarity(["a"], ["a", 1], ONE, BOTH), "a token that is not a str"),
        (lambda: native.pair_similarity(3, [], ONE, BOTH), "not a list of tokens: the Python version says so"),
        (lambda: native.pair_similarity(["a"], iter(["a"]), ONE, BOTH), "an iterator, left unread for Python"),
    ],
)
def test_what_the_loops_hand_back_to_the_python_versions(call: Any, why: str) -> None:
    assert call() is None, why


def test_the_public_functions_read_what_the_loops_hand_back() -> None:
    tokens = iter(["red", "apple"])  # read once, by the Python version
    assert textsim.pair_similarity(["apple"], tokens) == python_pair_similarity(["apple"], ["red", "apple"])  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        textsim.pair_similarity(["a"], 3)  # pyright: ignore[reportArgumentType]
    assert textsim.pair_similarity(["red", Text("apple")], ["apple"]) == python_pair_similarity(
        ["red", "apple"], ["apple"]
    )
    assert textcache.python_words(Text("Two Words")) == ("two", "words")
    said = ("one", Text("two"), "three")
    assert python_trigrams(said) == {("one", "two", "three")}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: native.pair_similarity(["a"], ["a"], "1.4", BOTH), "must be real number, not str"),
        (lambda: native.pair_similarity(["a"], ["a"]), "pair_similarity() takes 4 arguments (2 given)"),
        (lambda: native.words(), "words() takes exactly one argument (0 given)"),
    ],
)
def test_what_is_not_text_gets_a_type_error(call: Any, message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        call()
