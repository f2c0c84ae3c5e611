"""Read API and the live UI: rendering a large trace, and whether the receivers stay responsive meanwhile.

A fresh ``coordbench receiver`` process holds one trace of 10k or 100k spans (the evaluation
benchmark's synthetic trace, posted as OTLP protobuf). This process then times
``GET /v1/traces/{id}`` while a third process probes ``GET /healthz`` every 10 ms; the probe's
latency during the read, against its latency when the receiver is idle, says how long the
event loop (which the OTLP receivers share) was held up. The trace is rendered on a worker
thread span by span, so the loop gets its turn. The same is done for the run's page in the live
UI (``GET /ui/traces/{id}``: a lane per agent over every span, and the first 400 spans of the
waterfall), drawn on a worker thread too.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import httpx

from benchmarks.evaluation import synthetic_trace
from benchmarks.ingest import start_receiver
from coordbench.otlp import export_request
from coordbench.testing import bind_loopback

SIZES = (10_000, 100_000)
RUNS = 3


@dataclass
class ReadResult:
    spans: int
    megabytes: float
    get_s: float
    idle_probe_ms: float
    probe_p50_ms: float
    probe_max_ms: float
    page_s: float
    page_megabytes: float
    page_probe_p50_ms: float
    page_probe_max_ms: float


_PROBE = """
import json, sys, threading, time
import httpx
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
out = []
with httpx.Client(timeout=120) as http:
    print("ready", flush=True)
    while not stop.is_set():
        started = time.perf_counter()
        http.get(sys.argv[1] + "/healthz")
        out.append((time.perf_counter() - started) * 1e3)
        time.sleep(0.01)
print(json.dumps(out), flush=True)
"""


def _start_probe(url: str) -> subprocess.Popen[str]:
    """A process (so this one's reading the response does not slow it) probing /healthz until stdin closes."""
    probe = subprocess.Popen(
        [sys.executable, "-c", _PROBE, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert probe.stdout is not None
    probe.stdout.readline()  # "ready"
    return probe


def _stop_probe(probe: subprocess.Popen[str]) -> list[float]:
    out, _ = probe.communicate("", timeout=120)
    return [float(x) for x in json.loads(out.strip().splitlines()[-1])]


def measure(size: int) -> ReadResult:
    sock = bind_loopback()
    port = sock.getsockname()[1]
    sock.close()
    url = f"http://127.0.0.1:{port}"
    proc = start_receiver(port)
    try:
        spans = synthetic_trace(size, seed=size)
        with httpx.Client(timeout=120) as http:
            for i in range(0, len(spans), 2_000):
                body = export_request(spans[i : i + 2_000]).SerializeToString()
                http.post(f"{url}/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"})
            idle: list[float] = []
            for _ in range(50):
                started = time.perf_counter()
                http.get(f"{url}/healthz")
                idle.append((time.perf_counter() - started) * 1e3)
            gets: list[float] = []
            probes: list[float] = []
            pages: list[float] = []
            page_probes: list[float] = []
            size_bytes = page_bytes = 0
            for _ in range(RUNS):
                for path, times, probed in (
                    (f"/v1/traces/{spans[0].trace_id}", gets, probes),
                    (f"/ui/traces/{spans[0].trace_id}", pages, page_probes),
                ):
                    probe = _start_probe(url)
                    time.sleep(0.05)
                    started = time.perf_counter()
                    response = http.get(f"{url}{path}")
                    times.append(time.perf_counter() - started)
                    probed.extend(_stop_probe(probe))
                    assert response.status_code == 200, response.text[:200]
                    if path.startswith("/ui/"):
                        page_bytes = len(response.content)
                    else:
                        size_bytes = len(response.content)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    return ReadResult(
        spans=len(spans),
        megabytes=size_bytes / 1e6,
        get_s=statistics.median(gets),
        idle_probe_ms=statistics.median(idle),
        probe_p50_ms=statistics.median(probes),
        probe_max_ms=max(probes),
        page_s=statistics.median(pages),
        page_megabytes=page_bytes / 1e6,
        page_probe_p50_ms=statistics.median(page_probes),
        page_probe_max_ms=max(page_probes),
    )


def run() -> list[ReadResult]:
    return [measure(size) for size in SIZES]


def report(results: list[ReadResult]) -> str:
    lines = [
        "## Read API (`benchmarks/read_api.py`)",
        "",
        f"`GET /v1/traces/{{id}}` on a fresh receiver process holding one trace (median of {RUNS} reads), while "
        "a third process probes `GET /healthz` every 10 ms. The probe's latency during the reads, against its "
        "latency on the idle receiver, is how long the event loop the OTLP receivers share was held up.",
        "",
        "| spans | body (MB) | GET (s) | idle probe median (ms) | probe during GET: median · max (ms) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.spans:,} | {r.megabytes:.1f} | {r.get_s:.2f} | {r.idle_probe_ms:.1f} "
            f"| {r.probe_p50_ms:.1f} · {r.probe_max_ms:.0f} |"
        )
    lines += [
        "",
        "The same trace's page in the live UI (`GET /ui/traces/{id}`: a lane per agent over every span, the first "
        "400 spans of the waterfall; docs/ui.md), measured the same way in the same process:",
        "",
        "| spans | page (MB) | GET (s) | probe during GET: median · max (ms) |",
        "|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.spans:,} | {r.page_megabytes:.2f} | {r.page_s:.2f} "
            f"| {r.page_probe_p50_ms:.1f} · {r.page_probe_max_ms:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
