"""The coordination score's evidence on small hand-built traces, each value worked out by hand."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from coordbench import semconv
from coordbench.evals import EvalScenario, TeamOutcome, assess_coordination
from coordbench.evals.base import EvalContext
from coordbench.evals.evidence import FINGERPRINT_CONFIDENCE, TeamTrace, depends_on
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import SpanTree
from evals.traces import MS, client, server
from support.spans import TRACE, sid


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def call(caller: str, callee: str, n: int, parent: str, start: float, end: float, **extra: Any) -> list[SpanData]:
    """A CLIENT span (id n) and the callee's SERVER span (id n + 1) inside it."""
    request = extra.get("request")
    if request is not None and "digest" not in extra:
        extra[semconv.A2A_MESSAGE_DIGEST] = digest(request)
    extra.pop("digest", None)
    return [
        client(caller, callee, sid(n), parent, start, end, **extra),
        server(callee, sid(n + 1), sid(n), start + 1, end - 1),
    ]


def host_root(end: float) -> list[SpanData]:
    root = SpanData(TRACE, sid(1), None, "scenario", SpanKind.INTERNAL, 0, int(end * MS),
                    {semconv.A2A_CALL_TYPE: "HOST"}, resource={semconv.SERVICE_NAME: "H"})  # fmt: skip
    return [root, *call("H", "A", 2, sid(1), 0, end, request="the task", reply="A answers: done")]


def coordination(spans: list[SpanData], participants: tuple[str, ...] = ("A", "B", "C")) -> Any:
    ctx = EvalContext.build(
        spans,
        scenario=EvalScenario(id="s"),
        hosts=["H"],
        participants=participants,
        outcome=TeamOutcome(state="completed", output="done"),
    )
    return assess_coordination(ctx)


def parts(result: Any) -> dict[str, float | None]:
    return {name: part.value for name, part in result.parts.items()}


def test_a_pipeline_step_that_carries_the_previous_answer_is_not_serialised_work() -> None:
    """A asks B for findings, then asks C to write them up: C needs B's answer, so one after the other is right."""
    findings = "three venues near the harbour with parking and late opening"
    spans = host_root(100) + call("A", "B", 10, sid(3), 10, 40, request="find venues", reply=findings)
    pipeline = spans + call("A", "C", 20, sid(3), 50, 90, request=f"write up: {findings}", reply="a short post")
    independent = spans + call("A", "C", 20, sid(3), 50, 90, request="draft the invitation", reply="a short post")
    assert parts(coordination(pipeline))["parallelism"] == 1.0
    # C's request carries none of B's answer: it could have run beside it (servers 11-39, 51-89: no overlap)
    result = coordination(independent)
    # serialisation 1 over 2 calls: 1 - max(0, 1/2 - 0.05) / 0.95 (the noise floor taken off)
    assert parts(result)["parallelism"] == pytest.approx(1 - (1 / 2 - 0.05) / 0.95)
    assert result.parts["parallelism"].calls == [sid(20)]
    assert "A ran 1 call(s) one after another" in result.parts["parallelism"].evidence[0]
    # the hub serialising its calls is parallelism's evidence, not counted twice in the bottleneck part
    assert result.parts["bottleneck"].fired == [] and result.parts["bottleneck"].value == 1.0


def test_without_text_sizes_decide_nothing_and_an_unknown_dependency_lowers_the_confidence() -> None:
    """Envelope sizes used to decide dependency (a 4 kB task envelope for 385 characters of text): no more."""
    spans = host_root(100) + call("A", "B", 10, sid(3), 10, 40, **{semconv.A2A_RESPONSE_SIZE: 1000})
    spans += call("A", "C", 20, sid(3), 50, 90, **{semconv.A2A_REQUEST_SIZE: 400})
    trace = TeamTrace.build(SpanTree(spans), ["H"])
    judged = depends_on(trace.calls[2], trace.calls[1])
    assert (judged.value, judged.confidence) == (None, 0.0)  # unknown: no text, no fingerprint
    result = coordination(spans)
    parallelism = result.parts["parallelism"]
    assert parallelism.value == 1.0 and parallelism.fired == []  # the benefit of the doubt: no fault
    assert parallelism.confidence == 0.0  # the one pair compared could not be told


