"""A team built on a real agent framework, live: Google ADK agents over A2A, thinking through the local model.

The coordinator is an ADK ``LlmAgent`` whose tools are two remote ADK agents (``AgentTool`` over
``RemoteA2aAgent``); every agent is its own process, served by ADK's ``to_a2a``, started under
``opentelemetry-instrument`` (the drop-in, zero-code path: our A2A spans beside ADK's own
``invoke_agent`` / ``generate_content`` / ``execute_tool`` spans), its model reached by LiteLLM at
the local model server, with ADK's message content on its spans (``SPAN_ONLY``). A real green
assesses the team. The trace must hold together (one tree, every call answered, complete), name
exactly the agents that worked (ADK's in-process proxies of the remote agents are not agents), and
be judged without false flags: the coordinator asked the researcher, read its answer in its next
model call, then asked the writer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.evals.config import LLM_API_KEY_ENV
from green.conftest import StartGreen, start_green
from support.processes import AgentProcess, exporting_env

__all__ = ["start_green"]  # the fixture, used here

pytest.importorskip("google.adk", reason="Google ADK is not installed: uv sync --extra adk (make test installs it)")
pytestmark = [pytest.mark.slow, pytest.mark.llm]

CONFIG: dict[str, Any] = {
    # a short task: the 0.5B model names its tools right on it (on the bundled triage it calls a tool "fix")
    "scenarios": [
        {
            "id": "outage",
            "task": "Task: summarise the outage of the payments API: cause, impact, next steps.",
            "references": ["The cause of the payments API outage, its impact, and the next steps."],
        }
    ],
    "trace_quiet": 0.5,
    "trace_timeout": 120,
    "timeout": 1800,
    "disabled_evaluators": ["text"],
}
NEVER = {"parallelism.serialised_work", "participation.unused_members", "participation.idle_members",
         "efficiency.relay_hops", "efficiency.duplicate_requests", "information_flow.relays_add_nothing",
         "robustness.unverified_calls", "robustness.incomplete_trace", "robustness.failed_calls",
         "robustness.unhandled_errors"}  # fmt: skip


def _start(processes: list[AgentProcess], env: dict[str, str], name: str, *args: str) -> AgentProcess:
    instrument = str(Path(sys.executable).parent / "opentelemetry-instrument")
    process = AgentProcess([instrument, sys.executable, "-m", "coordbench.purple.adk", *args], {**env,
                           "OTEL_SERVICE_NAME": name})  # fmt: skip
    processes.append(process)
    return process


async def test_an_adk_team_is_traced_as_one_tree_and_judged_without_false_flags(
    local_llm: str,
    start_green: StartGreen,
    processes: list[AgentProcess],
    subprocess_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    green = start_green()
    env = {
        **exporting_env(subprocess_env, green.url, "adk"),
        "PURPLE_LLM_BASE_URL": local_llm,
        "PURPLE_LLM_API_KEY": "local-model",
        "PURPLE_LLM_MODEL": "qwen2.5-coder-0.5b",
        "PURPLE_LLM_TIMEOUT": "1800",  # one slot: the agents' model calls queue at the server
        "PURPLE_LLM_MAX_TOKENS": "96",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would fetch its price list from the internet
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",  # ADK's documented setting; ours too
    }
    researcher = _start(processes, env, "researcher", "member", "researcher")
    writer = _start(processes, env, "writer", "member", "writer")
    coordinator = _start(processes, env, "coordinator", "coordinator",
                         "--member", f"researcher={researcher.url}", "--member", f"writer={writer.url}")  # fmt: skip
    request = {
        "participants": {"coordinator": coordinator.url, "researcher": researcher.url, "writer": writer.url},
        "config": CONFIG,
    }
    async with Messenger(timeout=1800) as messenger:
        reply = await messenger.send(green.url, json.dumps(request))
    assert reply.state == "completed", reply.text
    [entry] = reply.data[0]["detail"]["scenarios"]
    trace_id = entry["trace_id"]

    # the raw spans: one tree across four processes, every A2A call answered by its callee's server span
    async with httpx.AsyncClient(base_url=green.url, timeout=60) as http:
        spans = (await http.get(f"/v1/traces/{trace_id}")).json()["spans"]
    ids = {s["span_id"] for s in spans}
    assert len([s for s in spans if not s.get("parent_span_id")]) == 1
    assert all(s["parent_span_id"] in ids for s in spans if s.get("parent_span_id"))
    services = {s["resource"].get("service.name") for s in spans}
    assert {"coordinator", "researcher", "writer"} <= services
    # ADK's own spans, in each agent's process: its model calls (with their messages) and its tool calls
    by = {(s["resource"].get("service.name"), s["attributes"].get(semconv.GEN_AI_OPERATION_NAME)) for s in spans}
    for agent in ("coordinator", "researcher", "writer"):
        assert (agent, "generate_content") in by, agent
    assert ("coordinator", "execute_tool") in by
    models = [s for s in spans if s["name"].startswith("generate_content")]
    assert any(semconv.GEN_AI_INPUT_MESSAGES in s["attributes"] for s in models)

    # ADK sends each answer as a message and as an artifact: the instrumentation records its text once
    for call in (s for s in spans if s["kind"] == "CLIENT" and s["attributes"].get("a2a.caller.name") == "coordinator"):
        [message] = json.loads(call["attributes"][semconv.GEN_AI_OUTPUT_MESSAGES])
        assert len(message["parts"]) == 1, message

    assert entry["trace_complete"] is True, entry["completeness"]
    results = entry["results"]
    edges = {(e["caller"], e["callee"]) for e in results["graph"]["edges"]}
    assert {("coordinator", "researcher"), ("coordinator", "writer")} <= edges
    assert {callee for _, callee in edges} == {"coordinator", "researcher", "writer"}  # no proxy is an agent
    coordination = results["coordination"]
    assert not NEVER & set(coordination["fired"]), coordination["fired"]
    assert coordination["parts"]["parallelism"]["value"] == 1.0, coordination["parts"]["parallelism"]
