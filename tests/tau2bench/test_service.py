"""tau2 evaluations over A2A: the ADK service evaluating the loopback agent, asked by 1.3 and 0.3 clients."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from coordbench.a2a import Messenger
from coordbench.testing import LoopbackServer
from support.chat_server import ChatServer
from support.scripted_user import ScriptedUser
from support.serving import free_port
from tau2bench.conftest import StartMockAgent

pytest.importorskip("google.adk", reason="Google ADK is not installed: uv sync --extra adk (make test installs it)")

from coordbench.tau2.service import AGENTS_DIR, SERVICE_NAME, service_app, service_card

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).parent.parent / "agents"


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("COORDBENCH_TAU2_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("OPENAI_API_KEY", "local-key")  # litellm reads the user LLM's key from here
    monkeypatch.setenv("AGENT_TOKEN", "agent-s3cret")
    monkeypatch.delenv("COORDBENCH_TAU2_SERVICE_LLM", raising=False)
    with LoopbackServer(service_app) as url:
        yield url


def evaluation(agent_url: str, user: ScriptedUser, **args: Any) -> dict[str, Any]:
    return {
        "tool": "run_tau2_evaluation",
        "args": {
            "domain": "mock",
            "agent_endpoint": agent_url,
            "user_llm": "openai/scripted-user",
            "user_llm_args": {"api_base": user.base_url},
            **args,
        },
    }


def test_the_card_describes_both_tools_and_their_parameters(service: str) -> None:
    card = httpx.get(f"{service}.well-known/agent-card.json", timeout=10).json()
    assert card["name"] == SERVICE_NAME
    skills = {s["id"]: s["description"] for s in card["skills"]}
    assert set(skills) == {"list_domains", "run_tau2_evaluation"}
    for parameter in ("domain", "agent_endpoint", "user_llm", "num_trials", "task_ids", "num_tasks"):
        assert parameter in skills["run_tau2_evaluation"]
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC"}  # what ADK serves
    # the card shipped for `adk api_server --a2a` is the same card at ADK's address
    shipped = json.loads((AGENTS_DIR / SERVICE_NAME / "agent.json").read_text())
    from google.protobuf.json_format import MessageToDict

    assert shipped == MessageToDict(service_card(f"http://127.0.0.1:8000/a2a/{SERVICE_NAME}"))
    assert {i["url"] for i in shipped["supportedInterfaces"]} == {f"http://127.0.0.1:8000/a2a/{SERVICE_NAME}"}


async def test_list_domains_by_data_part_and_by_words(service: str) -> None:
    async with Messenger(timeout=60) as messenger:
        by_data = await messenger.send(service, data={"tool": "list_domains"}, new_conversation=True)
        by_words = await messenger.send(service, "Which domains can you run?", new_conversation=True)
        unclear = await messenger.send(service, "hello", new_conversation=True)
    assert by_data.state == by_words.state == "completed"
    assert by_data.data[0]["domains"] == ["mock", "airline", "retail", "telecom", "telecom-workflow"]
    assert by_words.data == by_data.data
    assert unclear.state == "completed" and '{"tool": "list_domains"}' in unclear.text
    assert by_data.metadata["adk_session_id"] == by_data.context_id  # the A2A context is the ADK session


async def test_an_evaluation_reports_progress_and_returns_rewards_as_a_data_artifact(
    service: str, start_mock_agent: StartMockAgent, scripted_user: ScriptedUser, tmp_path: Path
) -> None:
    agent = start_mock_agent("slow", delay=0.4, token="agent-s3cret")  # slow enough for progress reports
    statuses: list[str] = []
    async with Messenger(timeout=120) as messenger:
        reply = await messenger.send(
            service,
            data=evaluation(
                agent.url,
                scripted_user,
                task_ids=["create_task_1", "update_task_1"],
                num_trials=2,
                agent_token_env="AGENT_TOKEN",
            ),
            on_status=lambda _state, text: statuses.append(text),
        )
    assert reply.state == "completed", reply.text
    (result,) = reply.data
    assert result["avg_reward"] == 1.0 and result["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert sorted((t["task_id"], t["trial"]) for t in result["tasks"]) == [
        ("create_task_1", 0),
        ("create_task_1", 1),
        ("update_task_1", 0),
        ("update_task_1", 1),
    ]
    assert result["protocol_metrics"]["totals"]["requests"] == agent.wire.posts == 8
    assert any(s.endswith("/4 simulations done") for s in statuses), statuses
    written = json.dumps(result) + await asyncio.to_thread(Path(result["files"]["results"]).read_text)
    assert "local-key" not in written and "agent-s3cret" not in written


async def test_two_concurrent_evaluations_do_not_mix(
    service: str, start_mock_agent: StartMockAgent, scripted_user: ScriptedUser
) -> None:
    good = start_mock_agent("good")
    failing = start_mock_agent("fail")
    async with Messenger(timeout=120) as messenger:
        one, two = await asyncio.gather(
            messenger.send(
                service, data=evaluation(good.url, scripted_user, task_ids=["create_task_1"]), new_conversation=True
            ),
            messenger.send(
                service, data=evaluation(failing.url, scripted_user, task_ids=["update_task_1"]), new_conversation=True
            ),
        )
    assert one.context_id != two.context_id
    (good_result,), (failing_result,) = one.data, two.data
    assert [(t["task_id"], t["reward"]) for t in good_result["tasks"]] == [("create_task_1", 1.0)]
    assert [(t["task_id"], t["reward"]) for t in failing_result["tasks"]] == [("update_task_1", 0.0)]
    assert good_result["protocol_metrics"]["totals"]["errors"] == {}
    assert failing_result["protocol_metrics"]["totals"]["errors"] == {"agent_failed": 1}
    assert set(good.executor.contexts).isdisjoint(failing.executor.contexts)
    assert good_result["files"]["results"] != failing_result["files"]["results"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"domain": "chess"}, "domain must be one of mock, airline, retail, telecom, telecom-workflow, not 'chess'"),
        ({"agent_endpoint": ""}, "agent_endpoint is required"),
        ({"user_llm_args": {"api_key": "sk-x"}}, "user_llm_args must not carry a key"),
        ({"task_ids": ["create_task_9"]}, "domain mock has no task(s) create_task_9"),
        ({"num_trials": 0}, "num_trials must be an integer from 1 to 10, not 0"),
        ({"agent_token_env": "NO_SUCH_VARIABLE"}, "the service's environment has no variable 'NO_SUCH_VARIABLE'"),
        ({"agent_endpoint": "http://127.0.0.1:9/"}, "cannot read the agent card at http://127.0.0.1:9/"),
        ({"agent_endpoint": "file:///etc/passwd"}, "invalid A2A setting endpoint"),
        ({"trials": 2}, "unknown argument(s) trials"),
    ],
)
async def test_requests_that_cannot_run_fail_with_the_reason(
    service: str, scripted_user: ScriptedUser, args: dict[str, Any], message: str
) -> None:
    request = evaluation("http://127.0.0.1:1/", scripted_user, task_ids=["create_task_1"])
    request["args"] |= args
    async with Messenger(timeout=60) as messenger:
        reply = await messenger.send(service, data=request, new_conversation=True)
    assert reply.state == "failed"
    assert message in reply.text
    assert "sk-x" not in reply.text


def test_an_a2a_sdk_0_3_client_gets_the_results(
    v03_python: Path, service: str, start_mock_agent: StartMockAgent, scripted_user: ScriptedUser
) -> None:
    agent = start_mock_agent("good")
    request = json.dumps(evaluation(agent.url, scripted_user, task_ids=["create_task_1"]))
    done = subprocess.run(
        [str(v03_python), str(AGENTS / "v03_tau2_client.py"), service, request],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["state"] == "completed"
    (result,) = out["data"]
    assert result["avg_reward"] == 1.0 and result["agent"] == "mock-domain-agent"


def test_adk_api_server_serves_the_shipped_agents_folder(
    subprocess_env: dict[str, str], tmp_path: Path, start_mock_agent: StartMockAgent, scripted_user: ScriptedUser
) -> None:
    adk = shutil.which("adk", path=str(Path(sys.executable).parent))
    assert adk is not None
    # the shipped folder as a user would copy it, its card moved to a free port
    port = free_port()
    folder = tmp_path / "agents"
    shutil.copytree(AGENTS_DIR, folder, ignore=shutil.ignore_patterns("__pycache__"))
    card_file = folder / SERVICE_NAME / "agent.json"
    card_file.write_text(card_file.read_text().replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
    env = {**subprocess_env, "COORDBENCH_TAU2_RESULTS_DIR": str(tmp_path / "results"), "OPENAI_API_KEY": "k"}
    server = subprocess.Popen(
        [adk, "api_server", "--a2a", "--host", "127.0.0.1", "--port", str(port), str(folder)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/a2a/{SERVICE_NAME}/"
    try:
        assert card_of(base, server, "adk api_server")["name"] == SERVICE_NAME
        agent = start_mock_agent("good")

        async def ask() -> Any:
            async with Messenger(timeout=120) as messenger:
                return await messenger.send(base, data=evaluation(agent.url, scripted_user, task_ids=["create_task_1"]))

        reply = asyncio.run(ask())
        assert reply.state == "completed", reply.text
        assert reply.data[0]["avg_reward"] == 1.0
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert os.listdir(tmp_path / "results")


def card_of(base: str, server: subprocess.Popen[str], what: str) -> dict[str, Any]:
    """The agent card of a server process once it serves it (polled, with a deadline)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            card = httpx.get(f"{base}.well-known/agent-card.json", timeout=5)
            if card.status_code == 200:
                return card.json()
        except httpx.TransportError:
            pass
        assert server.poll() is None and time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.2)


