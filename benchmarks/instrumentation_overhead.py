"""Per-call overhead of A2AInstrumentor on a loopback A2A call.

A task-mode agent (task, working, artifact, completed) is served by uvicorn on 127.0.0.1,
first on a thread of this process (free to run on any core, then with the whole process
pinned to one core), then in processes of its own (``benchmarks.overhead_agent``, one per
agent-side setting); cached a2a-sdk clients call it from this process. Blocks of
calls rotate between the modes below, so all see the same machine state:

- ``sdk-defaults``: not instrumented, a2a-sdk as installed. Its own telemetry decorators are
  on by default (``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED``) and cost time even with no tracer
  provider configured.
- ``sdk-quiet``: not instrumented, a2a-sdk's decorators silenced as
  ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false`` does (they stay in place and call a no-op
  object): the cheapest a2a-sdk gets without us, and the baseline for our cost.
- ``sdk-stripped``: not instrumented, a2a-sdk's decorators taken out of its classes, as
  ``A2AInstrumentor`` does while it is on (``suppress_sdk_spans``): ``traced`` minus this is the
  gross cost of our tracing, ``sdk-quiet`` minus this what taking them out saves.
- ``traced``: ``A2AInstrumentor`` on. Both the CLIENT and the SERVER span of every call are
  created, ended and handed to a BatchSpanProcessor (whose exporter counts and discards),
  so the figure is the whole cost of tracing both ends of a call.
- ``traced-no-ext``: as ``traced`` but the client does not ask for the traceability and
  timestamp extensions (``request_extensions=False``), so the agent adds no timestamps or
  steps to its responses: the cost of the extensions is the difference to ``traced``.
- ``traced-no-meta``: as ``traced`` but the trace context travels in the HTTP headers only
  (``propagate_in_metadata=False``): the difference to ``traced`` is what carrying it in the
  message metadata as well costs (a2a-sdk converts metadata through protobuf's pure-Python
  JSON code on both ends).
- ``unsampled``: ``A2AInstrumentor`` on with an ALWAYS_OFF sampler: context is still
  propagated (headers, metadata, extensions) but no span is recorded, which splits the
  cost between propagation/bookkeeping and span recording.
- ``client-only`` and ``server-only`` (agents in their own processes only): one end traced,
  the other not, for what each end of a call costs on its own.

The time spent in the garbage collector during each mode's blocks is recorded too
(``gc.callbacks``), young collections apart from full ones. The overhead is also estimated
paired by round (each mode's block median against sdk-quiet's in the same round), with a
95% confidence interval that decides whether the run meets each target (``benchmarks.stats``).

Last, the *OpenTelemetry SDK floor*: the CLIENT and SERVER span one traced call produced
(their names, kinds and final attributes, captured from a real call) are recorded again and
again through the same kind of provider and BatchSpanProcessor, with the trace context
injected into a carrier and extracted from it in between, and nothing else: no A2A call and
none of our code. That is what any OpenTelemetry-based instrumentation recording these two
spans pays, before it reads a request or a response.

And *in memory*: the same agent's request handler answers an a2a-sdk client through an
in-memory transport (``benchmarks.inmemory_a2a``: a2a-sdk's public ``ClientTransport`` and
``RequestHandler``, with the call context its HTTP routes would build), so a call runs
a2a-sdk's client and server code with no HTTP, JSON-RPC or socket in the way; traced against
untraced (a2a-sdk's decorators taken out in both), in rounds, it is what our instrumentation
adds to a call in a warm loop, through public API only.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import a2a.utils.telemetry as a2a_telemetry
import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import Part, Role, SendMessageRequest
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from benchmarks.inmemory_a2a import in_memory_client
from benchmarks.stats import PairedEstimate, paired_estimate, verdict
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.instrument import A2AInstrumentor, restore_sdk_spans, suppress_sdk_spans
from coordbench.testing import LoopbackServer, bind_loopback

HERE = Path(__file__).resolve().parent

WARMUP = 200
BLOCKS = 40
BLOCK_SIZE = 60  # 40 x 60 = 2,400 calls per mode and per streaming setting
MODES = ("sdk-defaults", "sdk-quiet", "sdk-stripped", "traced", "traced-no-ext", "traced-no-meta", "unsampled")
TRACED_MODES = ("traced", "traced-no-ext", "traced-no-meta", "unsampled", "client-only")
END_MODES = ("client-only", "server-only")
"""Two processes only: one end traced, the other not (an agent calling, or called by, one that is not)."""
ALL_MODES = MODES + END_MODES


class _NoOp:
    """What ``a2a.utils.telemetry`` puts in place of ``trace`` and ``StatusCode`` when its variable is false."""

    def __call__(self, *args: object, **kwargs: object) -> _NoOp:
        return self

    def __enter__(self) -> _NoOp:
        return self

    def __exit__(self, *args: object) -> None:
        return None

    def __getattr__(self, name: str) -> _NoOp:
        return self


def quiet_sdk() -> Callable[[], None]:
    """Silence a2a-sdk's decorators as ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false`` would; returns the undo."""
    saved = {name: getattr(a2a_telemetry, name) for name in ("trace", "StatusCode")}
    for name in saved:
        setattr(a2a_telemetry, name, _NoOp())

    def undo() -> None:
        for name, value in saved.items():
            setattr(a2a_telemetry, name, value)

    return undo


