"""Built-in evaluators against hand-worked values on the small trace of ``evals/traces.py``."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordbench import semconv
from coordbench.evals import (
    LatencyEvaluator,
    ProtocolEvaluator,
    TeamOutcome,
    TextEvaluator,
    calls_of,
)
from coordbench.evals.latency import latency_stats
from coordbench.evals.protocol import summarise_calls
from coordbench.evals.textsim import cosine, pair_similarity, rouge_l, tfidf_of_tokens, tfidf_vectors, tokens
from coordbench.spans import StatusCode
from coordbench.spantree import SpanTree
from evals.traces import client, context, team_trace
from support.spans import sid


def test_latency_stats_match_hand_values_and_numpy() -> None:
    stats = latency_stats([10.0, 20.0, 30.0, 40.0])
    # linear interpolation at rank q * (n - 1): p50 at 1.5 -> 25, p95 at 2.85 -> 38.5, p99 at 2.97 -> 39.7
    assert (stats.count, stats.avg_ms, stats.p50_ms, stats.p95_ms, stats.p99_ms, stats.max_ms) == (
        4,
        25.0,
        25.0,
        pytest.approx(38.5),
        pytest.approx(39.7),
        40.0,
    )
    rng = np.random.default_rng(7)
    values = list(rng.exponential(50.0, size=101))
    stats = latency_stats(values)
    ordered = sorted(values)
    assert stats.p50_ms == pytest.approx(ordered[50])  # rank 0.5 * 100 = 50 exactly
    assert stats.p95_ms == pytest.approx(ordered[95])
    assert stats.p99_ms == pytest.approx(ordered[99])
    assert latency_stats([]).p50_ms is None


async def test_latency_evaluator() -> None:
    result = await LatencyEvaluator().evaluate(context())
    # agent-to-agent calls A->B 30 ms and A->C 40 ms; the host's call to A 100 ms
    assert (result.calls.count, result.calls.avg_ms, result.calls.p95_ms) == (2, 35.0, pytest.approx(39.5))
    assert (result.end_to_end.count, result.end_to_end.p50_ms) == (1, 100.0)
    assert set(result.agents) == {"A", "B", "C"}
    # A serves 1-99 (98 ms) and waits on B 10-40 and C 50-90 (70 ms): 28 ms of its own
    assert result.agents["A"].self_time_ms == pytest.approx(28.0)
    assert result.agents["B"].self_time_ms == pytest.approx(28.0)
    assert result.agents["C"].self_time_ms == pytest.approx(38.0)
    assert result.agents["A"].handled.p50_ms == 100.0
    # C is the slowest for its own work: 38 / median(28, 28)
    assert result.slowest_agent == "C"
    assert result.slowest_relative == pytest.approx(38 / 28)
    assert result.critical_path_ms == pytest.approx(100.0)
    # walking back from A's end: C (50-90) finished last, and B (10-40) ended before C began
    assert result.critical_path_calls == ["H -> A", "A -> B", "A -> C"]
    assert "only within one run" in result.note


async def test_a_call_in_the_shadow_of_a_longer_one_is_not_on_the_critical_path() -> None:
    spans = team_trace()
    b_client, b_server = spans[3], spans[4]
    # B now runs 50-60, beside C (50-90): the team waited for C, never for B
    ms = 1_000_000
    spans[3] = b_client._replace(start_time_unix_nano=50 * ms, end_time_unix_nano=60 * ms)
    spans[4] = b_server._replace(start_time_unix_nano=51 * ms, end_time_unix_nano=59 * ms)
    result = await LatencyEvaluator().evaluate(context(spans))
    assert result.critical_path_calls == ["H -> A", "A -> C"]


def test_protocol_summary_counts_failures_retries_and_sizes() -> None:
    spans = [
        client(
            "A",
            "B",
            sid(1),
            None,
            0,
            10,
            **{
                semconv.A2A_MESSAGE_DIGEST: "d1",
                semconv.A2A_REQUEST_SIZE: 100,
                semconv.A2A_RESPONSE_SIZE: 40,
                semconv.GEN_AI_USAGE_INPUT_TOKENS: 5,
            },
        ),
        client(
            "A",
            "B",
            sid(2),
            None,
            20,
            30,
            status=StatusCode.ERROR,
            **{semconv.A2A_MESSAGE_DIGEST: "d1", semconv.ERROR_TYPE: "TimeoutError", semconv.A2A_REQUEST_SIZE: 100},
        ),
        client("A", "C", sid(3), None, 40, 50, **{semconv.A2A_MESSAGE_DIGEST: "d1", semconv.A2A_STEP_COST: 0.25}),
    ]
    result = summarise_calls(calls_of(SpanTree(spans)))
    assert (result.calls, result.failed, result.retries) == (3, 1, 1)
    assert result.success_rate == pytest.approx(2 / 3)
    b = result.agents["B"]
    assert (b.requests, b.failed, b.bytes_in, b.bytes_out, b.tokens_in) == (2, 1, 200, 40, 5)
    assert b.error_types == {"TimeoutError": 1}
    assert result.agents["A"].sent == 3 and result.agents["A"].retries == 1
    assert result.agents["C"].cost == 0.25 and result.agents["B"].cost is None


async def test_protocol_evaluator_scores_the_success_rate() -> None:
    ctx = context(team_trace(c_status=StatusCode.ERROR))
    evaluator = ProtocolEvaluator()
    result = await evaluator.evaluate(ctx)
    assert evaluator.score(result, ctx) == pytest.approx(2 / 3)


def test_tfidf_cosine_by_hand() -> None:
    assert tokens("A red-apple, 2 apples!") == ["red", "apple", "apples"]
    red, green = tfidf_vectors(["red apple", "green apple"])
    # idf(apple) = ln(3/3) + 1 = 1, idf(red) = idf(green) = ln(3/2) + 1; cosine = 1 / (1 + idf(red)^2)
    idf = math.log(1.5) + 1
    assert red["apple"] == pytest.approx(1 / math.sqrt(1 + idf**2))
    assert cosine(red, green) == pytest.approx(1 / (1 + idf**2))
    assert cosine(red, red) == pytest.approx(1.0)
    assert cosine(red, tfidf_vectors(["", "x"])[0]) == 0.0


def test_pair_similarity_by_hand() -> None:
    idf = math.log(1.5) + 1  # red and green are in one document each, apple in both (idf 1)
    assert pair_similarity(["red", "apple"], ["green", "apple"]) == pytest.approx(1 / (1 + idf**2))
    assert pair_similarity(["apple", "apple"], ["apple"]) == pytest.approx(1.0)
    assert pair_similarity([], ["apple"]) == 0.0 and pair_similarity(["red"], ["green"]) == 0.0


_WORDS = st.lists(st.sampled_from(["a", "apple", "b", "beta", "ça", "zz", "Z9", "_x", "日本"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_WORDS, _WORDS)
def test_pair_similarity_is_the_tfidf_cosine_float_for_float(a: list[str], b: list[str]) -> None:
    """The text evaluator's shortcut gives the float the two TF-IDF vectors' cosine gives, bit for bit."""
    assert pair_similarity(a, b) == cosine(*tfidf_of_tokens([a, b]))
    assert pair_similarity(b, a) == cosine(*tfidf_of_tokens([b, a]))


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60) | st.text(alphabet="ab_1 é-\u0301\u200d.", max_size=60))
def test_tokens_are_scikit_learns_tokens(text: str) -> None:
    """The tokenizer without ``\\b`` finds what scikit-learn's default pattern finds, on any Unicode text."""
    assert tokens(text) == re.findall(r"(?u)\b\w\w+\b", text.lower())


