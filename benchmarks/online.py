"""Online evaluation: what it costs ingest, how many traces it scores a second, how soon after they complete.

*Ingest cost.* A fresh ``coordbench receiver`` process takes 1,000 requests of 512 protobuf
spans (the ingest benchmark's bodies; four connections, from a load-generator process) with
online evaluation off, then on, three rounds, alternating. Those spans are A2A calls in 16
traces a request, so with evaluation on each of their 16,000 traces becomes due half a second
after its last span and goes to the worker while the load still runs (past the queue's bound
they are skipped, and counted). The worker process is started before the load (one trace
evaluated first), as in a receiver that has been running.

*Evaluation.* A receiver with evaluation on takes background spans at a fixed rate (no A2A
calls: checked and counted, never scored) while 20-agent traces (about 200 spans each, with
captured message text) arrive one every 0.25 s. Each is scored once quiet (0.5 s here); the
time from the end of its quiet period to its evaluation being readable is its *delay after
completing*. Then a burst of traces arrives at once: traces scored per second, one worker.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.evaluation import synthetic_trace
from benchmarks.ingest import _free_port, _load, _stats, start_receiver
from benchmarks.payloads import SPANS_PER_REQUEST, bodies, spans_for
from coordbench import semconv
from coordbench.otlp import export_request

QUIET = 0.5
LOAD_REQUESTS = 1_000
"""Requests of the ingest-cost load: long enough (seconds) that its traces go to the worker while it runs."""
ROUNDS = 5
PACED = 40
PACE = 0.25
BURST = 40
BACKGROUND_SPANS_PER_S = 20_000
TRACE_SPANS = 200
AGENTS = 20
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def _env(evaluate: bool) -> dict[str, str]:
    return {
        "COORDBENCH_EVALUATE": "true" if evaluate else "false",
        "COORDBENCH_EVALUATE_QUIET": str(QUIET),
        "COORDBENCH_EVALUATE_QUEUE": "1000",
    }


def _team_body(seed: int) -> tuple[str, bytes]:
    spans = synthetic_trace(TRACE_SPANS, agents=AGENTS, seed=seed, content=True)
    return spans[0].trace_id, export_request(spans).SerializeToString()


def _evaluated(url: str, trace_id: str, timeout: float = 600) -> dict[str, Any]:
    answer = httpx.get(f"{url}/v1/traces/{trace_id}/evaluation", params={"wait": timeout}, timeout=timeout + 30)
    answer.raise_for_status()
    return answer.json()


def _warm(url: str) -> None:
    """One trace evaluated: the worker process is running before anything is measured."""
    trace_id, body = _team_body(9_999)
    httpx.post(f"{url}/v1/traces", content=body, headers=PROTOBUF, timeout=60).raise_for_status()
    _evaluated(url, trace_id)


@dataclass
class IngestRound:
    evaluate: bool
    spans_per_s: float
    evaluated: int = 0
    skipped: int = 0


def _ingest(evaluate: bool, payloads: list[bytes]) -> IngestRound:
    port = _free_port()
    proc = start_receiver(port, extra_env=_env(evaluate))
    url = f"http://127.0.0.1:{port}"
    try:
        if evaluate:
            _warm(url)
        before = _stats(port, False)
        report = _load(f"{url}/v1/traces", payloads, "application/x-protobuf", False)
        after = _stats(port, False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    stored = after["stored"] - before["stored"]
    done = after.get("evaluations") or {}
    was = before.get("evaluations") or {}
    return IngestRound(
        evaluate,
        stored / report["seconds"],
        evaluated=int(done.get("evaluated", 0)) - int(was.get("evaluated", 0)),
        skipped=sum(done.get("skipped", {}).values()) - sum(was.get("skipped", {}).values()),
    )


def _background(url: str, stop: threading.Event) -> int:
    """Spans without A2A calls at a fixed rate until ``stop``; how many were sent."""
    per_body = SPANS_PER_REQUEST
    interval = per_body / BACKGROUND_SPANS_PER_S
    plain = []
    for r in range(1, 41):
        spans = [
            s._replace(attributes={k: v for k, v in s.attributes.items() if k != semconv.GEN_AI_OPERATION_NAME},
                       trace_id=f"{r + 10_000:016x}{s.trace_id[16:]}")
            for s in spans_for(r, per_body)
        ]  # fmt: skip
        plain.append(export_request(spans).SerializeToString())
    sent = 0
    next_at = time.monotonic()
    with httpx.Client(timeout=60) as client:
        n = 0
        while not stop.is_set():
            client.post(f"{url}/v1/traces", content=plain[n % len(plain)], headers=PROTOBUF).raise_for_status()
            sent += per_body
            n += 1
            next_at += interval
            stop.wait(max(0.0, next_at - time.monotonic()))
    return sent


@dataclass
class EvaluationOutcome:
    delays: list[float]
    """Seconds from the end of each paced trace's quiet period to its evaluation."""
    burst_per_s: float
    run_seconds: list[float]
    background_spans_per_s: float


