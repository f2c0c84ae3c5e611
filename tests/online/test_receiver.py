"""Online evaluation in a live receiver: real OTLP bytes in, each completed trace evaluated once, read back.

Waits follow the receiver's own events (``?wait=`` returns as soon as the evaluation is
recorded) or poll a counter until it moves, never a clock: the quiet and settle periods are
the product's own timers, set short here.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Backend, StartBackend
from coordbench.online.evaluator import OnlineEvaluator
from coordbench.server.evaluations_api import evaluator_of
from online.traces import CRASHED, SERIAL, evaluation, post, stats, team_trace, trace_id, until
from support.spans import sid, span

ONLINE = {"evaluate": True, "evaluate_quiet": 0.2, "evaluate_settle": 1.0}


def running_evaluator(app: object) -> OnlineEvaluator:
    """The app's online evaluator (the test started it with online evaluation on)."""
    found = evaluator_of(app)  # type: ignore[arg-type]
    assert found is not None
    return found


def evaluation_line(record_text: str) -> str:
    """The ``evaluation`` member of a record, verbatim."""
    head, _, line = record_text.partition(',"evaluation":')
    assert head.startswith("{") and line.endswith("}")
    return line[:-1]


@pytest.fixture
def online(start_backend: StartBackend) -> Backend:
    return start_backend(**ONLINE)


def test_a_trace_arriving_out_of_order_is_evaluated_once_when_complete(start_backend: StartBackend) -> None:
    # an incomplete trace is evaluated as it is once idle for `settle`: here never during the test, so
    # however long this busy machine takes between the two posts, the trace is complete when evaluated
    online = start_backend(**{**ONLINE, "evaluate_settle": 3600.0})
    spans = team_trace(1)
    root = next(s for s in spans if s.parent_span_id is None)
    leaves = [s for s in spans if s.service_name in {"researcher", "analyst", "writer"}]
    first = [s for s in spans if s not in leaves and s is not root]
    post(online.url, [*first, *leaves[:2]])  # children first; the root and one member's spans are late
    until(lambda: stats(online.url)["found_incomplete"] >= 1, "the quiet, incomplete trace was looked at")
    assert stats(online.url)["evaluated"] == 0
    post(online.url, [leaves[2], root])
    record = evaluation(online.url, trace_id(1))
    assert record["revision"] == 1 and record["complete"] is True and record["span_count"] == len(spans)
    assert record["team"] == "assessor"  # no service.namespace: the root's service
    assert stats(online.url)["evaluated"] == 1

    # a late span changes the trace: evaluated again, once
    late = span("late tool call", span_id=sid(900), parent=root.span_id, service="writer", trace_id=trace_id(1))
    post(online.url, [late])
    again = evaluation(online.url, trace_id(1), revision=2)
    assert (again["revision"], again["late_spans"], again["span_count"]) == (2, 1, len(spans) + 1)
    # later late spans are counted, never evaluated again; a re-sent span is no change at all
    post(online.url, [span("later", span_id=sid(901), parent=root.span_id, service="writer", trace_id=trace_id(1))])
    post(online.url, [late])
    counters = stats(online.url)
    assert (counters["evaluated"], counters["reevaluated"], counters["late_spans"], counters["pending"]) == (2, 1, 2, 0)


