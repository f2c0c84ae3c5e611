"""Evaluation: from a complete trace in the store to ``GraphMetrics``, for 20 agents.

A synthetic trace (a host hands work to 20 agents, who delegate to each other down to depth 6
and use tools; every call is a CLIENT span in the caller and a SERVER span in the callee,
with nested, sequential timings) is stored as OTLP protobuf, then timed: reading it back from
the store (decoding every span) and the whole graph tier (span tree, StepTree, agent graph,
every registered metric plugin, detections, canonical JSON).
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from dataclasses import dataclass

from coordbench import semconv
from coordbench.graph import evaluate_graph
from coordbench.otlp import decode_protobuf, export_request
from coordbench.server.app import tune_gc_for_ingest
from coordbench.spans import SpanData, SpanKind
from coordbench.store import TraceStore

SIZES = (1_000, 10_000, 100_000)
AGENTS = 20
RUNS = 3


WORDS = [
    "plan",
    "review",
    "launch",
    "budget",
    "risk",
    "owner",
    "timeline",
    "draft",
    "search",
    "result",
    "summary",
    "venue",
    "post",
    "team",
    "task",
    "data",
    "check",
    "answer",
    "source",
    "price",
    "option",
    "deadline",
    "update",
    "issue",
    "fix",
    "test",
    "report",
]


def _messages(role: str, text: str) -> str:
    """One message as the GenAI semantic conventions record it (``gen_ai.input.messages``)."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], separators=(",", ":"))


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))


def synthetic_trace(total: int, agents: int = AGENTS, seed: int = 7, *, content: bool = False) -> list[SpanData]:
    """About ``total`` spans of one trace; with ``content``, client spans carry captured message text."""
    rng = random.Random(seed)
    trace_id = f"{seed:032x}"
    names = [f"agent-{i:02d}" for i in range(agents)]
    ids = iter(range(1, 10**9))
    # (span_id, parent_id, name, kind, service, attributes, children)
    nodes: dict[int, dict[str, object]] = {}

    def add(parent: int | None, name: str, kind: SpanKind, service: str, attrs: dict[str, object]) -> int:
        sid = next(ids)
        nodes[sid] = {"parent": parent, "name": name, "kind": kind, "service": service, "attrs": attrs, "children": []}
        if parent is not None:
            nodes[parent]["children"].append(sid)  # type: ignore[union-attr]
        return sid

    root = add(None, "invoke_workflow assessment", SpanKind.INTERNAL, "host", {semconv.A2A_CALL_TYPE: "HOST"})
    servers: list[tuple[int, str, int]] = [(root, "host", 0)]  # (span, agent, depth)
    while len(nodes) < total:
        parent, caller, depth = rng.choice(servers)
        if depth >= 6:
            continue
        if caller != "host" and rng.random() < 0.3:
            tool = rng.choice(["search", "llm", "calculator"])
            add(parent, f"execute_tool {tool}", SpanKind.INTERNAL, caller,
                {semconv.GEN_AI_OPERATION_NAME: "execute_tool", semconv.GEN_AI_TOOL_NAME: tool})  # fmt: skip
            continue
        callee = rng.choice([n for n in names if n != caller])
        call_attrs = {
            semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
            semconv.GEN_AI_AGENT_NAME: callee,
            semconv.A2A_METHOD: "SendMessage",
            semconv.A2A_MESSAGE_DIGEST: f"{rng.getrandbits(64):016x}",
            semconv.GEN_AI_USAGE_INPUT_TOKENS: rng.randint(1, 200),
            semconv.GEN_AI_USAGE_OUTPUT_TOKENS: rng.randint(1, 800),
        }
        server_attrs = dict(call_attrs)
        if content:
            call_attrs[semconv.GEN_AI_INPUT_MESSAGES] = _messages("user", _sentence(rng))
            call_attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", _sentence(rng))
        client = add(parent, f"invoke_agent {callee}", SpanKind.CLIENT, caller, call_attrs)
        server = add(client, f"invoke_agent {callee}", SpanKind.SERVER, callee, server_attrs)
        servers.append((server, callee, depth + 1))
    # nested, sequential timings: each span covers its children laid end to end, plus its own work
    spans: list[SpanData] = []
    start_of: dict[int, int] = {root: 1_700_000_000_000_000_000}
    order = [root]
    durations: dict[int, int] = {}
    for sid in order:
        order.extend(nodes[sid]["children"])  # type: ignore[arg-type]
    for sid in reversed(order):
        own = rng.randint(10_000, 2_000_000)
        durations[sid] = own + sum(durations[c] for c in nodes[sid]["children"])  # type: ignore[union-attr]
    for sid in order:
        cursor = start_of[sid] + 1_000
        for child in nodes[sid]["children"]:  # type: ignore[union-attr]
            start_of[child] = cursor
            cursor += durations[child]
        node = nodes[sid]
        spans.append(
            SpanData(
                trace_id=trace_id,
                span_id=f"{sid:016x}",
                parent_span_id=None if node["parent"] is None else f"{node['parent']:016x}",
                name=str(node["name"]),
                kind=node["kind"],  # type: ignore[arg-type]
                start_time_unix_nano=start_of[sid],
                end_time_unix_nano=start_of[sid] + durations[sid],
                attributes=node["attrs"],  # type: ignore[arg-type]
                resource={semconv.SERVICE_NAME: node["service"]},
            )
        )
    return spans


