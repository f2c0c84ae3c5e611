"""tau2-bench runs on loopback: the rule-based mock-domain agent, the scripted user, and a runner.

Skipped as a whole, saying why, when the ``tau2`` extra is not installed (``make test``
installs it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tau2", reason="tau2-bench is not installed: uv sync --extra tau2 (make test installs it)")

from agents.tau2_mock import MockDomainExecutor, Wire, mock_agent_app
from coordbench.tau2.cli import main
from coordbench.testing import LoopbackServer
from support.scripted_user import ScriptedUser

# tau2's user simulator calls the scripted user through litellm, whose per-endpoint client cache
# drops clients it built concurrently (tasks run side by side) without closing them; the garbage
# collector then reports their sockets, wherever it happens to run. Those sockets are litellm's;
# the warning is ignored for sockets only, in these tests only.
LITELLM_SOCKETS = "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(__file__).parent in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.filterwarnings(LITELLM_SOCKETS))


@dataclass
class MockAgent:
    url: str
    executor: MockDomainExecutor
    wire: Wire


StartMockAgent = Callable[..., MockAgent]


@pytest.fixture
def start_mock_agent() -> Iterator[StartMockAgent]:
    """``start_mock_agent("good", token=None, delay=0, message_url=None, http_status=None)`` → a :class:`MockAgent`."""
    servers: list[LoopbackServer] = []

    def start(
        behaviour: str = "good",
        *,
        token: str | None = None,
        delay: float = 0.0,
        message_url: str | None = None,
        http_status: int | None = None,
    ) -> MockAgent:
        executor = MockDomainExecutor(behaviour, delay=delay)
        wire = Wire()
        server = LoopbackServer(
            lambda url: mock_agent_app(
                url, executor, token=token, wire=wire, message_url=message_url, http_status=http_status
            )
        )
        servers.append(server)
        return MockAgent(server.start(), executor, wire)

    yield start
    for server in reversed(servers):
        server.stop()


@pytest.fixture
def scripted_user() -> Iterator[ScriptedUser]:
    user = ScriptedUser()
    user.start()
    yield user
    user.stop()


@dataclass
class Tau2Run:
    code: int
    results: dict[str, Any]
    metrics: dict[str, Any]

    def rewards(self) -> dict[str, float]:
        return {s["task_id"]: s["reward_info"]["reward"] for s in self.results.get("simulations", [])}

    def errors(self) -> list[str | None]:
        return [r["error_kind"] for t in self.metrics["tasks"] for r in t["requests"]]


RunTau2 = Callable[..., Tau2Run]


@pytest.fixture
def run_tau2(tmp_path: Path, scripted_user: ScriptedUser) -> RunTau2:
    """Run ``coordbench tau2 run`` in this process on the mock domain with the scripted user."""

    def run(*args: str, tasks: tuple[str, ...] = ("create_task_1",)) -> Tau2Run:
        save_to = f"run{time.monotonic_ns()}"
        code = main(
            [
                "run",
                "--domain",
                "mock",
                "--task-ids",
                *tasks,
                "--user-llm",
                "openai/scripted-user",
                "--user-llm-args",
                scripted_user.llm_args(),
                "--results-dir",
                str(tmp_path),
                "--save-to",
                save_to,
                *args,
            ]
        )
        results_file = tmp_path / f"{save_to}.json"
        metrics_file = tmp_path / f"{save_to}_a2a_metrics.json"
        results = json.loads(results_file.read_text()) if results_file.exists() else {}
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
        return Tau2Run(code, results, metrics)

    return run