def test_the_evaluation_is_the_bytes_coordbench_evaluate_prints(online: Backend) -> None:
    post(online.url, team_trace(2, SERIAL, namespace="payments"))
    evaluation(online.url, trace_id(2))
    text = httpx.get(f"{online.url}/v1/traces/{trace_id(2)}/evaluation", timeout=30).text
    printed = subprocess.run(
        [sys.executable, "-m", "coordbench.cli", "evaluate", "--trace-id", trace_id(2), "--receiver", online.url],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    assert printed == evaluation_line(text) + "\n"
    record = httpx.get(f"{online.url}/v1/traces/{trace_id(2)}/evaluation", timeout=30).json()
    assert record["team"] == "payments"
    assert "parallelism.serialised_work" in record["scenarios"][0]["fired"]
    assert record["evaluation"]["trace_id"] == trace_id(2)


def test_a_crashed_member_is_evaluated_once_the_trace_settles_and_says_incomplete(online: Backend) -> None:
    post(online.url, team_trace(3, CRASHED))
    record = evaluation(online.url, trace_id(3))
    assert record["complete"] is False
    fired = record["scenarios"][0]["fired"]
    assert "robustness.unverified_calls" in fired or "robustness.incomplete_trace" in fired, fired
    assert stats(online.url)["evaluated_incomplete"] == 1


def test_traces_without_a2a_calls_are_counted_not_evaluated(online: Backend) -> None:
    post(online.url, [span("GET /health", span_id=sid(1), service="web", trace_id=trace_id(4))])
    until(lambda: stats(online.url)["without_agent_calls"] == 1, "the plain trace was looked at")
    answer = httpx.get(f"{online.url}/v1/traces/{trace_id(4)}/evaluation", timeout=30)
    assert answer.status_code == 404
    assert "held but not evaluated" in answer.json()["detail"]


def test_a_flood_skips_evaluations_counted_and_keeps_ingest_answers(start_backend: StartBackend) -> None:
    backend = start_backend(**ONLINE, evaluate_queue=1)
    traces = [team_trace(100 + n) for n in range(30)]
    post(backend.url, [s for t in traces for s in t])  # thirty traces complete at the same moment
    assert backend.stats()["stored"] == sum(len(t) for t in traces)

    def settled() -> bool:
        counters = stats(backend.url)
        skipped: dict[str, int] = counters["skipped"]  # type: ignore[assignment]
        return counters["evaluated"] + skipped.get("queue_full", 0) == 30

    until(settled, "every trace evaluated or counted as skipped")
    counters = stats(backend.url)
    assert counters["skipped"]["queue_full"] >= 1  # type: ignore[index]
    listed = httpx.get(f"{backend.url}/v1/evaluations", params={"limit": 1000}, timeout=30).json()["evaluations"]
    assert len(listed) == counters["evaluated"]
    metrics = httpx.get(f"{backend.url}/metrics", timeout=30).text
    assert (
        f'coordbench_traces_skipped_total{{reason="queue_full"}} {float(counters["skipped"]["queue_full"])}' in metrics
    )  # type: ignore[index]


def test_a_trace_evicted_before_its_evaluation_is_counted(start_backend: StartBackend) -> None:
    backend = start_backend(evaluate=True, evaluate_quiet=600, max_traces=2, evict_after=0)
    for n in range(3):
        post(backend.url, team_trace(200 + n))
    assert stats(backend.url)["skipped"] == {"evicted": 1}
    assert backend.stats()["traces"] == 2


def test_listing_by_team_and_time(online: Backend) -> None:
    post(online.url, team_trace(10, namespace="search"))
    evaluation(online.url, trace_id(10))
    middle = time.time()
    post(online.url, team_trace(11, SERIAL, namespace="search"))
    post(online.url, team_trace(12, namespace="billing"))
    evaluation(online.url, trace_id(11))
    evaluation(online.url, trace_id(12))

    def listed(**params: object) -> list[str]:
        answer = httpx.get(f"{online.url}/v1/evaluations", params=params, timeout=30)  # type: ignore[arg-type]
        assert answer.status_code == 200, answer.text
        return [e["trace_id"] for e in answer.json()["evaluations"]]

    assert set(listed(team="search")) == {trace_id(10), trace_id(11)}
    assert listed(team="billing") == [trace_id(12)]
    assert set(listed(since=middle)) == {trace_id(11), trace_id(12)}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(middle - 3600)) + "Z"
    assert len(listed(since=stamp)) == 3
    assert len(listed(limit=1)) == 1
    assert listed(team="nobody") == []