def _no_undo() -> None:
    return None


class Worker(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task_from_user_message(context.message)  # type: ignore[arg-type]
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact([Part(text="done: " + context.get_user_input())], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


class CountingExporter(SpanExporter):
    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS


def trimmed_mean(values: list[int], cut: float = 0.05) -> float:
    ordered = sorted(values)
    k = int(len(ordered) * cut)
    return statistics.fmean(ordered[k : len(ordered) - k])


class GcClock:
    """Time spent in garbage collections (through ``gc.callbacks``), young and full ones apart.

    A full collection (generation 2) walks the whole heap and runs every few thousand calls;
    it lands in whichever block is running then, so it is counted apart from the young
    collections (generations 0 and 1) that every call's garbage triggers.
    """

    def __init__(self) -> None:
        self.young_ns = 0
        self.full_ns = 0
        self.full_count = 0
        self._started = 0

    @property
    def total_ns(self) -> int:
        return self.young_ns + self.full_ns

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter_ns()
        elif info["generation"] == 2:
            self.full_ns += time.perf_counter_ns() - self._started
            self.full_count += 1
        else:
            self.young_ns += time.perf_counter_ns() - self._started


@dataclass
class Result:
    streaming: bool
    processes: int = 1
    one_core: bool = False
    """One process, all its threads pinned to one core."""
    samples: dict[str, list[int]] = field(default_factory=lambda: {m: [] for m in ALL_MODES})
    gc_young_ns: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ALL_MODES, 0))
    gc_full: dict[str, tuple[int, int]] = field(default_factory=lambda: dict.fromkeys(ALL_MODES, (0, 0)))
    """Per mode: full collections during its blocks, and their total ns."""
    spans: int = 0

    @property
    def setup(self) -> str:
        if self.processes == 2:
            return "two processes"
        return "one process, one core" if self.one_core else "one process"

    def young_gc_us_per_call(self, mode: str) -> float:
        return self.gc_young_ns[mode] / len(self.samples[mode]) / 1e3

    def round_medians_us(self, mode: str) -> list[float]:
        """The median of each of ``mode``'s blocks, in round order."""
        values = self.samples[mode]
        return [statistics.median(values[i : i + BLOCK_SIZE]) / 1e3 for i in range(0, len(values), BLOCK_SIZE)]

    def paired_overhead(self, mode: str, base: str = "sdk-quiet") -> PairedEstimate:
        """Per round, ``mode``'s block median minus ``base``'s (µs): their median and 95% interval."""
        pairs = zip(self.round_medians_us(mode), self.round_medians_us(base), strict=True)
        return paired_estimate([m - b for m, b in pairs])

    def paired_ratio(self, mode: str, base: str = "sdk-quiet") -> PairedEstimate:
        """Per round, ``mode``'s block median over ``base``'s: their median and 95% interval."""
        pairs = zip(self.round_medians_us(mode), self.round_medians_us(base), strict=True)
        return paired_estimate([m / b for m, b in pairs])

    def median_us(self, mode: str) -> float:
        return statistics.median(self.samples[mode]) / 1e3

    def trimmed_us(self, mode: str) -> float:
        return trimmed_mean(self.samples[mode]) / 1e3

    def mean_us(self, mode: str) -> float:
        return statistics.fmean(self.samples[mode]) / 1e3


