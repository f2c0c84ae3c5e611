"""Real LLM teams judged right: orchestrators that reason between calls, chains, group chats, one-way messages.

Relations over generated runs (:mod:`tests.evals.llm_teams`), each changing one thing:

- an orchestrator that reasons between calls (its model step reads the last answer, or its
  thought quotes it, or a model step recorded no content) scores, in coordination quality,
  within 0.02 of the same team working in parallel;
- a chain or group chat that hands each speaker the last message (or the conversation so far,
  even cut short by the instrumentation's limit) is not serialised;
- the same coordinator calling independent members back to back is flagged, with or without
  a step of its own between the calls that reads nothing of the answers;
- a roster an orchestrator picks from with a model is no fault; a member left idle by a team
  that routes without a model still costs (``tests/evals/test_live_judgement.py`` holds it live).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.evals.llm_teams import HOST, Run, evaluate_run, run_spans, runs

from coordbench import semconv
from coordbench.evals.dependency import TIMING_CONFIDENCE, Dependencies, reads, steps_of
from coordbench.evals.evidence import TeamTrace, depends_on
from coordbench.spantree import SpanTree

EXAMPLES = int(os.environ.get("COORDBENCH_RELATION_EXAMPLES", "40"))
RELATION = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASE = Run(
    speakers=("researcher", "analyst", "writer"),
    words=(("granite0", "survey0"), ("budget1", "tender1"), ("timeline2", "risk2")),
)


def _parts(run: Run) -> dict[str, object]:
    return dict(evaluate_run(run).results.coordination.parts)


def _quality(run: Run) -> float:
    return evaluate_run(run).results.coordination.coordination_quality


def _serialised(run: Run) -> bool:
    return "serialised_work" in evaluate_run(run).results.coordination.parts["parallelism"].fired


@RELATION
@given(runs(), st.sampled_from(["reads", "quotes", "silent"]))
def test_an_orchestrator_that_reasons_between_calls_scores_as_the_team_in_parallel(run: Run, thinking: str) -> None:
    sequential = replace(run, thinking=thinking)  # pyright: ignore[reportArgumentType]
    parallel = replace(run, parallel=True, thinking="none")
    assert abs(_quality(sequential) - _quality(parallel)) <= 0.02
    assert not _serialised(sequential)


@RELATION
@given(runs(), st.sampled_from(["last", "conversation"]))
def test_a_group_chat_handing_on_the_last_message_is_not_serialised(run: Run, carry: str) -> None:
    chat = replace(run, thinking="none", carry=carry)  # pyright: ignore[reportArgumentType]
    assert not _serialised(chat)
    assert abs(_quality(chat) - _quality(replace(run, parallel=True, thinking="none"))) <= 0.02


@RELATION
@given(runs())
def test_a_conversation_cut_short_by_the_capture_limit_is_not_read_as_independent(run: Run) -> None:
    chat = replace(run, thinking="none", carry="conversation", cut=40)  # every request cut well before its end
    assert not _serialised(chat)


@RELATION
@given(runs(min_speakers=3), st.sampled_from(["none", "cosmetic"]))
def test_independent_calls_back_to_back_are_flagged_with_or_without_a_step_that_reads_nothing(
    run: Run, thinking: str
) -> None:
    serial = replace(run, thinking=thinking)  # pyright: ignore[reportArgumentType]
    assert _serialised(serial)
    assert _quality(serial) < _quality(replace(run, parallel=True, thinking="none")) - 0.02


def test_the_dependency_reads_order_through_intermediate_calls() -> None:
    """Hand-worked: each request carries the answer before it only; the third rests on the first through the second."""
    spans = run_spans(replace(BASE, thinking="none", carry="last"))
    trace = TeamTrace.build(SpanTree(spans), [HOST])
    [request] = [r for r, calls in trace.by_request.items() if calls[0].call.caller == "coordinator"]
    first, second, third = sorted(trace.by_request[request], key=lambda c: c.span.start_time_unix_nano)
    dependencies = Dependencies(trace.tree, first.request, [first, second, third])

    assert depends_on(third, first).value is False  # the third request quotes none of the first answer
    assert depends_on(third, second).value is True
    judged = dependencies.of(third, first)
    assert (judged.value, judged.confidence) == (True, 1.0)


def test_a_step_between_calls_decides_by_what_its_content_shows() -> None:
    """The step's captured input holds the answer: firm; no content at all: timing, weaker; unrelated text: nothing."""
    for thinking, expected in (
        ("reads", (True, 1.0)),
        ("silent", (True, TIMING_CONFIDENCE)),
        ("cosmetic", (False, 1.0)),
    ):
        spans = run_spans(replace(BASE, thinking=thinking))  # pyright: ignore[reportArgumentType]
        trace = TeamTrace.build(SpanTree(spans), [HOST])
        [calls] = [c for c in trace.by_request.values() if c[0].call.caller == "coordinator"]
        first, second, _ = sorted(calls, key=lambda c: c.span.start_time_unix_nano)
        dependencies = Dependencies(trace.tree, first.request, sorted(calls, key=lambda c: c.span.start_time_unix_nano))
        judged = dependencies.of(second, first)
        assert (judged.value, judged.confidence) == expected, thinking
        if thinking != "silent":
            [step, *_] = steps_of(trace.tree, first.request)  # pyright: ignore[reportArgumentType]
            assert reads(step, first).value is (thinking == "reads")