@pytest.mark.parametrize(
    ("path", "params", "status", "says"),
    [
        ("/v1/evaluations", {"since": "yesterday"}, 400, "neither Unix seconds nor an RFC 3339 time"),
        ("/v1/evaluations", {"since": "2026-11-26T10:00:00"}, 400, "with an offset"),
        ("/v1/evaluations", {"since": "1e300"}, 400, "out of range"),
        ("/v1/evaluations", {"since": "nan"}, 400, "out of range"),
        ("/v1/evaluations", {"since": "x" * 65}, 422, "at most 64 characters"),
        ("/v1/evaluations", {"limit": "0"}, 422, "greater than or equal to 1"),
        ("/v1/evaluations", {"team": "t" * 256}, 422, "at most 255 characters"),
        (f"/v1/traces/{'z' * 32}/evaluation", {}, 400, "32 hex digits"),
        ("/v1/traces/abc/evaluation", {}, 400, "32 hex digits"),
        (f"/v1/traces/{trace_id(999)}/evaluation", {}, 404, "is not held and has no evaluation"),
        (f"/v1/traces/{trace_id(999)}/evaluation", {"wait": "601"}, 422, "less than or equal to 600"),
        (f"/v1/traces/{trace_id(999)}/evaluation", {"revision": "3"}, 422, "less than or equal to 2"),
    ],
)
def test_bad_requests_get_precise_answers(
    online: Backend, path: str, params: dict[str, str], status: int, says: str
) -> None:
    answer = httpx.get(f"{online.url}{path}", params=params, timeout=30)
    assert answer.status_code == status
    assert says in answer.text


def test_with_online_evaluation_off_the_routes_say_how_to_turn_it_on(backend: Backend) -> None:
    for path in ("/v1/evaluations", f"/v1/traces/{trace_id(1)}/evaluation"):
        answer = httpx.get(f"{backend.url}{path}", timeout=30)
        assert answer.status_code == 404
        assert "--evaluate" in answer.json()["detail"]
    assert "evaluations" not in backend.stats()