async def _measure(
    url_of: Callable[[str], str],
    streaming: bool,
    processes: int = 1,
    modes: tuple[str, ...] = MODES,
    one_core: bool = False,
) -> Result:
    """Rotate blocks over ``modes``; ``url_of(mode)`` is the agent each mode calls."""
    exporter = CountingExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=100_000))
    unsampled = TracerProvider(sampler=ALWAYS_OFF)
    instrumentor = A2AInstrumentor()
    result = Result(streaming, processes, one_core)
    async with httpx.AsyncClient(timeout=30) as http:
        clients: dict[str, Client] = {}
        for url in sorted({url_of(mode) for mode in modes}):
            card = await A2ACardResolver(http, url).get_agent_card()
            clients[url] = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)

        async def call(mode: str) -> int:
            client = clients[url_of(mode)]
            request = SendMessageRequest(message=new_text_message("ping", role=Role.ROLE_USER))
            start = time.perf_counter_ns()
            async for _event in client.send_message(request):
                pass
            return time.perf_counter_ns() - start

        for i in range(WARMUP):
            await call(modes[i % len(modes)])
        clock = GcClock()
        gc.callbacks.append(clock)
        try:
            for block in range(BLOCKS):
                for i in range(len(modes)):
                    mode = modes[(block + i) % len(modes)]
                    if mode in TRACED_MODES:
                        instrumentor.instrument(
                            tracer_provider=unsampled if mode == "unsampled" else provider,
                            request_extensions=mode != "traced-no-ext",
                            propagate_in_metadata=mode != "traced-no-meta",
                        )
                    undo = _no_undo
                    if mode in ("sdk-quiet", "server-only"):
                        undo = quiet_sdk()
                    elif mode == "sdk-stripped":
                        suppress_sdk_spans()
                        undo = restore_sdk_spans
                    young_before, full_before = clock.young_ns, (clock.full_count, clock.full_ns)
                    for _ in range(BLOCK_SIZE):
                        result.samples[mode].append(await call(mode))
                    result.gc_young_ns[mode] += clock.young_ns - young_before
                    count, total = result.gc_full[mode]
                    result.gc_full[mode] = (
                        count + clock.full_count - full_before[0],
                        total + clock.full_ns - full_before[1],
                    )
                    if mode in TRACED_MODES:
                        instrumentor.uninstrument()
                    undo()
        finally:
            gc.callbacks.remove(clock)
        for client in clients.values():
            await client.close()
    provider.shutdown()
    result.spans = exporter.count
    return result


FLOOR_CALLS = 5_000


@dataclass
class SdkFloor:
    """Per-call cost of recording one traced call's two spans through the OpenTelemetry SDK alone."""

    samples_ns: list[int]
    gc_ns: int
    attributes: int
    """Attributes on the two spans together."""

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_ns) / 1e3

    @property
    def mean_us(self) -> float:
        return statistics.fmean(self.samples_ns) / 1e3

    @property
    def gc_us_per_call(self) -> float:
        return self.gc_ns / len(self.samples_ns) / 1e3


