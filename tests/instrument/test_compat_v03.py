"""Interop with a2a-sdk 0.3 (what AgentBeats runs), each 0.3 side in its own virtual environment."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.spans import SpanKind
from coordbench.steps import AgentInvocation, ToolInvocation, step_from_span
from coordbench.testing import RecordingSpanExporter

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).parent.parent / "agents"
PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"


@pytest.fixture
def v03_server(v03_python: Path) -> Iterator[str]:
    proc = subprocess.Popen([str(v03_python), str(AGENTS / "v03_server.py")], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("READY "), line
    yield line.split()[1]
    proc.terminate()
    proc.communicate(timeout=20)


@pytest.mark.parametrize("mode", ["send", "streaming"])
def test_v03_client_talks_to_an_instrumented_agent(
    v03_python: Path, start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter, mode: str
) -> None:
    url = start_agent("Modern")
    traceparent = f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"
    result = subprocess.run(
        [str(v03_python), str(AGENTS / "v03_client.py"), url, mode, traceparent],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    reply = json.loads(result.stdout)
    assert reply["state"] == "completed"
    assert reply["text"] == "Modern(hello from 0.3)"
    server = next(s for s in a2a_instrumented.wait_for(1) if s.kind is SpanKind.SERVER)
    # the 0.3 client sends no traceparent header: the parent comes from the message metadata
    assert (server.trace_id, server.parent_span_id) == (PARENT_TRACE, PARENT_SPAN)
    assert server.attributes[semconv.A2A_METHOD] == ("message/stream" if mode == "streaming" else "message/send")
    assert server.attributes[semconv.A2A_PROTOCOL_VERSION] == "0.3"
    assert server.attributes[semconv.A2A_TASK_STATE] == "completed"
    assert semconv.TRACEABILITY_EXTENSION_URI in server.attributes[semconv.A2A_REQUESTED_EXTENSIONS]  # type: ignore[operator]


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_instrumented_client_talks_to_a_v03_agent(
    v03_server: str, a2a_instrumented: RecordingSpanExporter, streaming: bool
) -> None:
    client = AgentClient(v03_server, streaming=streaming)
    state, text = await client.ask("hi")
    await client.close()
    assert state == "TASK_STATE_COMPLETED"
    seen = json.loads(text)
    call = next(s for s in a2a_instrumented.spans() if s.name == "invoke_agent Legacy")
    assert seen["header_traceparent"].startswith(f"00-{call.trace_id}-{call.span_id}-")
    assert seen["metadata_traceparent"] == seen["header_traceparent"]
    assert set(seen["extensions"]) == {semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI}
    assert call.attributes[semconv.A2A_PROTOCOL_VERSION] == "0.3"
    assert call.attributes[semconv.A2A_METHOD] == ("message/stream" if streaming else "message/send")
    assert call.attributes[semconv.A2A_TASK_STATE] == "completed"
    # the 0.3 agent reports Steps (the extension sample's shape) instead of spans: they reach the span
    assert call.attributes[semconv.A2A_STEP_COST] == 0.25
    step = step_from_span(call)
    assert isinstance(step.step_action, AgentInvocation) and step.step_action.response_trace is not None
    (tool,) = step.step_action.response_trace.steps
    assert tool.step_action == ToolInvocation("get_exchange_rate", {"currency_from": "USD", "currency_to": "EUR"})
    assert (tool.latency, tool.total_tokens) == (7, 12)
