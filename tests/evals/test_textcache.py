"""The per-evaluation text cache: the same values as without it, each text read once, gone with the evaluation."""

from __future__ import annotations

import asyncio

from coordbench.evals.evidence import added_trigrams, trigrams
from coordbench.evals.textcache import OUTSIDE, evaluation_cache, per_text, words
from coordbench.sketch import tokens


def test_values_are_the_same_in_and_out_of_an_evaluation() -> None:
    texts = ["The budget is 40 million, owner: Ana.", "a b", "", "one two three four", "ÉCOLE école Straße"]
    outside = [(words(t), trigrams(t), added_trigrams(t, "the budget is")) for t in texts]
    with evaluation_cache():
        inside = [(words(t), trigrams(t), added_trigrams(t, "the budget is")) for t in texts]
    assert inside == outside
    # hand-worked: the words are sketch.tokens', the trigrams their sliding windows of three
    assert words(texts[0]) == tuple(tokens(texts[0])) == ("the", "budget", "is", "40", "million", "owner", "ana")
    assert trigrams("one two three four") == {("one", "two", "three"), ("two", "three", "four")}
    assert trigrams("one two") == {("one", "two")} and trigrams("") == frozenset()
    assert added_trigrams("one two three four", "one two three") == {("two", "three", "four")}


def test_each_text_is_read_once_per_evaluation_and_the_cache_goes_with_it() -> None:
    read: list[str] = []

    @per_text
    def length(text: str) -> int:
        read.append(text)
        return len(text)

    many = [f"message {n}" for n in range(OUTSIDE + 10)]  # more texts than the cache outside holds
    with evaluation_cache():
        for _ in range(3):  # three passes over every text, as the measures make
            assert [length(t) for t in many] == [len(t) for t in many]
        with evaluation_cache():  # a nested block shares the outer one
            length(many[0])
    assert len(read) == len(many)
    read.clear()
    with evaluation_cache():  # a new evaluation reads again
        length(many[0])
    assert read == [many[0]]


def test_code_on_worker_threads_shares_the_evaluations_cache() -> None:
    read: list[str] = []

    @per_text
    def upper(text: str) -> str:
        read.append(text)
        return text.upper()

    async def evaluate() -> list[str]:
        with evaluation_cache():
            first = await asyncio.to_thread(upper, "x")
            second = await asyncio.to_thread(upper, "x")
            return [first, second, upper("x")]

    assert asyncio.run(evaluate()) == ["X", "X", "X"]
    assert read == ["x"]