async def _capture_spans(url: str, http: httpx.AsyncClient) -> list[ReadableSpan]:
    """The CLIENT and SERVER span of one traced, non-streaming call (the agent runs in this process)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = A2AInstrumentor()
    card = await A2ACardResolver(http, url).get_agent_card()
    client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
    instrumentor.instrument(tracer_provider=provider)
    try:
        request = SendMessageRequest(message=new_text_message("ping", role=Role.ROLE_USER))
        _ = [event async for event in client.send_message(request)]
        for _ in range(100):  # the server span ends when the agent's task is released
            if len(exporter.get_finished_spans()) >= 2:
                break
            await asyncio.sleep(0.01)
    finally:
        instrumentor.uninstrument()
        await client.close()
    return list(exporter.get_finished_spans())


IN_MEMORY_CALLS = 1_000
IN_MEMORY_ROUNDS = 5
IN_MEMORY_MODES = ("untraced", "traced", "traced-no-ext", "unsampled")


@dataclass
class InMemoryCost:
    """Median µs per in-memory call (no network), untraced, and what each traced setting adds to it."""

    untraced_us: float
    overhead_us: dict[str, float]
    """``{"traced" | "traced-no-ext" | "unsampled": µs}``"""
    calls: int


async def in_memory_cost() -> InMemoryCost:
    """Calls through an a2a-sdk client and request handler joined in memory, untraced against traced.

    ``untraced`` has a2a-sdk's own decorators taken out (``suppress_sdk_spans``), as the
    instrumentor does while it is on, so the difference is our instrumentation alone.
    """
    card = build_agent_card("bench", "http://127.0.0.1:9/", description="bench")
    handler = DefaultRequestHandlerV2(agent_executor=Worker(), task_store=InMemoryTaskStore(), agent_card=card)
    client = in_memory_client(card, handler)

    async def once() -> int:
        request = SendMessageRequest(message=new_text_message("ping", role=Role.ROLE_USER))
        start = time.perf_counter_ns()
        async for _event in client.send_message(request):
            pass
        return time.perf_counter_ns() - start

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(CountingExporter(), max_queue_size=1_000_000))
    settings: dict[str, dict[str, Any]] = {
        "traced": {"tracer_provider": provider},
        "traced-no-ext": {"tracer_provider": provider, "request_extensions": False},
        "unsampled": {"tracer_provider": TracerProvider(sampler=ALWAYS_OFF)},
    }
    instrumentor = A2AInstrumentor()
    samples: dict[str, list[int]] = {mode: [] for mode in IN_MEMORY_MODES}
    for _ in range(WARMUP):
        await once()
    for _ in range(IN_MEMORY_ROUNDS):
        suppress_sdk_spans()
        try:
            samples["untraced"] += [await once() for _ in range(IN_MEMORY_CALLS)]
        finally:
            restore_sdk_spans()
        for mode, options in settings.items():
            instrumentor.instrument(**options)
            try:
                samples[mode] += [await once() for _ in range(IN_MEMORY_CALLS)]
            finally:
                instrumentor.uninstrument()
    provider.shutdown()
    await handler.aclose()
    untraced = statistics.median(samples["untraced"])
    return InMemoryCost(
        untraced / 1e3,
        {mode: (statistics.median(samples[mode]) - untraced) / 1e3 for mode in settings},
        IN_MEMORY_CALLS * IN_MEMORY_ROUNDS,
    )


async def _capture_and_replay(url: str) -> tuple[list[ReadableSpan], InMemoryCost]:
    async with httpx.AsyncClient(timeout=30) as http:
        spans = await _capture_spans(url, http)
    return spans, await in_memory_cost()


def sdk_floor(spans: Sequence[ReadableSpan]) -> SdkFloor:
    """Record ``spans`` (a client and a server span) again and again: the SDK's share of a traced call."""
    client = next(s for s in spans if s.kind == trace.SpanKind.CLIENT)
    server = next(s for s in spans if s.kind == trace.SpanKind.SERVER)
    client_attrs, server_attrs = dict(client.attributes or {}), dict(server.attributes or {})
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(CountingExporter(), max_queue_size=100_000))
    tracer = provider.get_tracer("coordbench.benchmarks.floor")
    samples: list[int] = []
    clock = GcClock()

    def one() -> int:
        start = time.perf_counter_ns()
        outer = tracer.start_span(client.name, kind=trace.SpanKind.CLIENT, attributes=client_attrs)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(outer))
        inner = tracer.start_span(
            server.name, context=propagate.extract(carrier), kind=trace.SpanKind.SERVER, attributes=server_attrs
        )
        inner.end()
        outer.end()
        return time.perf_counter_ns() - start

    for _ in range(WARMUP):
        one()
    gc.callbacks.append(clock)
    try:
        samples = [one() for _ in range(FLOOR_CALLS)]
    finally:
        gc.callbacks.remove(clock)
    provider.shutdown()
    return SdkFloor(samples, clock.total_ns, len(client_attrs) + len(server_attrs))