def _evaluation() -> EvaluationOutcome:
    port = _free_port()
    proc = start_receiver(port, extra_env=_env(True))
    url = f"http://127.0.0.1:{port}"
    try:
        _warm(url)
        stop = threading.Event()
        sent: list[int] = []
        background = threading.Thread(target=lambda: sent.append(_background(url, stop)), daemon=True)
        started = time.monotonic()
        background.start()
        paced = [_team_body(seed) for seed in range(1, PACED + 1)]
        posted: dict[str, int] = {}
        with httpx.Client(timeout=60) as client:
            next_at = time.monotonic()
            for trace_id, body in paced:
                client.post(f"{url}/v1/traces", content=body, headers=PROTOBUF).raise_for_status()
                posted[trace_id] = time.time_ns()
                next_at += PACE
                time.sleep(max(0.0, next_at - time.monotonic()))
        records = {trace_id: _evaluated(url, trace_id) for trace_id in posted}
        stop.set()
        background.join()
        elapsed = time.monotonic() - started
        delays = [(records[t]["evaluated_unix_nano"] - posted[t]) / 1e9 - QUIET for t in posted]
        burst = [_team_body(seed) for seed in range(1_001, 1_001 + BURST)]
        with httpx.Client(timeout=60) as client:
            for _trace_id, body in burst:
                client.post(f"{url}/v1/traces", content=body, headers=PROTOBUF).raise_for_status()
        burst_records = [_evaluated(url, trace_id) for trace_id, _ in burst]
        done = sorted(r["evaluated_unix_nano"] for r in burst_records)
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert all(r["revision"] == 1 for r in burst_records)
    run_sum = _sample(metrics, "coordbench_evaluation_run_duration_seconds_sum")
    run_count = _sample(metrics, "coordbench_evaluation_run_duration_seconds_count")
    return EvaluationOutcome(
        delays=sorted(delays),
        burst_per_s=(len(done) - 1) / max((done[-1] - done[0]) / 1e9, 1e-9),
        run_seconds=[run_sum / run_count] if run_count else [],
        background_spans_per_s=(sent[0] if sent else 0) / elapsed,
    )


def _sample(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


@dataclass
class Outcome:
    rounds: list[IngestRound]
    evaluation: EvaluationOutcome


def run() -> Outcome:
    payloads = bodies(LOAD_REQUESTS, fmt="protobuf", compress=False)
    rounds: list[IngestRound] = []
    for _ in range(ROUNDS):
        rounds.append(_ingest(False, payloads))
        rounds.append(_ingest(True, payloads))
    return Outcome(rounds, _evaluation())


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(outcome: Outcome) -> str:
    off = [r.spans_per_s for r in outcome.rounds if not r.evaluate]
    on = [r for r in outcome.rounds if r.evaluate]
    ratios = [b.spans_per_s / a for a, b in zip(off, on, strict=True)]
    e = outcome.evaluation
    lines = [
        "## Online evaluation (`benchmarks/online.py`)",
        "",
        f"*Ingest cost*: a fresh receiver per run takes {LOAD_REQUESTS:,} requests of {SPANS_PER_REQUEST} "
        "protobuf spans "
        "(A2A calls, 16 traces a request) from a load-generator process, with online evaluation off and on "
        f"({ROUNDS} rounds, alternating; quiet period {QUIET} s, so traces go to the worker during the load). "
        "*Evaluation*: 20-agent traces (about 200 spans, captured text) posted one every "
        f"{PACE} s beside {BACKGROUND_SPANS_PER_S:,} background spans/s without A2A calls; the delay after "
        f"completing is from the end of a trace's quiet period to its evaluation being readable. Then {BURST} "
        "such traces at once: traces scored per second by one worker process (first to last evaluation). "
        "The worker runs at the default `evaluate_nice` (10 below the receiver's CPU priority).",
        "",
        "| evaluation | stored spans/s (median) | runs | traces evaluated during the load | skipped (queue full) |",
        "|---|---:|---|---:|---:|",
        f"| off | {statistics.median(off):,.0f} | {', '.join(f'{v:,.0f}' for v in off)} | - | - |",
        f"| on | {statistics.median(r.spans_per_s for r in on):,.0f} | "
        f"{', '.join(f'{r.spans_per_s:,.0f}' for r in on)} | {statistics.median(r.evaluated for r in on):,.0f} | "
        f"{statistics.median(r.skipped for r in on):,.0f} |",
        "",
        f"On / off, round by round: {', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f}; "
        f"evaluation costs {1 - statistics.median(ratios):.0%} of ingest throughput). Target: under 10%.",
        "",
        "| 20-agent traces | figure |",
        "|---|---:|",
        f"| delay after completing, median | {statistics.median(e.delays):.3f} s |",
        f"| delay after completing, p95 | {_percentile(e.delays, 0.95):.3f} s |",
        f"| delay after completing, max | {max(e.delays):.3f} s |",
        f"| evaluation in the worker, mean | {statistics.fmean(e.run_seconds) * 1e3:.0f} ms |"
        if e.run_seconds
        else "| evaluation in the worker | - |",
        f"| traces scored per second, burst of {BURST} | {e.burst_per_s:.1f} |",
        f"| background spans/s reached | {e.background_spans_per_s:,.0f} |",
        "",
        "Target: a 20-agent trace scored within 1 s of completing.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
