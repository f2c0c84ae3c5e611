"""A green assessor served on loopback, and participant agents in their own processes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from coordbench.green import GreenSettings, create_green_app
from coordbench.testing import LoopbackServer
from support.processes import RELAY, AgentProcess, exporting_env


class Green:
    """A running assessor."""

    def __init__(self, server: LoopbackServer, output_dir: Path) -> None:
        self.server = server
        self.url = server.url
        self.app = server.app
        self.output_dir = output_dir


StartGreen = Callable[..., Green]


@pytest.fixture
def start_green(tmp_path: Path) -> Iterator[StartGreen]:
    """Start the assessor: ``start_green(name="green", heartbeat=...)`` → :class:`Green`."""
    servers: list[LoopbackServer] = []

    def start(**overrides: object) -> Green:
        output = tmp_path / f"output-{len(servers)}"
        values: dict[str, object] = {"output_dir": output, "grpc_port": None, **overrides}

        def app(url: str) -> object:
            return create_green_app(GreenSettings(card_url=url, **values))  # type: ignore[arg-type]

        server = LoopbackServer(app)
        servers.append(server)
        server.start()
        return Green(server, output)

    yield start
    for server in reversed(servers):
        server.stop()


StartParticipant = Callable[..., AgentProcess]


@pytest.fixture
def start_participant(processes: list[AgentProcess], subprocess_env: dict[str, str]) -> Iterator[StartParticipant]:
    """Start a relay agent process exporting its spans (with message content) to ``endpoint``."""

    def start(name: str, endpoint: str, *, behaviour: str = "echo", capture: bool = True) -> AgentProcess:
        env = exporting_env(subprocess_env, endpoint, name)
        if capture:
            env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        command = [sys.executable, RELAY, "--name", name, "--behaviour", behaviour, "--configure-tracing"]
        process = AgentProcess(command, env)
        processes.append(process)
        return process

    yield start
