"""A tau2 run as a user starts it (``coordbench tau2 run`` in its own process) lands as one trace.

The agent under test is another process, traced in code; both export to our receiver. The
run's trace holds the driver's ``tau2 run`` span, one A2A call per request and the agent's
spans under them, and its agent graph has the two: ``tau2`` (the host, as an assessor is)
calling ``mock-domain-agent``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from conftest import Backend
from coordbench.graph import AGENT, HOST, build_agent_graph
from coordbench.spans import span_from_dict
from support.processes import AgentProcess, exporting_env
from support.scripted_user import ScriptedUser

pytestmark = pytest.mark.slow

MOCK_AGENT = str(Path(__file__).parent.parent / "agents" / "tau2_mock.py")


def test_a_tau2_run_is_one_trace_whose_graph_has_the_driver_and_the_agent(
    backend: Backend,
    scripted_user: ScriptedUser,
    subprocess_env: dict[str, str],
    processes: list[AgentProcess],
    tmp_path: Path,
) -> None:
    agent_env = exporting_env(subprocess_env, backend.url, "mock-domain-agent")
    agent = AgentProcess([sys.executable, MOCK_AGENT, "--configure-tracing"], agent_env)
    processes.append(agent)
    driver_env = {k: v for k, v in subprocess_env.items() if not k.startswith("OTEL_")}
    driver_env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": backend.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    command = [sys.executable, "-m", "coordbench", "tau2", "run", "--domain", "mock"]
    command += ["--task-ids", "create_task_1", "update_task_1", "--max-concurrency", "2"]
    command += ["--agent", "a2a_agent", "--a2a-endpoint", agent.url]
    command += ["--user-llm", "openai/scripted-user", "--user-llm-args", scripted_user.llm_args()]
    command += ["--results-dir", str(tmp_path), "--save-to", "traced"]
    done = subprocess.run(command, env=driver_env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (trace_id,) = re.findall(r"^trace id: ([0-9a-f]{32})$", done.stderr, re.M)
    metrics = json.loads((tmp_path / "traced_a2a_metrics.json").read_text())
    assert metrics["trace_id"] == trace_id
    assert [t["reward"] for t in metrics["tasks"]] == [1.0, 1.0]
    agent.stop()  # flushes the agent's spans

    document = httpx.get(f"{backend.url}/v1/traces/{trace_id}", params={"wait": 20, "quiet": 1}, timeout=60).json()
    spans = [span_from_dict(s) for s in document["spans"]]
    assert {s.trace_id for s in spans} == {trace_id}
    listing = httpx.get(f"{backend.url}/v1/traces", timeout=10).json()["traces"]
    assert [t["trace_id"] for t in listing] == [trace_id]  # nothing of the run landed elsewhere
    (root,) = [s for s in spans if s.parent_span_id is None]
    assert (root.name, root.service_name) == ("tau2 run", "tau2")
    clients = [s for s in spans if s.kind.name == "CLIENT" and s.service_name == "tau2"]
    servers = [s for s in spans if s.kind.name == "SERVER" and s.service_name == "mock-domain-agent"]
    assert len(clients) == len(servers) == metrics["totals"]["requests"] == 4
    graph = build_agent_graph(spans)
    assert dict(graph.nodes(data="role")) == {"tau2": HOST, "mock-domain-agent": AGENT}  # the driver hosts the run
    assert list(graph.edges(data="count")) == [("tau2", "mock-domain-agent", 4)]
    assert graph.nodes["mock-domain-agent"]["requests"] == 4
