"""Three agents, three processes' worth of spans, one trace.

A runs as its own OS process under ``opentelemetry-instrument`` (zero-code: our entry point
is found and the SDK is configured from ``OTEL_*``); C runs as its own process and calls
``configure_tracing`` + ``A2AInstrumentor`` itself; both export over OTLP/HTTP to a receiver
in the test. B runs in the test process. The test (the host) calls A; A calls B; B calls C.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import SpanTree
from coordbench.steps import AgentInvocation, CallType, ToolInvocation, step_from_span
from coordbench.testing import RecordingSpanExporter
from support.otlp_sink import OtlpSink
from support.processes import RELAY, AgentProcess, exporting_env

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("a2a_instrumented")]


def otlp_env(base: dict[str, str], sink: OtlpSink, service: str) -> dict[str, str]:
    return exporting_env(base, sink.url, service)


def agent_steps_complete(spans: list[SpanData]) -> None:
    for span in spans:
        step = step_from_span(span)
        assert step.step_id == span.span_id and len(step.step_id) == 16
        assert step.trace_id == span.trace_id
        assert step.start_time_unix_nano and step.end_time_unix_nano
        assert step.latency is not None and step.latency > 0
        assert step.error is None
        assert step.name
        assert step.additional_attributes
        if step.call_type is CallType.AGENT:
            assert isinstance(step.step_action, AgentInvocation)
            callee = step.step_action.agent_name
            assert callee in {"A", "B", "C"}
            assert step.parent_step_id is not None or span.kind is SpanKind.CLIENT
            assert step.total_tokens is not None and step.total_tokens > 0
            # each agent's lookup reports 0.001; a call costs what the callee and everything below it cost
            assert step.cost == pytest.approx({"A": 0.003, "B": 0.002, "C": 0.001}[callee])
            if span.kind is SpanKind.CLIENT:  # the callee's own steps came back with the answer
                assert step.step_action.response_trace is not None
        else:
            assert step.call_type is CallType.TOOL
            assert step.step_action == ToolInvocation("lookup", {"query": "relay me"})
            assert step.parent_step_id is not None
            assert step.total_tokens == 8  # 3 in + 5 out, as the relay agent reports
            assert step.cost == pytest.approx(0.001)


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_three_agents_across_processes_form_one_tree(
    start_agent: StartAgent,
    a2a_instrumented: RecordingSpanExporter,
    otlp_sink: OtlpSink,
    subprocess_env: dict[str, str],
    processes: list[AgentProcess],
    streaming: bool,
) -> None:
    flag = "true" if streaming else "false"
    c = AgentProcess(
        [sys.executable, RELAY, "--name", "C", "--configure-tracing"], otlp_env(subprocess_env, otlp_sink, "agent-c")
    )
    processes.append(c)
    b = start_agent("B", next_url=c.url, streaming=streaming)
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    assert instrument is not None
    a = AgentProcess(
        [instrument, sys.executable, RELAY, "--name", "A", "--next-url", b, "--streaming", flag],
        otlp_env(subprocess_env, otlp_sink, "agent-a"),
    )
    processes.append(a)

    client = AgentClient(a.url, streaming=streaming)
    assert await client.ask("relay me") == ("TASK_STATE_COMPLETED", "A(B(C(relay me)))")
    await client.close()

    local = await a2a_instrumented.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 1)
    errors = [a.stop(), c.stop()]
    remote = otlp_sink.wait_for(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 2)
    assert "Traceback" not in "".join(errors), errors

    spans = local + remote
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 1, tree.render()
    assert not tree.orphans, tree.render()
    assert tree.call_chains() == [("pytest", "A", "B", "C")], tree.render()
    assert {s.service_name for s in remote} == {"agent-a", "agent-c"}
    # each server span's parent is the caller's client span, emitted by another process
    for callee in "ABC":
        server = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.SERVER)
        call = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.CLIENT)
        assert server.parent_span_id == call.span_id
        assert server.resource != call.resource
        assert server.status_code is StatusCode.UNSET and call.status_code is StatusCode.UNSET
        assert server.attributes[semconv.A2A_TASK_STATE] == call.attributes[semconv.A2A_TASK_STATE] == "completed"
    assert [(c.caller, c.callee) for c in tree.calls()] == [("pytest", "A"), ("A", "B"), ("B", "C")]
    agent_steps_complete(spans)