def test_metrics_agree_with_the_evaluations(online: Backend) -> None:
    hostile = 'team "x"\n\\' + "y" * 300
    post(online.url, team_trace(20, namespace="search"))
    post(online.url, team_trace(21, SERIAL, namespace="search"))
    post(online.url, team_trace(22, namespace=hostile))
    records = [evaluation(online.url, trace_id(n)) for n in (20, 21, 22)]
    samples = {}
    for family in text_string_to_metric_families(httpx.get(f"{online.url}/metrics", timeout=30).text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    cut = hostile[:80]  # label values are bounded in length
    for team, expected in (("search", records[:2]), (cut, records[2:])):
        scenario = expected[0]["scenarios"][0]["scenario"]
        key = (("scenario", scenario), ("team", team))
        assert samples[("coordbench_evaluation_score_count", key)] == len(expected)
        total = sum(r["scenarios"][0]["score"] for r in expected)
        assert samples[("coordbench_evaluation_score_sum", key)] == pytest.approx(total)
        fired: dict[str, int] = {}
        for record in expected:
            for evidence in record["scenarios"][0]["fired"] or ["none"]:  # a clean scenario counts as "none"
                fired[evidence] = fired.get(evidence, 0) + 1
        counted = {
            dict(labels)["evidence"]: value
            for (name, labels), value in samples.items()
            if name == "coordbench_evidence_total" and dict(labels)["team"] == team
        }
        assert counted == fired
    assert samples[("coordbench_traces_evaluated_total", (("revision", "1"), ("team", "search")))] == 2


def test_the_llm_judge_sees_the_sampled_traces_within_its_rate(
    start_backend: StartBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.fake_llm import FakeLLM

    secret = "sk-online-0123456789-secret"
    with FakeLLM() as base_url:
        monkeypatch.setenv("AGENTBEATS_LLM_API_KEY", secret)  # the worker process inherits the environment
        monkeypatch.setenv("AGENTBEATS_LLM_BASE_URL", base_url)
        monkeypatch.setenv("AGENTBEATS_LLM_MODEL", "judge-model")
        backend = start_backend(**ONLINE, judge_sample=1.0, judge_per_minute=1.0)
        post(backend.url, team_trace(40))
        first = evaluation(backend.url, trace_id(40))
        post(backend.url, team_trace(41))
        second = evaluation(backend.url, trace_id(41))
    assert (first["judge"], second["judge"]) == (True, False)  # one a minute: the second is left to the rules
    judges = [r["evaluation"]["evaluations"][0]["results"]["llm_judge"]["judge"] for r in (first, second)]
    assert judges == ["llm", "rules"]
    counters = stats(backend.url)
    assert (counters["judged"], counters["judge_rate_limited"]) == (1, 1)
    for n in (40, 41):
        text = httpx.get(f"{backend.url}/v1/traces/{trace_id(n)}/evaluation", timeout=30).text
        assert secret not in text


def test_the_green_evaluates_online_too(tmp_path: Path) -> None:
    from coordbench.green import create_green_app
    from coordbench.green.server import GreenSettings
    from coordbench.testing import LoopbackServer

    settings = {**ONLINE, "output_dir": tmp_path, "grpc_port": None}
    server = LoopbackServer(lambda url: create_green_app(GreenSettings(card_url=url, **settings)))  # type: ignore[arg-type]
    url = server.start().rstrip("/")
    try:
        post(url, team_trace(60, SERIAL, namespace="green-team"))
        record = evaluation(url, trace_id(60))
        assert record["team"] == "green-team" and "parallelism.serialised_work" in record["scenarios"][0]["fired"]
        assert "coordbench_evaluation_score_count" in httpx.get(f"{url}/metrics", timeout=30).text
    finally:
        server.stop()


def test_an_evaluation_past_its_timeout_is_killed_counted_and_the_next_one_runs(start_backend: StartBackend) -> None:
    # a first evaluation spawns its worker: far longer than a millisecond on any machine
    backend = start_backend(**ONLINE, evaluate_timeout=0.001)
    post(backend.url, team_trace(70))
    until(lambda: stats(backend.url)["skipped"].get("timed_out") == 1, "the overrun was counted")  # type: ignore[union-attr]
    assert running_evaluator(backend.app).worker_pids() == []  # killed
    assert httpx.get(f"{backend.url}/healthz", timeout=30).status_code == 200
    running_evaluator(backend.app).settings = dataclasses.replace(
        running_evaluator(backend.app).settings, timeout=600.0
    )
    post(backend.url, team_trace(71))
    assert evaluation(backend.url, trace_id(71))["revision"] == 1  # a fresh worker took the next trace


def test_a_worker_that_dies_is_replaced(online: Backend) -> None:
    post(online.url, team_trace(80))
    evaluation(online.url, trace_id(80))
    (pid,) = running_evaluator(online.app).worker_pids()
    os.kill(pid, signal.SIGKILL)
    until(lambda: running_evaluator(online.app).worker_pids() == [], "the worker is gone")
    post(online.url, team_trace(81))
    assert evaluation(online.url, trace_id(81))["revision"] == 1
    assert running_evaluator(online.app).worker_pids() not in ([], [pid])


@pytest.mark.parametrize("nice", [None, 0])
def test_the_worker_runs_below_the_receivers_cpu_priority(start_backend: StartBackend, nice: int | None) -> None:
    # evaluation is background work: on a machine short of cores, ingest goes first (the default: 10 lower)
    backend = start_backend(**ONLINE, **({} if nice is None else {"evaluate_nice": nice}))
    post(backend.url, team_trace(85))
    evaluation(backend.url, trace_id(85))
    (pid,) = running_evaluator(backend.app).worker_pids()
    lowered = os.getpriority(os.PRIO_PROCESS, pid) - os.getpriority(os.PRIO_PROCESS, 0)
    assert lowered == (10 if nice is None else nice)


def test_a_large_trace_that_grows_while_evaluated_is_whole_and_evaluated_once_more(online: Backend) -> None:
    from evals.teams import Team, Worker

    # 1,200+ spans: sent to the worker in two chunks, and evaluated for longer than the quiet period
    spans = team_trace(91, Team(workers=tuple(Worker(f"member-{n:04d}") for n in range(600))))
    assert len(spans) > 1_000
    root = next(s for s in spans if s.parent_span_id is None)
    post(online.url, spans)

    def taken() -> bool:  # out of the queue and not evaluated yet: a worker has it
        counters = stats(online.url)
        return counters["pending"] == counters["queued"] == 0

    until(taken, "a worker took the trace")
    late = span("late", span_id=sid(0xFFFF01), parent=root.span_id, service="host", trace_id=trace_id(91))
    post(online.url, [late])
    record = evaluation(online.url, trace_id(91), revision=2)
    assert (record["revision"], record["late_spans"], record["span_count"]) == (2, 1, len(spans) + 1)
    assert record["complete"] is True
    assert len(record["evaluation"]["evaluations"][0]["results"]["graph"]["agents"]) >= 600
