"""Traces recorded from a Google ADK team, judged as the team behaved.

``data/adk/`` holds five traces of the ADK team (:mod:`coordbench.purple.adk`: an ADK LLM
coordinator whose tools are two remote ADK agents, every process under ``opentelemetry-instrument``,
the local model thinking), recorded through a coordbench receiver:

- ``semconv``: ADK's default telemetry (GenAI conventions), its model calls without content;
  coordbench's capture on (A2A text);
- ``semconv-span-content``: the same with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``
  (ADK writes the model's messages on its spans: the researcher's answer reaches the coordinator's
  next model call as a ``tool_call_response`` part);
- ``legacy-call-llm``: ADK's legacy telemetry (``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1``): its
  ``call_llm`` span holds the model request as JSON and stays open while the call it decided
  runs; coordbench's capture off (fingerprints only);
- ``calls-a-tool-it-does-not-have``: through a real green, on the bundled triage task, a coordinator
  that called a tool by a name it does not have, three times, and asked no member;
- ``failed-duplicate``: an earlier coordinator (no ledger) that asked the researcher the same
  thing twice, never asked the writer, and failed on a cut answer.

The first three asked the researcher, then the writer, deciding the second call with a model
call that read the first answer: nothing may be flagged. The last two must be flagged for exactly
what they did. Each structure is checked against the raw spans, not against the evaluator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coordbench import semconv
from coordbench.evals.calls import message_text
from coordbench.evals.dependency import TIMING_CONFIDENCE, dependencies_of
from coordbench.evals.evaluation import ScenarioEvaluation
from coordbench.evals.evidence import FINGERPRINT_CONFIDENCE, TeamTrace
from coordbench.evals.replay import replay_sync
from coordbench.spans import SpanData, span_from_dict
from coordbench.spantree import SpanTree

DATA = Path(__file__).parent / "data" / "adk"
TASK = "Task: summarise the outage of the payments API."
GOOD = ("semconv", "semconv-span-content", "legacy-call-llm")


def _spans(name: str) -> list[SpanData]:
    return [span_from_dict(s) for s in json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["spans"]]


def _evaluated(spans: list[SpanData]) -> ScenarioEvaluation:
    [scenario] = replay_sync(spans[0].trace_id, spans).evaluations
    return scenario


def _a2a_calls(spans: list[SpanData]) -> list[tuple[str, str, str]]:
    """(caller's service, callee, message digest) of every A2A client span, by start: read from the raw spans."""
    out = [
        (str(s.resource.get("service.name")), str(s.attributes[semconv.GEN_AI_AGENT_NAME]),
         str(s.attributes.get("a2a.message.digest")))
        for s in sorted(spans, key=lambda s: s.start_time_unix_nano)
        if s.kind.name == "CLIENT" and "a2a.method.name" in s.attributes
    ]  # fmt: skip
    return out


def _dependency(spans: list[SpanData]) -> tuple[bool | None, float]:
    """Whether the coordinator's call of the writer was read as depending on its call of the researcher."""
    trace = TeamTrace.build(SpanTree(spans), ["client"])
    [(request, calls)] = [(r, c) for r, c in trace.by_request.items() if len(c) == 2]
    researcher, writer = sorted(calls, key=lambda c: c.span.start_time_unix_nano)
    assert (researcher.call.callee, writer.call.callee) == ("researcher", "writer")
    judged = dependencies_of(trace, request).of(writer, researcher)
    return judged.value, judged.confidence


@pytest.mark.parametrize("name", GOOD)
def test_an_adk_coordinator_that_reads_each_answer_before_the_next_call_is_not_flagged(name: str) -> None:
    spans = _spans(name)
    # the raw trace: one tree; the researcher, then the writer, asked once each, the second after the first ended
    assert [s for s in spans if s.parent_span_id is None] == [s for s in spans if s.name == "task"]
    calls = _a2a_calls(spans)
    assert [(caller, callee) for caller, callee, _ in calls] == [
        ("client", "coordinator"),
        ("coordinator", "researcher"),
        ("coordinator", "writer"),
    ]
    ids = {s.span_id for s in spans}
    assert all(s.parent_span_id in ids for s in spans if s.parent_span_id is not None)  # no orphan
    servers = {(s.parent_span_id, s.attributes.get("a2a.message.id")) for s in spans if s.kind.name == "SERVER"}
    for client in (s for s in spans if s.kind.name == "CLIENT" and "a2a.method.name" in s.attributes):
        # every call answered by a server span in the callee's process (below the HTTP POST our client made)
        posts = {p.span_id for p in spans if p.parent_span_id == client.span_id}
        assert any((post, client.attributes["a2a.message.id"]) in servers for post in posts), client.name
    # ADK's own spans sit beside ours: its proxy of each remote agent runs in the coordinator's process
    proxies = {s.name for s in spans if s.kind.name == "INTERNAL" and s.resource.get("service.name") == "coordinator"}
    assert {"invoke_agent researcher", "invoke_agent writer", "execute_tool researcher"} <= proxies

    scenario = _evaluated(spans)
    coordination = scenario.results.coordination
    graph = scenario.results.graph
    assert coordination is not None and graph is not None
    assert {(e.caller, e.callee, e.count) for e in graph.edges} == {
        ("client", "coordinator", 1),
        ("coordinator", "researcher", 1),
        ("coordinator", "writer", 1),
    }  # fmt: skip - ADK's in-process proxies are not agents of their own
    assert coordination.fired == [], coordination.fired
    assert coordination.parts["parallelism"].value == 1.0


def test_how_firmly_each_telemetry_shows_the_decision() -> None:
    # no content on ADK's model spans: a model call ran between the answer and the next call (timing alone)
    assert _dependency(_spans("semconv")) == (True, TIMING_CONFIDENCE)
    # ADK's model input holds the researcher's answer as a tool result: read from the text
    assert _dependency(_spans("semconv-span-content")) == (True, 1.0)
    # the legacy call_llm request JSON holds the answer, known to coordbench by its fingerprint only
    assert _dependency(_spans("legacy-call-llm")) == (True, FINGERPRINT_CONFIDENCE)


def _blind(span: SpanData) -> SpanData:
    """``span`` with every trace of the researcher's answer taken out of a coordinator model call's content."""
    attrs: dict[str, Any] = dict(span.attributes)
    if "gen_ai.input.messages" in attrs:
        attrs["gen_ai.input.messages"] = json.dumps([{"role": "user", "parts": [{"type": "text", "content": TASK}]}])
    if "gcp.vertex.agent.llm_request" in attrs:
        attrs["gcp.vertex.agent.llm_request"] = json.dumps({"contents": [{"role": "user", "parts": [{"text": TASK}]}]})
    return span._replace(attributes=attrs)


@pytest.mark.parametrize("name", ["semconv-span-content", "legacy-call-llm"])
def test_a_model_call_whose_content_shows_no_uptake_does_not_make_the_calls_dependent(name: str) -> None:
    """The same runs with the coordinator's model input holding only the task: back to back, decided on nothing."""
    spans = _spans(name)
    coordinator_steps = {
        s.span_id for s in spans
        if s.resource.get("service.name") == "coordinator"
        and (s.name == "call_llm" or s.name.startswith("generate_content"))
    }  # fmt: skip
    blind = [_blind(s) if s.span_id in coordinator_steps else s for s in spans]
    value, _ = _dependency(blind)
    assert value is not True
    coordination = _evaluated(blind).results.coordination
    assert coordination is not None
    assert "parallelism.serialised_work" in coordination.fired


def test_a_coordinator_that_repeats_a_call_and_skips_a_member_is_flagged_for_it() -> None:
    spans = _spans("failed-duplicate")
    calls = _a2a_calls(spans)
    to_researcher = [digest for caller, callee, digest in calls if (caller, callee) == ("coordinator", "researcher")]
    assert len(to_researcher) == 2 and len(set(to_researcher)) == 1  # the same request twice
    assert not any(callee == "writer" for _, callee, _ in calls)  # the writer was never asked
    states = {s.attributes.get("a2a.task.state") for s in spans if s.name == "invoke_agent coordinator"}
    assert "failed" in states

    coordination = _evaluated(spans).results.coordination
    assert coordination is not None
    assert {"efficiency.duplicate_requests", "robustness.failed_calls"} <= set(coordination.fired)
    assert "parallelism.serialised_work" not in coordination.fired  # the repeat was decided on a model call


def test_tool_calls_and_results_in_genai_messages_are_read_as_text() -> None:
    captured = json.dumps([
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "1", "name": "writer",
                                         "arguments": {"request": "draft it", "notes": ["from the findings"]}}]},
        {"role": "user", "parts": [{"type": "tool_call_response", "id": "1", "response": {"result": "the draft"}}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "done"}]},
    ])  # fmt: skip
    assert message_text(captured) == "draft it\nfrom the findings\nthe draft\ndone"
    # a hostile nesting costs a bounded read
    assert message_text(json.dumps([{"parts": [{"type": "tool_call_response", "response": [[""] * 50_000]}]}])) == (
        "\n" * 9_997  # 10,000 values read: two lists, then 9,998 strings
    )


def test_a_coordinator_that_calls_a_tool_it_does_not_have_is_flagged_for_the_members_it_left_unused() -> None:
    """Recorded through a real green: on the bundled triage task the 0.5B model named its tool "Triage this
    incident..." three times (ADK: no such tool), and answered without asking anyone."""
    spans = _spans("calls-a-tool-it-does-not-have")
    assert not [c for c in _a2a_calls(spans) if c[0] == "coordinator"]  # the coordinator asked no member
    failed_tools = [s for s in spans if s.name.startswith("execute_tool") and s.status_code.name == "ERROR"]
    assert len(failed_tools) == 3
    coordination = _evaluated(spans).results.coordination
    assert coordination is not None
    assert "participation.unused_members" in coordination.fired
    # both members idle, and nothing in the trace asked for either by name: half a member each (docs/scoring.md)
    assert coordination.parts["participation"].value == pytest.approx(1 - (0.5 * 2) / 3)
