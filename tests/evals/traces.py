"""A small hand-built trace for evaluator tests: host H asks A; A asks B and C.

Times (ms): H's root 0-100; H -> A call 0-100 (A serves 1-99); A -> B call 10-40 (B serves
11-39); A -> C call 50-90 (C serves 51-89). Optional captured message text on the calls.
"""

from __future__ import annotations

import json
from typing import Any

from coordbench import semconv
from coordbench.evals import EvalConfig, EvalContext, EvalScenario, TeamOutcome
from coordbench.spans import SpanData, SpanKind, StatusCode
from support.spans import TRACE, sid, span

MS = 1_000_000


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def client(caller: str, callee: str, span_id: str, parent: str, start: float, end: float, **extra: Any) -> SpanData:
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: "invoke_agent",
        semconv.GEN_AI_AGENT_NAME: callee,
        semconv.A2A_METHOD: "SendMessage",
        semconv.A2A_CALLER_NAME: caller,
        semconv.A2A_TASK_STATE: "completed",
    }
    request, reply = extra.pop("request", None), extra.pop("reply", None)
    if request is not None:
        attrs[semconv.GEN_AI_INPUT_MESSAGES] = _messages("user", request)
    if reply is not None:
        attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", reply)
    status = extra.pop("status", StatusCode.UNSET)
    attrs.update(extra)
    return SpanData(TRACE, span_id, parent, f"invoke_agent {callee}", SpanKind.CLIENT, int(start * MS), int(end * MS),
                    attrs, status, resource={semconv.SERVICE_NAME: caller})  # fmt: skip


def server(agent: str, span_id: str, parent: str, start: float, end: float) -> SpanData:
    attrs = {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: agent,
             semconv.A2A_METHOD: "SendMessage"}  # fmt: skip
    return SpanData(TRACE, span_id, parent, f"invoke_agent {agent}", SpanKind.SERVER, int(start * MS), int(end * MS),
                    attrs, resource={semconv.SERVICE_NAME: agent})  # fmt: skip


def team_trace(*, b_reply: str = "B found three options", c_status: StatusCode = StatusCode.UNSET) -> list[SpanData]:
    return [
        span(
            "invoke_workflow scenario",
            span_id=sid(1),
            start_ms=0,
            end_ms=100,
            service="H",
            **{semconv.A2A_CALL_TYPE: "HOST"},
        ),
        client("H", "A", sid(2), sid(1), 0, 100, request="Plan the launch", reply="A: plan ready"),
        server("A", sid(3), sid(2), 1, 99),
        client("A", "B", sid(4), sid(3), 10, 40, request="Find launch venues", reply=b_reply),
        server("B", sid(5), sid(4), 11, 39),
        client(
            "A",
            "C",
            sid(6),
            sid(3),
            50,
            90,
            request="Draft the announcement",
            reply="C drafted a short post",
            status=c_status,
        ),
        server("C", sid(7), sid(6), 51, 89),
    ]


def context(spans: list[SpanData] | None = None, *, config: EvalConfig | None = None,
            outcome: TeamOutcome | None = None, references: tuple[str, ...] = ()) -> EvalContext:  # fmt: skip
    return EvalContext.build(
        spans if spans is not None else team_trace(),
        scenario=EvalScenario(id="s1", task="Plan the launch", references=list(references)),
        config=config,
        hosts=["H"],
        participants=["A", "B", "C"],
        outcome=outcome or TeamOutcome(state="completed", output="A: plan ready"),
    )