@dataclass
class Outcome:
    calls: list[Result]
    floor: SdkFloor
    in_memory: InMemoryCost


AGENT_OF_MODE = {
    "sdk-defaults": "defaults",
    "sdk-quiet": "quiet",
    "sdk-stripped": "stripped",
    "traced": "traced",
    "traced-no-ext": "traced",
    "traced-no-meta": "traced",
    "unsampled": "unsampled",
    "client-only": "quiet",
    "server-only": "traced",
}
"""The agent process each mode calls in the across-processes run (the options that differ are the client's)."""


def _start_agent(mode: str) -> tuple[subprocess.Popen[bytes], str]:
    sock = bind_loopback()
    port = sock.getsockname()[1]
    sock.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.overhead_agent", str(port), mode],
        cwd=HERE.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    for _ in range(400):
        try:
            if httpx.get(f"{url}.well-known/agent-card.json", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"benchmark agent ({mode}) did not start")


@contextlib.contextmanager
def _on_one_core() -> Iterator[int]:
    """Pin every thread of this process (and those it starts meanwhile) to one core; yields the core."""
    threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    before = {tid: os.sched_getaffinity(tid) for tid in threads}
    core = min(os.sched_getaffinity(0))
    for tid in threads:
        os.sched_setaffinity(tid, {core})
    try:
        yield core
    finally:
        for tid, cpus in before.items():
            with contextlib.suppress(ProcessLookupError):  # a thread that has finished since
                os.sched_setaffinity(tid, cpus)


def run() -> Outcome:
    """Calls to an agent in this process (free, then on one core), then to agents in their own processes."""
    with LoopbackServer(
        lambda url: create_a2a_app(build_agent_card("bench", url, description="bench"), Worker())
    ) as url:
        results = [asyncio.run(_measure(lambda _mode: url, streaming)) for streaming in (False, True)]
        with _on_one_core():
            results += [
                asyncio.run(_measure(lambda _mode: url, streaming, one_core=True)) for streaming in (False, True)
            ]
        spans, in_memory = asyncio.run(_capture_and_replay(url))
        floor = sdk_floor(spans)
    agents = {mode: _start_agent(mode) for mode in sorted(set(AGENT_OF_MODE.values()))}
    try:
        urls = {mode: agents[agent][1] for mode, agent in AGENT_OF_MODE.items()}
        results += [
            asyncio.run(_measure(urls.__getitem__, streaming, processes=2, modes=ALL_MODES))
            for streaming in (False, True)
        ]
    finally:
        for proc, _url in agents.values():
            proc.terminate()
            proc.wait(timeout=20)
    return Outcome(results, floor, in_memory)


def _in_memory_lines(cost: InMemoryCost, floor: SdkFloor) -> list[str]:
    traced = cost.overhead_us["traced"]
    lines = [
        "In memory: an a2a-sdk client and the agent's request handler joined by an in-memory transport "
        "(`benchmarks/inmemory_a2a.py`; no HTTP, JSON-RPC or socket), both ends in this process, "
        f"{cost.calls:,} calls per setting in {IN_MEMORY_ROUNDS} rounds, against the same calls untraced "
        f"(a2a-sdk's decorators taken out in both, so this is the gross cost, as `traced` minus `sdk-stripped` is "
        f"above; untraced median {cost.untraced_us:,.0f} µs per call). Median µs added per call, both ends together:",
        "",
        "| setting | added (µs) | ratio |",
        "|---|---:|---:|",
    ]
    for mode, label in (
        ("traced", "traced (BatchSpanProcessor)"),
        ("traced-no-ext", "traced, no extensions asked for"),
        ("unsampled", "unsampled (ALWAYS_OFF)"),
    ):
        added = cost.overhead_us[mode]
        lines.append(f"| {label} | {added:,.1f} | {(cost.untraced_us + added) / cost.untraced_us:.3f} |")
    lines += [
        "",
        f"Both ends traced, in a warm loop, add {traced:,.0f} µs; the SDK floor above accounts for "
        f"{floor.median_us:,.0f} µs of it, which leaves {traced - floor.median_us:,.0f} µs for reading requests "
        "and responses, carrying the trace context in headers and message metadata (which a2a-sdk converts "
        "through protobuf JSON), serving the extensions, and the OpenTelemetry calls beyond the floor. The "
        "end-to-end figures above differ from this loop by the HTTP layer and colder caches.",
    ]
    return lines