def test_fingerprints_tell_a_dependency_without_the_text() -> None:
    """The default instrumentation records fingerprints, not text: C's request carries B's answer, D's does not."""
    from coordbench.sketch import fingerprint

    findings = "three venues near the harbour with parking and late opening on fridays and a terrace for the launch"
    asked = "find venues for the launch party"
    prints = {
        semconv.A2A_REQUEST_FINGERPRINT: fingerprint(asked),
        semconv.A2A_RESPONSE_FINGERPRINT: fingerprint(findings),
    }
    spans = host_root(100) + call("A", "B", 10, sid(3), 10, 40, **prints)
    carried = {semconv.A2A_REQUEST_FINGERPRINT: fingerprint(f"write the invitation using these findings: {findings}")}
    fresh = {semconv.A2A_REQUEST_FINGERPRINT: fingerprint("draft a short budget table with three columns and totals")}
    pipeline = TeamTrace.build(SpanTree(spans + call("A", "C", 20, sid(3), 50, 90, **carried)), ["H"])
    independent = TeamTrace.build(SpanTree(spans + call("A", "C", 20, sid(3), 50, 90, **fresh)), ["H"])
    yes, no = depends_on(pipeline.calls[2], pipeline.calls[1]), depends_on(independent.calls[2], independent.calls[1])
    assert (yes.value, no.value) == (True, False)
    assert yes.confidence == no.confidence == FINGERPRINT_CONFIDENCE
    result = coordination(spans + call("A", "C", 20, sid(3), 50, 90, **fresh))
    assert result.parts["parallelism"].fired == ["serialised_work"]
    assert result.parts["parallelism"].confidence == FINGERPRINT_CONFIDENCE


def test_a_repeat_after_success_is_a_duplicate_and_after_failure_a_retry() -> None:
    spans = host_root(200)
    spans += call("A", "B", 10, sid(3), 10, 20, request="look it up", reply="found it")
    spans += call("A", "B", 20, sid(3), 30, 40, request="look it up", reply="found it")  # the same again
    spans += call("A", "C", 30, sid(3), 50, 60, request="check it", status=StatusCode.ERROR)
    spans += call("A", "C", 40, sid(3), 70, 80, request="check it", reply="checked")  # retried after failing
    result = coordination(spans)
    trace = TeamTrace.build(SpanTree(spans), ["H"])
    by_id = {c.id: c for c in trace.calls}
    assert by_id[sid(20)].duplicate_of == sid(10) and by_id[sid(40)].retry_of == sid(30)
    assert by_id[sid(40)].duplicate_of is None
    # efficiency: useful B (first), C (retry) of 4 messages; robustness: the duplicate is not a call here
    assert parts(result)["efficiency"] == pytest.approx(2 / 4)
    assert result.parts["efficiency"].fired == ["duplicate_requests"]
    assert result.parts["efficiency"].calls == [sid(20)]
    assert parts(result)["robustness"] == pytest.approx(1 - 1 / 4)  # H->A, A->B, A->C failed, A->C retry
    assert "1 failed request(s) retried successfully" in result.parts["robustness"].evidence


def test_a_result_that_arrives_after_the_request_was_answered_is_late() -> None:
    spans = host_root(100) + call("A", "B", 10, sid(3), 10, 40, request="x", reply="y")
    spans += call("A", "C", 20, sid(3), 50, 150, request="z", reply="w")  # A's server span ends at 99
    result = coordination(spans)
    assert result.parts["efficiency"].fired == ["late_calls"]
    assert parts(result)["efficiency"] == pytest.approx(1 / 2)
    assert "C" not in [m for m in result.members if m not in result.parts["participation"].agents]


