"""Receiver ingest: spans stored per second, from a separate load-generator process.

For each of protobuf and JSON, plain and gzip: a fresh ``coordbench receiver`` process (in
memory, no gRPC) takes 200 requests of 512 spans (102,400 distinct spans shaped like our
instrumentation's) from a load generator in another process over 4 keep-alive connections.
Throughput counts only spans the store reports as stored (``/v1/stats``), over the load
generator's wall time. Memory per stored span is the receiver's RSS growth divided by the
spans it holds. The ceiling is ``ExportTraceServiceRequest.ParseFromString`` (plus gunzip for
gzip bodies; ``json.loads`` for JSON) on the same bodies, timed here in this process. One more
row runs protobuf into a durable receiver (``--data-dir``: SQLite), for what durability costs.

The receiver's CPU time during the load (every thread, from ``/proc``) is reported per span
too, and one more run sends the protobuf bodies to ``benchmarks/http_floor.py``: the same server
stack that reads each body and drops it. Its CPU per span is what HTTP costs before any
decoding, so the report can say how much of the 3x budget is left for decoding and storing.
That CPU is split into user and kernel time, with the page faults the receiver took, and the
machine's cost of a page of new memory is measured here (``page_write_us``): storing spans
means writing into memory the process never had, which the raw parse never does.
"""

from __future__ import annotations

import gc
import gzip
import json
import mmap
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from benchmarks.payloads import SPANS_PER_REQUEST, bodies
from coordbench.testing import bind_loopback

REQUESTS = 200
CONNECTIONS = 4
HERE = Path(__file__).resolve().parent


@dataclass
class IngestResult:
    mode: str
    spans: int
    seconds: float
    statuses: dict[str, int]
    bytes_per_span_wire: float
    rss_bytes_per_span: float
    ceiling_spans_per_s: float
    cpu_seconds: float
    """CPU time the receiver process spent (all threads) while the load ran."""
    user_seconds: float
    """The user-mode part of the receiver's CPU time (clock ticks, so to ~10 ms)."""
    system_seconds: float
    """The kernel-mode part (socket reads and writes, page faults)."""
    minor_faults: int
    """Page faults the receiver took while the load ran: about one per new 4 KiB page it wrote."""
    floor: bool = False
    """The HTTP floor (``benchmarks/http_floor.py``), not the receiver: nothing is stored."""
    spans_per_request: int = SPANS_PER_REQUEST

    @property
    def cpu_us_per_span(self) -> float:
        return self.cpu_seconds * 1e6 / self.sent_spans

    @property
    def sent_spans(self) -> int:
        return sum(self.statuses.values()) * self.spans_per_request

    @property
    def user_us_per_span(self) -> float:
        return self.user_seconds * 1e6 / self.sent_spans

    @property
    def system_us_per_span(self) -> float:
        return self.system_seconds * 1e6 / self.sent_spans

    @property
    def faults_per_span(self) -> float:
        return self.minor_faults / self.sent_spans

    @property
    def spans_per_s(self) -> float:
        return self.spans / self.seconds

    @property
    def ratio(self) -> float:
        return self.ceiling_spans_per_s / self.spans_per_s


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _cpu_seconds(pid: int) -> float:
    """On-CPU time of every thread of ``pid`` so far (``/proc/PID/task/*/schedstat``, nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended while we looked
    return total / 1e9


def _proc_times(pid: int) -> tuple[float, float, int]:
    """User and system CPU seconds and minor page faults of ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick, int(fields[7])