OVERHEAD_TARGET_US = 150.0
RATIO_TARGET = 1.05


def _interval(estimate: PairedEstimate, fmt: str) -> str:
    return f"{estimate.median:{fmt}} [{estimate.low:{fmt}}, {estimate.high:{fmt}}]"


def _paired_lines(results: Sequence[Result]) -> list[str]:
    lines = [
        f"Paired by round: in each of the {BLOCKS} rounds every mode runs one block of {BLOCK_SIZE} calls, back to "
        "back, so the difference between the `traced` and `sdk-quiet` block medians of one round is measured under "
        "nearly the same machine state (the drift between rounds, larger than the effect, cancels). Below: the "
        "median of those differences, and of the per-round ratios, with 95% confidence intervals from the sign "
        "test (order statistics; no assumption about the distribution). A target is *met* when the whole "
        "interval lies under it, *missed* when none of it does, *undecided* when this run cannot tell.",
        "",
        "| agent | call | rounds | overhead (µs): median [95% CI] | traced / sdk-quiet: median [95% CI] "
        f"| under {OVERHEAD_TARGET_US:.0f} µs | under {RATIO_TARGET - 1:.0%} |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        overhead, ratio = r.paired_overhead("traced"), r.paired_ratio("traced")
        lines.append(
            f"| {r.setup} "
            f"| {'streaming' if r.streaming else 'non-streaming'} | {overhead.rounds} "
            f"| {_interval(overhead, '+,.0f')} | {_interval(ratio, '.3f')} "
            f"| {verdict(overhead, OVERHEAD_TARGET_US)} | {verdict(ratio, RATIO_TARGET)} |"
        )
    lines += [
        "",
        f"Targets: overhead under {RATIO_TARGET - 1:.0%} of a loopback call (traced / sdk-quiet < {RATIO_TARGET}) "
        f"and under {OVERHEAD_TARGET_US:.0f} µs per call.",
    ]
    return lines


_BREAKDOWN = (
    ("serving the extensions", "traced", "traced-no-ext"),
    ("trace context in message metadata too", "traced", "traced-no-meta"),
    ("recording the spans", "traced", "unsampled"),
    ("an unsampled call: all but recording, net of the decorators taken out", "unsampled", "sdk-quiet"),
)
"""Parts of the overhead, each the paired difference of two modes."""


def _breakdown_lines(results: Sequence[Result]) -> list[str]:
    lines = [
        "Where the overhead goes: each column is the paired difference (µs, median [95% CI], paired by round as "
        "above) between two modes. The first three differ in that part only. The last is what a call costs "
        "when it is not sampled: it still carries the trace context, the metadata copy and the extension "
        "header like a traced call, so it overlaps the first two, and it is net of what taking a2a-sdk's "
        "decorators out saves (`sdk-quiet` minus `sdk-stripped` in the first table). Recording plus the last "
        "column makes the total; the columns are medians of different differences, so only roughly.",
        "",
        "| agent | call | " + " | ".join(f"{name} ({a} minus {b})" for name, a, b in _BREAKDOWN) + " |",
        "|---|---|" + "---:|" * len(_BREAKDOWN),
    ]
    for r in results:
        cells = " | ".join(_interval(r.paired_overhead(a, b), "+,.0f") for _name, a, b in _BREAKDOWN)
        lines.append(f"| {r.setup} | {'streaming' if r.streaming else 'non-streaming'} | {cells} |")
    return lines


def _gc_lines(one_process: Sequence[Result]) -> list[str]:
    def young(mode: str) -> str:
        return " · ".join(f"{r.young_gc_us_per_call(mode):,.1f}" for r in one_process)

    def full(mode: str) -> str:
        return " · ".join(f"{r.gc_full[mode][0]} ({r.gc_full[mode][1] / 1e6:,.0f} ms)" for r in one_process)

    return [
        "Garbage collection, one process, during each mode's blocks (non-streaming · streaming). Young "
        f"collections (generations 0 and 1), µs per call: sdk-quiet {young('sdk-quiet')}, traced {young('traced')}. "
        f"Full collections (generation 2), count and total time: sdk-quiet {full('sdk-quiet')}, traced "
        f"{full('traced')}. A full collection walks the whole heap and lands in whichever block is running when "
        "the heap has grown enough, so it shows up as one slow call in that block: it moves means, not medians. "
        "The young collections are what every call's garbage costs.",
    ]


def report(outcome: Outcome) -> str:
    """The markdown section for docs/benchmarks.md."""
    results, floor = outcome.calls, outcome.floor
    quiet = next(r for r in results if r.processes == 1 and not r.streaming).median_us("sdk-quiet")
    one_process = [r for r in results if r.processes == 1 and not r.one_core]
    lines = [
        "## Instrumentation overhead (`benchmarks/instrumentation_overhead.py`)",
        "",
        f"A loopback A2A call to a task-mode agent (task, working, artifact, completed). {BLOCKS} rounds of "
        f"{BLOCK_SIZE}-call blocks rotate over the modes after {WARMUP} warm-up calls: `sdk-defaults` "
        "(not instrumented, a2a-sdk's own telemetry decorators on, as installed), `sdk-quiet` (not "
        "instrumented, those decorators silenced by `OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false`: they stay in "
        "place and call a no-op object; the baseline), `sdk-stripped` (not instrumented, the decorators taken "
        "out of a2a-sdk's classes, as A2AInstrumentor does while it is on), "
        "`traced` (A2AInstrumentor on; CLIENT and SERVER span per call through a BatchSpanProcessor), "
        "`traced-no-ext` (the same without asking for the traceability and timestamp extensions), "
        "`traced-no-meta` (the same with the trace context in the HTTP headers only, not also in the message "
        "metadata) and "
        "`unsampled` (A2AInstrumentor on with an ALWAYS_OFF sampler: context propagated, no span recorded). "
        "*One process*: client and agent share the process (the agent on a uvicorn thread), so the cost of "
        "tracing both ends is counted in one heap. *One process, one core*: the same with every thread of the "
        "process pinned to one core. Unpinned, the client's and the agent's event loops hand the interpreter "
        "lock to each other at every message, and the scheduler may put the two threads on different cores, "
        "so a hand-over also crosses cores; pinned, none does, and the difference between the two rows is what "
        "those crossings cost (more events, more crossings). *Two processes*: the agent "
        "runs in its own process, one per agent-side setting (as installed, quiet, stripped, traced, "
        "unsampled), as in a real deployment; the call still waits for both ends, so both costs are counted. "
        "Spans exported are this (the client's) "
        "process's.",
        "",
        "| agent | call | calls/mode | sdk-defaults median (µs) | sdk-quiet median (µs) | traced median (µs) "
        "| traced / sdk-quiet | overhead vs sdk-quiet: median · 5%-trimmed mean · mean (µs) "
        "| sdk-stripped median (µs) | gross: traced minus sdk-stripped (µs) "
        "| traced-no-ext median (µs) | traced-no-meta median (µs) | unsampled median (µs) | traced / sdk-defaults "
        "| spans exported |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        base = "sdk-quiet"
        lines.append(
            f"| {r.setup} "
            f"| {'streaming' if r.streaming else 'non-streaming'} | {len(r.samples['traced']):,} "
            f"| {r.median_us('sdk-defaults'):,.0f} | {r.median_us(base):,.0f} | {r.median_us('traced'):,.0f} "
            f"| {r.median_us('traced') / r.median_us(base):.3f} "
            f"| {r.median_us('traced') - r.median_us(base):,.1f} · "
            f"{r.trimmed_us('traced') - r.trimmed_us(base):,.1f} · {r.mean_us('traced') - r.mean_us(base):,.1f} "
            f"| {r.median_us('sdk-stripped'):,.0f} | {r.median_us('traced') - r.median_us('sdk-stripped'):,.1f} "
            f"| {r.median_us('traced-no-ext'):,.0f} | {r.median_us('traced-no-meta'):,.0f} "
            f"| {r.median_us('unsampled'):,.0f} "
            f"| {r.median_us('traced') / r.median_us('sdk-defaults'):.3f} "
            f"| {r.spans:,} |"
        )
    ends = [r for r in results if r.samples["client-only"]]
    if ends:
        lines += [
            "",
            "Each end alone (two processes): `client-only` traces the caller and calls an agent that is not "
            "instrumented (it still receives the trace context and the extension header, and a2a-sdk still "
            "parses the context in the message metadata); `server-only` traces the agent and calls it from a "
            "client that is not instrumented. Overhead against `sdk-quiet` in the same run:",
            "",
            "| call | sdk-quiet median (µs) | client-only: median (µs) · overhead (µs) · ratio "
            "| server-only: median (µs) · overhead (µs) · ratio | both ends (traced): overhead (µs) |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in ends:
            quiet_us = r.median_us("sdk-quiet")
            cells = [
                f"{r.median_us(m):,.0f} · +{r.median_us(m) - quiet_us:,.0f} · {r.median_us(m) / quiet_us:.3f}"
                for m in END_MODES
            ]
            lines.append(
                f"| {'streaming' if r.streaming else 'non-streaming'} | {quiet_us:,.0f} | {cells[0]} | {cells[1]} "
                f"| +{r.median_us('traced') - quiet_us:,.0f} |"
            )
    lines += ["", *_paired_lines(results), "", *_breakdown_lines(results), "", *_gc_lines(one_process), ""]
    lines += [
        f"OpenTelemetry SDK floor: recording one traced call's CLIENT and SERVER span ({floor.attributes} "
        "attributes between them, captured from a real call) through a TracerProvider and BatchSpanProcessor, "
        f"with the trace context injected and extracted in between, and nothing else, {FLOOR_CALLS:,} times: "
        f"median {floor.median_us:,.1f} µs, mean {floor.mean_us:,.1f} µs per call (of which "
        f"{floor.gc_us_per_call:,.1f} µs in the garbage collector). That is "
        f"{floor.mean_us / 150:.0%} of the 150 µs target and {floor.mean_us / (0.05 * quiet):.0%} of 5% of the "
        f"one-process non-streaming sdk-quiet call ({quiet:,.0f} µs), spent before any instrumentation reads a "
        "request or a response.",
        "",
        *_in_memory_lines(outcome.in_memory, floor),
        "",
        "Reading the figures: the overhead covers both ends of the call, in both settings. "
        "`traced` minus `traced-no-ext` is the price of serving the extensions the client asks for (timestamps and "
        "steps in the response metadata, which a2a-sdk converts through protobuf JSON); `traced` minus "
        "`traced-no-meta` is carrying the trace context in the message metadata too (`propagate_in_metadata=False` "
        "saves it when every hop keeps HTTP headers); `traced-no-ext` minus "
        "`unsampled` is span recording in the OpenTelemetry SDK; `unsampled` minus `sdk-quiet` is propagation "
        "(a2a-sdk serialising the extra headers and message metadata) plus our bookkeeping, less what taking "
        "a2a-sdk's decorators out saves (`sdk-quiet` minus `sdk-stripped`). The instrumentor takes them out "
        "because it replaces the spans they would record; the overhead a user sees is against `sdk-quiet` (or "
        "`sdk-defaults`, a2a-sdk as installed: `traced / sdk-defaults`), and the gross cost of our tracing, "
        "with that saving set aside, is `traced` minus `sdk-stripped`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