def test_rouge_l_by_hand() -> None:
    # LCS("a b c d", "a c e") = "a c": P = 2/4, R = 2/3, F = 2PR / (P + R) = 4/7
    assert rouge_l("a b c d", "a c e") == pytest.approx(4 / 7)
    assert rouge_l("Same words here", "same words here") == 1.0
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("alpha", "beta") == 0.0


async def test_text_evaluator_reference_similarity_and_diversity() -> None:
    reference = "A: plan ready"
    ctx = context(references=(reference, "something else entirely"),
                  outcome=TeamOutcome(state="completed", output="A: plan ready"))  # fmt: skip
    evaluator = TextEvaluator()
    result = await evaluator.evaluate(ctx)
    assert result.references == 2
    assert result.rouge_l_max == 1.0 and result.tfidf_cosine_max == pytest.approx(1.0)
    assert result.rouge_l == pytest.approx(0.5)  # 1.0 and 0.0
    # pairs (A, B) and (A, C): A's requests and the replies share no words -> similarity 0, diversity 1
    assert [p.agents for p in result.pairs] == [("A", "B"), ("A", "C")]
    assert all(p.similarity == 0.0 for p in result.pairs)
    assert result.diversity == 1.0 and result.repetition == 0.0
    assert result.messages == 4  # the host's call to A is not between agents
    assert evaluator.score(result, ctx) == pytest.approx((result.reference_similarity + 1.0) / 2)


async def test_text_evaluator_sees_agents_repeating_each_other() -> None:
    echo = team_trace(b_reply="Find launch venues")  # B repeats A's words back
    result = await TextEvaluator().evaluate(context(echo))
    pair = {p.agents: p.similarity for p in result.pairs}
    assert pair[("A", "B")] == pytest.approx(1.0)
    assert result.diversity == pytest.approx(0.5)  # mean similarity of (A,B) = 1 and (A,C) = 0
    assert result.repetition == pytest.approx(1 / 4)


async def test_text_evaluator_without_references_or_content() -> None:
    bare = [s._replace(attributes={k: v for k, v in s.attributes.items() if not k.startswith("gen_ai.input")
                                   and not k.startswith("gen_ai.output")}) for s in team_trace()]  # fmt: skip
    evaluator = TextEvaluator()
    ctx = context(bare)
    result = await evaluator.evaluate(ctx)
    assert result.reference_similarity is None and result.diversity is None
    assert result.note == (
        "the scenario has no reference texts; no message content on the spans "
        "(turn on content capture to measure diversity)"
    )
    assert evaluator.score(result, ctx) is None


def test_calls_read_captured_text() -> None:
    calls = calls_of(SpanTree(team_trace()))
    assert [(c.caller, c.callee, c.request_text, c.response_text) for c in calls][1] == (
        "A",
        "B",
        "Find launch venues",
        "B found three options",
    )


def _lcs_table(x: list[str], y: list[str]) -> int:
    """The textbook dynamic programme for the longest common subsequence (the reference)."""
    previous = [0] * (len(y) + 1)
    for xi in x:
        current = [0]
        for j, yj in enumerate(y, start=1):
            current.append(previous[j - 1] + 1 if xi == yj else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=70), st.lists(st.sampled_from("abcdef"), max_size=70))
def test_bit_parallel_lcs_equals_the_table(x: list[str], y: list[str]) -> None:
    from coordbench.evals.textsim import _lcs  # pyright: ignore[reportPrivateUsage]

    assert _lcs(x, y) == _lcs_table(x, y)