@dataclass
class EvaluationResult:
    spans: int
    read_ms: float
    evaluate_ms: float

    @property
    def total_ms(self) -> float:
        return self.read_ms + self.evaluate_ms


async def _measure(size: int) -> EvaluationResult:
    spans = synthetic_trace(size)
    bodies = [export_request(spans[i : i + 512]).SerializeToString() for i in range(0, len(spans), 512)]
    trace_id = spans[0].trace_id
    reads, evaluations = [], []
    for _ in range(RUNS):
        fresh = TraceStore(max_spans=10**7)  # a fresh store each run: decoding is not cached between runs
        for body in bodies:  # received as the receiver receives them, outside the timed part
            await fresh.add(decode_protobuf(body).spans)
        started = time.perf_counter()
        snapshot = fresh.get(trace_id)
        read = time.perf_counter() - started
        assert snapshot is not None and snapshot.completeness.complete
        started = time.perf_counter()
        result = evaluate_graph(snapshot.spans)
        result.to_json()
        evaluations.append(time.perf_counter() - started)
        reads.append(read)
        assert len(result.agents) >= AGENTS
    return EvaluationResult(len(spans), statistics.median(reads) * 1e3, statistics.median(evaluations) * 1e3)


def run() -> list[EvaluationResult]:
    tune_gc_for_ingest()  # as in the receiver and assessor processes, where evaluation runs
    return [asyncio.run(_measure(size)) for size in SIZES]


def report(results: list[EvaluationResult]) -> str:
    lines = [
        "## Evaluation (`benchmarks/evaluation.py`)",
        "",
        f"One trace, {AGENTS} agents (plus the host), calls nested down to depth 6 with tool steps; median of "
        f"{RUNS} runs, with the garbage-collector thresholds the server processes use (`tune_gc_for_ingest`). "
        "*Read (cold)*: the complete trace out of a store that has not decoded it yet (every stored span decoded); "
        "in the pipeline `wait_complete` decodes spans as they arrive, so by the time a trace is complete this "
        "is already done. *Evaluate*: span tree, StepTree, agent graph, every registered metric plugin, "
        "detections, canonical JSON: the time from a complete, decoded trace to `GraphMetrics`.",
        "",
        "| spans | read, cold (ms) | evaluate (ms) | cold total (ms) |",
        "|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r.spans:,} | {r.read_ms:,.1f} | {r.evaluate_ms:,.1f} | {r.total_ms:,.1f} |")
    lines += ["", "Targets: 10k spans under 100 ms, 100k spans under 2 s."]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(run()))