def test_concurrent_requests_from_different_callers_queue_on_a_hub() -> None:
    """B and C each ask hub D at 10 ms; D serves one after the other (11-29, 31-49): a queue."""
    spans = host_root(100)
    spans += call("A", "B", 4, sid(3), 2, 60, request="b part", reply="b done")
    spans += call("A", "C", 6, sid(3), 2, 60, request="c part", reply="c done")
    spans += [client("B", "D", sid(10), sid(5), 10, 30, request="from b", reply="d for b"),
              server("D", sid(11), sid(10), 11, 29),
              client("C", "D", sid(12), sid(7), 10, 50, request="from c", reply="d for c"),
              server("D", sid(13), sid(12), 31, 49)]  # fmt: skip
    result = coordination(spans, ("A", "B", "C", "D"))
    assert result.hubs == ["A", "D"]
    bottleneck = result.parts["bottleneck"]
    assert bottleneck.fired == ["requests_queue"] and bottleneck.agents == ["D"]
    assert bottleneck.value == 0.0  # one pair of concurrent requests, fully serialised
    # B, which delegated, spent 36 of its 56 ms in its own work around its 20 ms call: described only
    assert bottleneck.figures["B.own_share"] == pytest.approx(36 / 56)


def test_a_relay_is_found_from_its_digest_when_no_text_was_captured() -> None:
    """A forwards the message it received to B unchanged: a relay hop, though no text was captured."""
    same = digest("the task")
    spans = host_root(100)
    spans[1] = client("H", "A", sid(2), sid(1), 0, 100, **{semconv.A2A_MESSAGE_DIGEST: same})
    spans += call("A", "B", 10, sid(3), 10, 90, digest=None, **{semconv.A2A_MESSAGE_DIGEST: same})
    result = coordination(spans, ("A", "B"))
    assert parts(result)["information_flow"] == 0.0
    assert result.parts["information_flow"].agents == ["A"]
    assert result.parts["participation"].agents == ["A"]  # A added nothing: not a contribution


def test_a_hub_whose_own_time_dominates_is_described_not_scored() -> None:
    """A works 89 ms of its 98 ms itself around two 9 ms calls side by side: reported, not penalised.

    An agent's own time is its own processing (a model's answer, a framework's overhead), and it
    moves with the machine's load (docs/scoring.md): it is no evidence of coordinating badly.
    """
    spans = host_root(100)
    spans += call("A", "B", 10, sid(3), 40, 49, request="b", reply="b done")
    spans += call("A", "C", 20, sid(3), 40, 49, request="c", reply="c done")
    result = coordination(spans)
    share = (98 - 9) / (98 - 9 + 9)
    assert result.parts["bottleneck"].figures["A.own_share"] == pytest.approx(share)
    assert parts(result)["bottleneck"] == 1.0 and result.parts["bottleneck"].fired == []


def test_calls_answered_through_http_spans_are_matched() -> None:
    """httpx's CLIENT span and the callee's ASGI SERVER span sit between our two spans."""
    spans = host_root(100)
    spans += [client("A", "B", sid(10), sid(3), 10, 40, request="x", reply="y"),
              SpanData(TRACE, sid(11), sid(10), "POST", SpanKind.CLIENT, 11 * MS, 39 * MS,
                       resource={semconv.SERVICE_NAME: "A"}),
              SpanData(TRACE, sid(12), sid(11), "POST /", SpanKind.SERVER, 12 * MS, 38 * MS,
                       resource={semconv.SERVICE_NAME: "B"}),
              server("B", sid(13), sid(12), 13, 37)]  # fmt: skip
    trace = TeamTrace.build(SpanTree(spans), ["H"])
    assert trace.calls[1].server is not None and trace.calls[1].server.span_id == sid(13)
    assert trace.orphan_servers == []
    result = coordination(spans, ("A", "B"))
    assert parts(result)["robustness"] == 1.0 and parts(result)["participation"] == 1.0


def test_a_request_whose_callers_span_never_arrived_is_unverified() -> None:
    spans = [*host_root(100), server("B", sid(11), sid(10), 11, 39)]  # A's client span (sid 10) is lost
    result = coordination(spans, ("A", "B"))
    robustness = result.parts["robustness"]
    assert robustness.figures["unverified"] == 1 and robustness.figures["calls"] == 2
    assert robustness.value == pytest.approx((1 - 1 / 2) * 0.75)  # and the tree has an orphan: incomplete
    assert "B" in result.parts["participation"].agents  # its work cannot be shown to be the team's
