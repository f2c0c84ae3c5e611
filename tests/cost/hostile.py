"""Hostile trace shapes of any size: what a participant can send to make evaluation slow.

Each gives ``n`` spans of one trace, timed one after another, with captured text, as the
instrumentation would record them (a CLIENT span in the caller, the callee's SERVER span inside):

- :func:`self_calls`: one agent calling itself, each call inside the last (a chain ``n/2`` deep);
- :func:`one_root`: every span a child of one root: the host's calls to 20 agents, side by side;
- :func:`same_text`: a coordinator asking 20 workers the same thing, and every answer the same;
- :func:`distinct_prints`: a coordinator asking one worker ever new things without content capture
  (the default): fingerprints only, every one different.
"""

from __future__ import annotations

import json

from coordbench import semconv
from coordbench.spans import SpanData, SpanKind

TRACE = "0af7651916cd43dd8448eb211c80319c"
START = 1_700_000_000 * 10**9
US = 1_000


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], separators=(",", ":"))


def _call_attrs(callee: str, request: str, reply: str, digest: str) -> dict[str, object]:
    return {
        semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
        semconv.GEN_AI_AGENT_NAME: callee,
        semconv.A2A_METHOD: "SendMessage",
        semconv.A2A_MESSAGE_DIGEST: digest,
        semconv.GEN_AI_INPUT_MESSAGES: _messages("user", request),
        semconv.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", reply),
    }


def _served(agent: str) -> dict[str, object]:
    """What an agent's SERVER span records of the request it handles."""
    return {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: agent}


def _span(sid: int, parent: int | None, name: str, kind: SpanKind, service: str, start: int, end: int,
          attrs: dict[str, object]) -> SpanData:  # fmt: skip
    return SpanData(
        trace_id=TRACE,
        span_id=f"{sid:016x}",
        parent_span_id=None if parent is None else f"{parent:016x}",
        name=name,
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=attrs,
        resource={semconv.SERVICE_NAME: service},
    )


def _root(n: int) -> SpanData:
    return _span(1, None, "assessment", SpanKind.INTERNAL, "host", START, START + (n + 2) * US,
                 {semconv.A2A_CALL_TYPE: "HOST"})  # fmt: skip


def self_calls(n: int) -> list[SpanData]:
    """One agent calling itself, each call inside the last: ``n`` spans, a chain ``n/2`` calls deep."""
    spans = [_root(n)]
    parent, sid = 1, 2
    pairs = (n - 1) // 2
    for k in range(pairs):
        attrs = _call_attrs("loop", f"step {k}: go on", f"step {k} done", f"{k:016x}")
        caller = "host" if k == 0 else "loop"
        start, end = START + (k + 1) * US, START + (2 * pairs - k + 1) * US
        spans.append(_span(sid, parent, "invoke_agent loop", SpanKind.CLIENT, caller, start, end, attrs))
        spans.append(_span(sid + 1, sid, "invoke_agent loop", SpanKind.SERVER, "loop", start + 1, end - 1,
                           {k2: v for k2, v in attrs.items() if not k2.startswith("gen_ai.input")}))  # fmt: skip
        parent, sid = sid + 1, sid + 2
    return spans


def one_root(n: int) -> list[SpanData]:
    """Every span a child of the root: the host's calls to 20 agents side by side, their servers beside them."""
    spans = [_root(n)]
    for k in range(n - 1):
        sid = k + 2
        agent = f"agent-{k % 20:02d}"
        start, end = START + (k + 1) * US, START + (k + 2) * US
        if k % 2 == 0:
            attrs = _call_attrs(agent, f"question {k}", f"answer {k}", f"{k:016x}")
            spans.append(_span(sid, 1, f"invoke_agent {agent}", SpanKind.CLIENT, "host", start, end, attrs))
        else:
            spans.append(_span(sid, 1, f"invoke_agent {agent}", SpanKind.SERVER, agent, start, end,
                               _served(agent)))  # fmt: skip
    return spans


def same_text(n: int) -> list[SpanData]:
    """A coordinator asks 20 workers the same question, one after another, and each answers the same."""
    spans = [_root(n)]
    entry = _call_attrs("coordinator", "write the report", "the report", "f" * 16)
    spans.append(_span(2, 1, "invoke_agent coordinator", SpanKind.CLIENT, "host", START, START + (n + 1) * US, entry))
    spans.append(_span(3, 2, "invoke_agent coordinator", SpanKind.SERVER, "coordinator", START + 1,
                       START + (n + 1) * US - 1, _served("coordinator")))  # fmt: skip
    for k in range((n - 3) // 2):
        sid = 4 + 2 * k
        worker = f"worker-{k % 20:02d}"
        attrs = _call_attrs(worker, "find the bridge's budget and risks", "the budget is 4 million, risk is wind",
                            "0" * 16)  # fmt: skip
        start, end = START + (k + 1) * US, START + (k + 2) * US
        spans.append(_span(sid, 3, f"invoke_agent {worker}", SpanKind.CLIENT, "coordinator", start, end, attrs))
        spans.append(_span(sid + 1, sid, f"invoke_agent {worker}", SpanKind.SERVER, worker, start + 1, end - 1,
                           _served(worker)))  # fmt: skip
    return spans


def distinct_prints(n: int) -> list[SpanData]:
    """A coordinator asks one worker ``n/2`` different things, one after another; only fingerprints recorded."""
    spans = [_root(n)]
    entry = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: "coordinator",
             semconv.A2A_METHOD: "SendMessage", semconv.A2A_MESSAGE_DIGEST: "e" * 16}  # fmt: skip
    spans.append(_span(2, 1, "invoke_agent coordinator", SpanKind.CLIENT, "host", START, START + (n + 1) * US, entry))
    spans.append(_span(3, 2, "invoke_agent coordinator", SpanKind.SERVER, "coordinator", START + 1,
                       START + (n + 1) * US - 1, _served("coordinator")))  # fmt: skip
    for k in range((n - 3) // 2):
        sid = 4 + 2 * k
        attrs: dict[str, object] = {
            semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
            semconv.GEN_AI_AGENT_NAME: "worker",
            semconv.A2A_METHOD: "SendMessage",
            semconv.A2A_MESSAGE_DIGEST: f"{k:016x}",
            # 48 hashes, different for every message, overlapping the last one's by half
            semconv.A2A_REQUEST_FINGERPRINT: tuple(range(24 * k, 24 * k + 48)),
            semconv.A2A_RESPONSE_FINGERPRINT: tuple(range(10**9 + 24 * k, 10**9 + 24 * k + 48)),
        }
        start, end = START + (k + 1) * US, START + (k + 2) * US
        spans.append(_span(sid, 3, "invoke_agent worker", SpanKind.CLIENT, "coordinator", start, end, attrs))
        spans.append(_span(sid + 1, sid, "invoke_agent worker", SpanKind.SERVER, "worker", start + 1, end - 1,
                           _served("worker")))  # fmt: skip
    return spans