def test_coordbench_tau2_serve_answers_over_a2a(subprocess_env: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    env = {**subprocess_env, "COORDBENCH_TAU2_RESULTS_DIR": str(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "coordbench", "tau2", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        card_of(base, server, "coordbench tau2 serve")

        async def ask() -> Any:
            async with Messenger(timeout=60) as messenger:
                return await messenger.send(base, data={"tool": "list_domains"})

        reply = asyncio.run(ask())
        assert reply.state == "completed" and "mock" in reply.data[0]["domains"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert f"card at {base}.well-known/agent-card.json" in " ".join(err.split())


class _Router(ChatServer):
    """A local OpenAI-compatible model that routes to list_domains, then reports its result."""

    model = "router"

    async def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if last.get("role") == "tool":
            return {"role": "assistant", "content": f"The domains: {last.get('content')}"}
        call = {"id": "call_1", "type": "function", "function": {"name": "list_domains", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}


async def test_with_a_model_configured_the_model_chooses_the_tool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    router = _Router()
    with router as model_base:
        monkeypatch.setenv("COORDBENCH_TAU2_SERVICE_LLM", "openai/router")
        monkeypatch.setenv("COORDBENCH_TAU2_SERVICE_LLM_API_BASE", model_base)
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        monkeypatch.setenv("COORDBENCH_TAU2_RESULTS_DIR", str(tmp_path))
        with LoopbackServer(service_app) as url:
            async with Messenger(timeout=120) as messenger:
                reply = await messenger.send(url, "What can you evaluate?")
    assert reply.state == "completed", reply.text
    assert "telecom-workflow" in reply.text
    offered = {t["function"]["name"] for t in router.requests[0]["tools"]}
    assert offered == {"list_domains", "run_tau2_evaluation"}
    assert len(router.requests) == 2  # the tool call, then the answer from its result
