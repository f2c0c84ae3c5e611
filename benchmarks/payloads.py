"""Realistic OTLP payloads for the ingest benchmarks: spans shaped like A2AInstrumentor's."""

from __future__ import annotations

import gzip
import json
import random

from coordbench import semconv
from coordbench.otlp import export_request, export_request_json
from coordbench.spans import SpanData, SpanKind

SPANS_PER_REQUEST = 512


def spans_for(request_index: int, count: int = SPANS_PER_REQUEST, agents: int = 20) -> list[SpanData]:
    """``count`` spans in 16 traces: agent calls with the attributes our instrumentation sets."""
    rng = random.Random(request_index)
    out: list[SpanData] = []
    base = 1_700_000_000_000_000_000 + request_index * 10**9
    for i in range(count):
        trace = f"{request_index:016x}{i % 16:016x}"
        caller, callee = rng.sample(range(agents), 2)
        attrs = {
            semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
            semconv.GEN_AI_AGENT_NAME: f"agent-{callee}",
            semconv.A2A_METHOD: "SendMessage",
            semconv.A2A_PROTOCOL_VERSION: "1.0",
            semconv.A2A_CALL_TYPE: "AGENT",
            semconv.A2A_TASK_ID: f"task-{request_index}-{i}",
            semconv.GEN_AI_CONVERSATION_ID: f"ctx-{request_index}-{i % 16}",
            semconv.A2A_TASK_STATE: "completed",
            semconv.A2A_REQUEST_SIZE: rng.randint(50, 500),
            semconv.A2A_RESPONSE_SIZE: rng.randint(50, 2000),
            semconv.GEN_AI_USAGE_INPUT_TOKENS: rng.randint(1, 100),
            semconv.GEN_AI_USAGE_OUTPUT_TOKENS: rng.randint(1, 400),
        }
        out.append(
            SpanData(
                trace_id=trace,
                span_id=f"{request_index:08x}{i + 1:08x}",
                parent_span_id=f"{request_index:08x}{i:08x}" if i % 16 else None,
                name=f"invoke_agent agent-{callee}",
                kind=SpanKind.CLIENT if i % 2 else SpanKind.SERVER,
                start_time_unix_nano=base + i * 1000,
                end_time_unix_nano=base + i * 1000 + rng.randint(10**5, 10**8),
                attributes=attrs,
                resource={semconv.SERVICE_NAME: f"agent-{caller}"},
                scope_name=semconv.INSTRUMENTATION_NAME,
            )
        )
    return out


def bodies(
    requests: int, *, fmt: str, compress: bool, offset: int = 0, spans_per_request: int = SPANS_PER_REQUEST
) -> list[bytes]:
    """``requests`` distinct request bodies (``fmt`` ``protobuf`` or ``json``) of ``spans_per_request`` spans."""
    out: list[bytes] = []
    for r in range(offset + 1, offset + requests + 1):  # request 0 would make an all-zero trace id
        spans = spans_for(r, spans_per_request)
        raw = (
            export_request(spans).SerializeToString()
            if fmt == "protobuf"
            else json.dumps(export_request_json(spans)).encode()
        )
        out.append(gzip.compress(raw, compresslevel=6) if compress else raw)
    return out
