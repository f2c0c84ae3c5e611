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

from agents.relay import AgentClient, RelayExecutor
from coordbench import semconv
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.graph import evaluate_graph
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.steps import AgentInvocation, CallType, ToolInvocation, step_from_span
from coordbench.testing import LoopbackServer, RecordingSpanExporter, SpanTree
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


@pytest.mark.parametrize("http_spans", [False, True], ids=["a2a-spans", "with-http-spans"])
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_three_agents_across_processes_form_one_tree(
    a2a_instrumented: RecordingSpanExporter,
    otlp_sink: OtlpSink,
    subprocess_env: dict[str, str],
    processes: list[AgentProcess],
    streaming: bool,
    http_spans: bool,
) -> None:
    """With ``http_spans``, HTTP-level instrumentation is layered in, as ``opentelemetry-instrument``
    does when ``opentelemetry-instrumentation-httpx`` is installed: A's and B's outgoing requests
    get httpx CLIENT spans and B (then its own process) is wrapped in the ASGI middleware, so B's
    server span hangs under an HTTP server span under A's HTTP client span, and the agent-card
    fetches leave HTTP spans with no A2A span under them. The trace, the call chain and the agent
    graph must come out the same: no agent named after a process, no isolated agent.
    """
    flag = "true" if streaming else "false"
    c = AgentProcess(
        [sys.executable, RELAY, "--name", "C", "--configure-tracing"], otlp_env(subprocess_env, otlp_sink, "agent-c")
    )
    processes.append(c)

    env_a = otlp_env(subprocess_env, otlp_sink, "agent-a")
    if not http_spans:
        env_a["OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"] = "httpx,httpx2"
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    assert instrument is not None

    async def run(b: str) -> list[SpanData]:
        command = [instrument, sys.executable, RELAY, "--name", "A", "--next-url", b, "--streaming", flag]
        a = AgentProcess(command, env_a)
        processes.append(a)
        client = AgentClient(a.url, streaming=streaming)
        assert await client.ask("relay me") == ("TASK_STATE_COMPLETED", "A(B(C(relay me)))")
        await client.close()
        local_servers = 0 if http_spans else 1  # B's server span, when B runs in this process
        local = await a2a_instrumented.wait_for_async(
            lambda s: (
                any(x.kind is SpanKind.CLIENT for x in s) and sum(x.kind is SpanKind.SERVER for x in s) >= local_servers
            )
        )
        assert "Traceback" not in a.stop()
        return local

    if http_spans:  # B in its own process too, tracing its HTTP client and server as well
        b_process = AgentProcess(
            [sys.executable, RELAY, "--name", "B", "--next-url", c.url, "--streaming", flag, "--configure-tracing",
             "--http-spans"],
            otlp_env(subprocess_env, otlp_sink, "agent-b"),
        )  # fmt: skip
        processes.append(b_process)
        local = await run(b_process.url)
        errors = [b_process.stop(), c.stop()]
        servers = 3
    else:
        with LoopbackServer(
            lambda url: create_a2a_app(
                build_agent_card("B", url, description="relay B"),
                RelayExecutor("B", next_url=c.url, streaming=streaming, self_url=url),
            )
        ) as b:
            local = await run(b)
        errors = [c.stop()]
        servers = 2
    ours = semconv.INSTRUMENTATION_NAME
    remote = otlp_sink.wait_for(lambda s: sum(x.kind is SpanKind.SERVER and x.scope_name == ours for x in s) >= servers)
    assert "Traceback" not in "".join(errors), errors

    spans = local + remote
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 1, tree.render()
    assert not tree.orphans, tree.render()
    assert tree.call_chains() == [("pytest", "A", "B", "C")], tree.render()
    expected_services = {"agent-a", "agent-b", "agent-c"} if http_spans else {"agent-a", "agent-c"}
    assert {s.service_name for s in remote} == expected_services
    http = [s for s in spans if s.scope_name != semconv.INSTRUMENTATION_NAME]
    assert bool(http) is http_spans, tree.render()
    # each server span's parent is the caller's client span, emitted by another process, or
    # with HTTP spans layered in, the caller's HTTP client span (and the callee's HTTP server span)
    for callee in "ABC":
        server = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.SERVER)
        call = tree.one(name=f"invoke_agent {callee}", kind=SpanKind.CLIENT)
        between: list[SpanData] = []
        for ancestor in tree.ancestors(server):
            if ancestor.span_id == call.span_id:
                break
            between.append(ancestor)
        else:
            pytest.fail(f"the client span of {callee} is not above its server span:\n{tree.render()}")
        # HTTP spans in between: B serves behind the ASGI middleware, A and B trace httpx
        expected = {
            "A": [],
            "B": [(SpanKind.SERVER, "agent-b"), (SpanKind.CLIENT, "agent-a")],
            "C": [(SpanKind.CLIENT, "agent-b")],
        }[callee]
        assert [(p.kind, p.service_name) for p in between] == (expected if http_spans else []), tree.render()
        assert server.resource != call.resource
        assert server.status_code is StatusCode.UNSET and call.status_code is StatusCode.UNSET
        assert server.attributes[semconv.A2A_TASK_STATE] == call.attributes[semconv.A2A_TASK_STATE] == "completed"
    assert [(c.caller, c.callee) for c in tree.calls()] == [("pytest", "A"), ("A", "B"), ("B", "C")]
    agent_steps_complete([s for s in spans if s.scope_name == semconv.INSTRUMENTATION_NAME])

    result = evaluate_graph(spans)
    assert sorted(a.name for a in result.agents) == ["A", "B", "C", "pytest"]
    assert [(e.caller, e.callee, e.count) for e in result.edges] == [("A", "B", 1), ("B", "C", 1), ("pytest", "A", 1)]
    assert result.detections.isolated_agents == []
    critical = result.metrics["critical_path"]
    assert isinstance(critical, dict)
    assert set(critical["by_agent_ms"]) <= {"A", "B", "C", "pytest"}
