"""Hand-built spans for tests: a tiny builder with sensible defaults."""

from __future__ import annotations

import itertools
from typing import Any

from coordbench import semconv
from coordbench.spans import SpanData, SpanEvent, SpanKind, SpanLink, StatusCode

TRACE = "0af7651916cd43dd8448eb211c80319c"
MS = 1_000_000
_ids = itertools.count(1)


def sid(n: int) -> str:
    return f"{n:016x}"


def span(
    name: str = "work",
    *,
    span_id: str | None = None,
    parent: str | None = None,
    kind: SpanKind = SpanKind.INTERNAL,
    start_ms: float = 0,
    end_ms: float = 10,
    service: str = "svc",
    trace_id: str = TRACE,
    status: StatusCode = StatusCode.UNSET,
    **attributes: Any,
) -> SpanData:
    return SpanData(
        trace_id=trace_id,
        span_id=span_id or sid(next(_ids) + 10_000),
        parent_span_id=parent,
        name=name,
        kind=kind,
        start_time_unix_nano=int(start_ms * MS),
        end_time_unix_nano=int(end_ms * MS),
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
        status_code=status,
        resource={semconv.SERVICE_NAME: service},
    )


def call(caller: str, callee: str, *, parent: str | None = None, start_ms: float = 0, end_ms: float = 10,
         span_id: str | None = None, status: StatusCode = StatusCode.UNSET, digest: str | None = None,
         trace_id: str = TRACE) -> SpanData:  # fmt: skip
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
        semconv.GEN_AI_AGENT_NAME: callee,
        semconv.A2A_METHOD: "SendMessage",
    }
    if digest:
        attrs[semconv.A2A_MESSAGE_DIGEST] = digest
    return SpanData(
        trace_id=trace_id,
        span_id=span_id or sid(next(_ids) + 20_000),
        parent_span_id=parent,
        name=f"invoke_agent {callee}",
        kind=SpanKind.CLIENT,
        start_time_unix_nano=int(start_ms * MS),
        end_time_unix_nano=int(end_ms * MS),
        attributes=attrs,
        status_code=status,
        resource={semconv.SERVICE_NAME: caller},
    )


def serve(agent: str, *, parent: str, start_ms: float = 1, end_ms: float = 9, span_id: str | None = None,
          trace_id: str = TRACE) -> SpanData:  # fmt: skip
    return SpanData(
        trace_id=trace_id,
        span_id=span_id or sid(next(_ids) + 30_000),
        parent_span_id=parent,
        name=f"invoke_agent {agent}",
        kind=SpanKind.SERVER,
        start_time_unix_nano=int(start_ms * MS),
        end_time_unix_nano=int(end_ms * MS),
        attributes={
            semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
            semconv.GEN_AI_AGENT_NAME: agent,
            semconv.A2A_METHOD: "SendMessage",
        },
        resource={semconv.SERVICE_NAME: f"svc-{agent}"},
    )


def varied_spans(count: int) -> list[SpanData]:
    """``count`` spans of every kind over three services: typed, nested and non-ASCII values, an event, a link."""
    out = [
        span(
            f"s{i} ünïcode ✓",
            kind=SpanKind(1 + i % 3),
            service=f"agent-{i % 3}",
            parent=sid(1) if i else None,
            n=i,
            ok=True,
            f=0.5,
            tags=("a", "b"),
            kv={"k": i, "nested": {"deeper": ("x", "y")}},
        )
        for i in range(count)
    ]
    out[0] = out[0]._replace(events=(SpanEvent("e", 5, {"x": 1}),), links=(SpanLink("ab" * 16, sid(9), {"y": 2}),))
    return out