def test_one_way_messages_are_judged_on_what_they_said() -> None:
    """Members that answer by a message of their own: repeating oneself to the same agent is read from them."""
    chat = replace(BASE, speakers=("researcher", "analyst", "researcher"), one_way=True, repeat_last=True, carry="last")
    parts = evaluate_run(chat).results.coordination.parts
    information = parts["information_flow"]
    assert "repeats_itself" in information.fired and information.agents == ["researcher"], information
    fresh = evaluate_run(replace(chat, repeat_last=False)).results.coordination.parts["information_flow"]
    assert fresh.fired == [] and fresh.value > information.value
    assert not _serialised(chat)  # each message back was read before the next speaker was asked


def test_a_roster_picked_from_by_a_model_is_no_fault_and_a_team_without_one_still_pays() -> None:
    picked = replace(BASE, idle=("translator", "designer"))
    participation = evaluate_run(picked).results.coordination.parts["participation"]
    assert participation.value == 1.0 and participation.fired == [] and participation.figures["not_picked"] == 2
    no_model = replace(picked, thinking="none", carry="last")  # the coordinator calls in a fixed order, no model step
    participation = evaluate_run(no_model).results.coordination.parts["participation"]
    assert participation.fired == ["unused_members"] and participation.value == 1 - 0.5 * 2 / 6


def test_a_long_thought_quoting_part_of_a_long_answer_took_it_up() -> None:
    """Hand-built: a 40-sentence answer, a 30-sentence thought quoting one of its sentences (3 content trigrams)."""
    spans = run_spans(replace(BASE, thinking="quotes"))
    trace = TeamTrace.build(SpanTree(spans), [HOST])
    [calls] = [c for c in trace.by_request.values() if c[0].call.caller == "coordinator"]
    first = min(calls, key=lambda c: c.span.start_time_unix_nano)
    [step, *_] = steps_of(trace.tree, first.request)  # pyright: ignore[reportArgumentType]
    first.reply_text = " ".join(f"finding {i} concerns pier{i} and anchor{i}." for i in range(40))
    filler = " ".join(f"then consider option {i} for the plan." for i in range(30))
    quoting = replace(step, output_text=f"{filler} Note that finding 7 concerns pier7 and anchor7.")
    assert reads(quoting, first).value is True  # 4 of its ~170 trigrams, a fraction of the answer's 200
    unrelated = replace(step, output_text=f"{filler} Note that the finding is one of the things to check.")
    assert reads(unrelated, first).value is False  # "finding", but no trigram of the answer's own


def test_a_model_step_whose_captured_input_was_cut_before_the_answer_decides_by_timing() -> None:
    """The instrumentation keeps the head of a long prompt: what the cut text lacks proves nothing."""
    spans = run_spans(replace(BASE, thinking="reads"))
    cut = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "You coordinate a team...[truncated]"}]}])
    spans = [
        s._replace(attributes={**s.attributes, semconv.GEN_AI_INPUT_MESSAGES: cut}) if s.name.startswith("chat") else s
        for s in spans
    ]
    trace = TeamTrace.build(SpanTree(spans), [HOST])
    [calls] = [c for c in trace.by_request.values() if c[0].call.caller == "coordinator"]
    first, second, _ = sorted(calls, key=lambda c: c.span.start_time_unix_nano)
    judged = Dependencies(trace.tree, first.request, sorted(calls, key=lambda c: c.span.start_time_unix_nano)).of(
        second, first
    )
    assert (judged.value, judged.confidence) == (True, TIMING_CONFIDENCE)