def page_write_us(mib: int = 64) -> float:
    """Best of 3: microseconds to write the first byte of each 4 KiB page of fresh anonymous memory.

    That is a page fault with the kernel zeroing the page: what a process pays per page of new
    memory it stores into (it varies a lot between machines, and on a virtual machine between runs).
    """
    best = float("inf")
    page = mmap.PAGESIZE
    for _ in range(3):
        with mmap.mmap(-1, mib << 20) as region:
            started = time.perf_counter()
            for offset in range(0, mib << 20, page):
                region[offset] = 1
            best = min(best, time.perf_counter() - started)
    return best * 1e6 / ((mib << 20) // page)


def _ceiling(payloads: list[bytes], fmt: str, compress: bool, spans_per_request: int = SPANS_PER_REQUEST) -> float:
    """Best of 5 parses of all bodies, the garbage collector paused (the parse alone, not this process's heap)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            started = time.perf_counter()
            for body in payloads:
                raw = gzip.decompress(body) if compress else body
                if fmt == "protobuf":
                    ExportTraceServiceRequest().ParseFromString(raw)
                else:
                    json.loads(raw)
            best = min(best, time.perf_counter() - started)
    finally:
        gc.enable()
    return len(payloads) * spans_per_request / best


def start_receiver(
    port: int,
    data_dir: str | None = None,
    *,
    off_loop: bool = False,
    floor: bool = False,
    count_json: bool = False,
    grpc_port: int | None = None,
    native: bool = True,
    max_spans: int = 10_000_000,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "COORDBENCH_MAX_SPANS": str(max_spans), "COORDBENCH_MAX_TRACES": "1000000"}
    env.update(extra_env or {})
    env["COORDBENCH_EVICT_AFTER"] = "0"  # only the steady-state row ever fills the store
    env["COORDBENCH_NATIVE"] = "1" if native else "0"
    env.pop("COORDBENCH_DATA_DIR", None)
    env.pop("COORDBENCH_DECODE_IN_THREAD_BYTES", None)
    if off_loop:
        env["COORDBENCH_DECODE_IN_THREAD_BYTES"] = "0"  # every body decoded on a worker thread
    if data_dir is not None:
        env["COORDBENCH_DATA_DIR"] = data_dir
    command = (
        [sys.executable, "-m", "benchmarks.http_floor", str(port), *(["--count-json"] if count_json else [])]
        if floor or count_json
        else [
            sys.executable,
            "-m",
            "coordbench",
            "receiver",
            "--port",
            str(port),
            *(["--no-grpc"] if grpc_port is None else ["--grpc-port", str(grpc_port)]),
        ]
    )
    proc = subprocess.Popen(
        command,
        cwd=HERE.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("receiver did not start")


def _free_port() -> int:
    sock = bind_loopback()
    port = sock.getsockname()[1]
    sock.close()
    return port


STEADY_MAX_SPANS = REQUESTS * SPANS_PER_REQUEST // 2


def _load(url: str, payloads: list[bytes], content_type: str, compress: bool) -> dict[str, Any]:
    """Send ``payloads`` from a load-generator process; its report (requests, seconds, statuses)."""
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as handle:
        pickle.dump(payloads, handle)
    try:
        out = subprocess.run(
            [
                sys.executable,
                str(HERE / "load_generator.py"),
                url,
                handle.name,
                content_type,
                "gzip" if compress else "",
                str(CONNECTIONS),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
    finally:
        Path(handle.name).unlink()
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def _stats(port: int, floor: bool) -> dict[str, Any]:
    """The receiver's ``/v1/stats`` (the floor stores nothing)."""
    if floor:
        return {"stored": 0}
    stats: dict[str, Any] = httpx.get(f"http://127.0.0.1:{port}/v1/stats", timeout=10).json()
    return stats


_WITHOUT_NATIVE = {"protobuf": "protobuf path", "json": "Python decoder"}
"""What decodes each body format when the native scanners are off."""


def measure(
    fmt: str,
    compress: bool,
    *,
    durable: bool = False,
    off_loop: bool = False,
    floor: bool = False,
    count_json: bool = False,
    over_grpc: bool = False,
    native: bool = True,
    steady: bool = False,
    spans_per_request: int = SPANS_PER_REQUEST,
) -> IngestResult:
    requests = REQUESTS * SPANS_PER_REQUEST // spans_per_request  # the same number of spans in every row
    payloads = bodies(requests, fmt=fmt, compress=compress, spans_per_request=spans_per_request)
    raw_sizes = [len(gzip.decompress(b)) if compress else len(b) for b in payloads]
    port = _free_port()
    grpc_port = _free_port() if over_grpc else None
    data_dir = tempfile.TemporaryDirectory() if durable else None
    proc = start_receiver(
        port,
        data_dir.name if data_dir else None,
        off_loop=off_loop,
        floor=floor,
        count_json=count_json,
        grpc_port=grpc_port,
        native=native,
        max_spans=STEADY_MAX_SPANS if steady else 10_000_000,
    )
    content_type = "application/x-protobuf" if fmt == "protobuf" else "application/json"
    url = f"grpc://127.0.0.1:{grpc_port}" if over_grpc else f"http://127.0.0.1:{port}/v1/traces"
    try:
        if steady:  # other spans first, until the store is at its bound and evicts for every batch
            other = bodies(requests, fmt=fmt, compress=compress, offset=requests, spans_per_request=spans_per_request)
            _load(url, other, content_type, compress)
        stats_before = _stats(port, floor)
        rss_before = _rss(proc.pid)
        cpu_before = _cpu_seconds(proc.pid)
        times_before = _proc_times(proc.pid)
        report = _load(url, payloads, content_type, compress)
        cpu = _cpu_seconds(proc.pid) - cpu_before
        times_after = _proc_times(proc.pid)
        stats = _stats(port, floor)
        rss_after = _rss(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if data_dir is not None:
            data_dir.cleanup()
    # every span sent was new, so the spans stored during the load are the store's own count of them
    stored_new = stats["stored"] - stats_before["stored"]
    return IngestResult(
        mode="protobuf, HTTP floor (read and dropped)"
        if floor
        else f"{fmt}{' + gzip' if compress else ''}, parse-and-count receiver (`json.loads`, nothing kept)"
        if count_json
        else f"{fmt}{' + gzip' if compress else ''}{', durable' if durable else ''}"
        f"{', decoded off the loop' if off_loop else ''}{', OTLP/gRPC' if over_grpc else ''}"
        f"{'' if native else f', {_WITHOUT_NATIVE[fmt]} (COORDBENCH_NATIVE=0)'}"
        f"{', steady state' if steady else ''}"
        f"{f', {spans_per_request:,}-span bodies' if spans_per_request != SPANS_PER_REQUEST else ''}",
        spans=stored_new,
        seconds=report["seconds"],
        statuses={str(k): v for k, v in report["statuses"].items()},
        bytes_per_span_wire=statistics.fmean(raw_sizes) / spans_per_request,
        rss_bytes_per_span=(rss_after - rss_before) / stored_new if stored_new else float("nan"),
        ceiling_spans_per_s=_ceiling(payloads, fmt, compress, spans_per_request),
        cpu_seconds=cpu,
        user_seconds=times_after[0] - times_before[0],
        system_seconds=times_after[1] - times_before[1],
        minor_faults=times_after[2] - times_before[2],
        floor=floor,
        spans_per_request=spans_per_request,
    )


RUNS = 3


BIG_BODY_SPANS = 4096
"""Spans per request of the big-body row: about 1.9 MB, what an OpenTelemetry Collector's batch processor sends."""

ROWS: list[tuple[str, bool, dict[str, Any]]] = [
    ("protobuf", False, {}),
    ("protobuf", False, {"spans_per_request": BIG_BODY_SPANS}),
    ("protobuf", False, {"native": False}),
    ("protobuf", False, {"steady": True}),
    ("protobuf", True, {}),
    ("json", False, {}),
    ("json", True, {}),
    ("json", False, {"native": False}),
    ("json", False, {"count_json": True}),
    ("json", True, {"count_json": True}),
    ("protobuf", False, {"durable": True}),
    ("protobuf", False, {"off_loop": True}),
    ("protobuf", False, {"over_grpc": True}),
]
"""(body format, gzip, options of :func:`measure`) of each row."""


@dataclass
class Outcome:
    results: list[IngestResult]
    page_write_us: float
    """This machine's cost of a page of new memory (:func:`page_write_us`), measured after the rows."""
    reported_mib: float | None = None
    """Freed guest memory the hypervisor took back during the rows (free page reporting), if the VM does that."""


REPORTED_KIB = Path("/sys/module/page_reporting/parameters/reported_kib")


def _reported_kib() -> int | None:
    """Guest memory reported free to the hypervisor so far (virtio-balloon free page reporting), if exposed."""
    try:
        return int(REPORTED_KIB.read_text())
    except (OSError, ValueError):
        return None


def run() -> Outcome:
    """Each mode ``RUNS`` times; the run with the median throughput is reported."""
    reported_before = _reported_kib()
    results: list[IngestResult] = []
    for fmt, compress, options in ROWS:
        runs = sorted((measure(fmt, compress, **options) for _ in range(RUNS)), key=lambda r: r.spans_per_s)
        results.append(runs[len(runs) // 2])
    floors = sorted((measure("protobuf", False, floor=True) for _ in range(RUNS)), key=lambda r: r.cpu_us_per_span)
    results.append(floors[len(floors) // 2])
    reported_after = _reported_kib()
    reported = None if reported_before is None or reported_after is None else (reported_after - reported_before) / 1024
    return Outcome(results, page_write_us(), reported)


def _json_summary(rows: list[IngestResult]) -> list[str]:
    """The OTLP/JSON rows against the naive receiver and the Python decoder, if all were run."""
    by_mode = {r.mode: r for r in rows}
    naive = "json, parse-and-count receiver (`json.loads`, nothing kept)"
    wanted = ("json", "json + gzip", naive, "json + gzip" + naive[4:], "json, Python decoder (COORDBENCH_NATIVE=0)")
    if not all(mode in by_mode for mode in wanted):
        return []
    plain, gzipped, count, count_gzip, python = (by_mode[m] for m in wanted)
    return [
        "",
        "OTLP/JSON: the receiver stores and indexes "
        f"{plain.spans_per_s:,.0f} spans/s ({gzipped.spans_per_s:,.0f} gzipped), "
        f"{plain.spans_per_s / count.spans_per_s:.1f}x ({gzipped.spans_per_s / count_gzip.spans_per_s:.1f}x gzipped) "
        "what the *parse-and-count receiver* takes on the same server stack (`benchmarks/http_floor.py "
        "--count-json`: `json.loads`, count the spans, keep nothing), "
        f"{plain.spans_per_s / plain.ceiling_spans_per_s:.1f}x `json.loads` alone on the same bodies in this process, "
        f"and {plain.spans_per_s / python.spans_per_s:.1f}x the receiver with the native scanner off "
        f"(*Python decoder*: `json.loads` and a walk building every span, {python.spans_per_s:,.0f} spans/s). "
        "The native scanner (`coordbench.otlp._jsonscan`) checks the body's JSON and every span's OTLP fields "
        "in one C pass and keeps each span's JSON text, decoded when the span is read, as protobuf spans are; "
        f"a stored span holds {plain.rss_bytes_per_span:,.0f} bytes of RSS against {python.rss_bytes_per_span:,.0f} "
        "decoded. Target: at least the parse-and-count receiver, and 100,000 spans/s, on one core (stretch 200,000).",
    ]


def report(outcome: Outcome) -> str:
    results = outcome.results
    lines = [
        "## Receiver ingest (`benchmarks/ingest.py`)",
        "",
        "A fresh `coordbench receiver` process (memory store unless durable, one event loop) per run, "
        f"median of {RUNS} runs per row; "
        "a separate load-generator "
        f"process sends {REQUESTS} requests of {SPANS_PER_REQUEST} distinct spans over {CONNECTIONS} keep-alive "
        "connections. Spans/s counts the spans the store took during the load (its `stored` counter, "
        "`/v1/stats`). The ceiling is parsing the "
        "same bodies in this process (`ParseFromString`, or `json.loads` for JSON; gunzip included for gzip). "
        "*Durable*: the same with `--data-dir` (SQLite in WAL mode, `synchronous=NORMAL`, written on its own "
        "thread; a 200 means the batch is committed and survives a crash of the process). *Decoded off the loop*: "
        "every body decoded on a worker thread (`decode_in_thread_bytes=0`), as bodies weighing over 1 MiB are "
        "(with the native scanner, protobuf bodies over 4 MiB). "
        f"*{BIG_BODY_SPANS:,}-span bodies*: the same number of spans in "
        f"{REQUESTS * SPANS_PER_REQUEST // BIG_BODY_SPANS} requests of about 1.9 MB, "
        "the size an OpenTelemetry Collector's batch processor sends, still scanned on the loop. "
        "*OTLP/gRPC*: the same protobuf bodies as `TraceService/Export` calls to the receiver's gRPC port "
        f"({CONNECTIONS} channels; statuses are gRPC's). *Protobuf path*: the receiver with its native scanner "
        "turned off (`COORDBENCH_NATIVE=0`), as where no C compiler built it: the baseline for what the scanner "
        f"buys. *Steady state*: the store bounded to {STEADY_MAX_SPANS:,} spans (`COORDBENCH_MAX_SPANS`) and "
        f"{REQUESTS} requests of other traces sent first, so during the measured load every batch evicts the "
        "oldest traces and the new spans reuse their memory: a receiver that has been running for a while at "
        "its bound. Every other row starts from an empty store whose heap grows by each stored span.",
        "",
        "| body | spans stored | statuses | stored spans/s | ceiling spans/s | ceiling / stored | receiver CPU µs/span "
        "| wire bytes/span | RSS bytes/stored span |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [r for r in results if not r.floor]
    for r in rows:
        lines.append(
            f"| {r.mode} | {r.spans:,} | {r.statuses} | {r.spans_per_s:,.0f} | {r.ceiling_spans_per_s:,.0f} "
            f"| {r.ratio:.1f}x | {r.cpu_us_per_span:.2f} | {r.bytes_per_span_wire:,.0f} | {r.rss_bytes_per_span:,.0f} |"
        )
    lines += ["", "Target: at least 100,000 protobuf spans/s stored on one core, within 3x of the raw parse."]
    lines += _json_summary(rows)
    floor = next((r for r in results if r.floor), None)
    if floor is not None:
        lines += [
            "",
            "Where a protobuf span's receiver CPU goes (µs per span; the HTTP floor is "
            "`benchmarks/http_floor.py`, the same uvicorn (httptools, uvloop) and FastAPI stack reading each body and "
            "dropping it, "
            f"{floor.statuses}, median of {RUNS} runs by CPU). *Receiver CPU / parse* compares the receiver's "
            "CPU per span with the raw parse of the same row: the 3x target counted in CPU, which the "
            "load generator's own speed cannot blur.",
            "",
            "| body | HTTP floor | decoding and storing | receiver total | raw parse | receiver CPU / parse "
            "| of the total: user · kernel | page faults/span | user CPU / parse |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            if r.mode.startswith("protobuf") and "durable" not in r.mode:
                parse = 1e6 / r.ceiling_spans_per_s
                total = r.cpu_us_per_span
                lines.append(
                    f"| {r.mode} | {floor.cpu_us_per_span:.2f} | {total - floor.cpu_us_per_span:.2f} | {total:.2f} "
                    f"| {parse:.2f} | {total / parse:.1f}x | {r.user_us_per_span:.2f} · {r.system_us_per_span:.2f} "
                    f"| {r.faults_per_span:.3f} | {r.user_us_per_span / parse:.1f}x |"
                )
        stored = next(r for r in rows if r.mode == "protobuf")
        per_fault = (stored.system_us_per_span - floor.system_us_per_span) / max(stored.faults_per_span, 1e-9)
        lines += [
            "",
            "Decoding and storing is everything beyond reading the body: for protobuf the native scanner "
            "(`coordbench.otlp._scan`: one C pass validating the request and slicing out each span with its ids; "
            "the protobuf path parses with protobuf, then walks the parsed spans and slices their bytes in Python), "
            "grouping by trace with de-duplication and byte accounting (`_scan.group`, in C too, for batches of "
            "encoded spans), the export response, the garbage collector, and "
            "writing each stored span into new memory. *User · kernel* splits the receiver's CPU by mode "
            "(`/proc/PID/stat`, 10 ms ticks); the HTTP floor spends "
            f"{floor.user_us_per_span:.2f} · {floor.system_us_per_span:.2f}. The kernel's share beyond the floor "
            "is mostly page faults: a store that keeps what it receives writes every stored byte into memory "
            f"the process never had, {stored.faults_per_span:.3f} new 4 KiB pages per span here "
            f"({stored.rss_bytes_per_span:,.0f} bytes of RSS), and the kernel zeroes each page on the first write. "
            f"On this machine a first write to fresh memory costs {outcome.page_write_us:.2f} µs per page "
            "measured in this process right after the rows (`page_write_us`: anonymous memory, one byte per page), "
            f"so at least {stored.faults_per_span * outcome.page_write_us:.2f} µs per stored span; the receiver's "
            f"kernel time beyond the floor comes to {per_fault:.1f} µs per fault"
            + (
                ", memory the virtual machine backs for the first time costing more. "
                if per_fault > 1.5 * outcome.page_write_us
                else " (with 10 ms ticks, ±0.1 µs per span: about what the tight loop pays). "
            )
            + "The raw parse reuses the same memory on every iteration and pays none of it; neither does the "
            "steady-state row, whose spans land in memory the evicted ones freed.",
        ]
        if outcome.reported_mib is not None:
            lines[-1] += (
                " This virtual machine also hands freed memory back to its host (virtio-balloon free page reporting, "
                f"`{REPORTED_KIB}`): {outcome.reported_mib:,.0f} MiB during these rows. Memory a finished "
                "receiver frees can be among it, so a fresh receiver may land on pages the host must back again "
                "and pay the host's fault as well as the guest's: the likely reason the fresh rows' kernel time per "
                "fault varies from run to run. On a machine that keeps its memory backed, a page costs about what "
                "`page_write_us` measures."
            )
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
