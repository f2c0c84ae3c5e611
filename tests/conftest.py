"""Shared fixtures: relay agents served on loopback, and an OTLP sink for cross-process spans."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.testing import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))

from agents.relay import RelayExecutor
from support.otlp_sink import OtlpSink

pytest_plugins = ["pytester"]

StartAgent = Callable[..., str]


@pytest.fixture
def start_agent() -> Iterator[StartAgent]:
    """Start a relay agent on a random loopback port: ``start_agent("B", next_url=..., behaviour=...)`` → URL."""
    servers: list[LoopbackServer] = []

    def start(name: str, **options: object) -> str:
        executor = RelayExecutor(name, **options)  # type: ignore[arg-type]
        server = LoopbackServer(
            lambda url: create_a2a_app(build_agent_card(name, url, description=f"relay {name}"), executor)
        )
        servers.append(server)
        return server.start()

    yield start
    for server in reversed(servers):
        server.stop()


@pytest.fixture
def otlp_sink() -> Iterator[OtlpSink]:
    """A tiny OTLP/HTTP receiver on loopback collecting spans from other processes."""
    sink = OtlpSink()
    sink.start()
    yield sink
    sink.stop()


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """Environment for agent subprocesses: this interpreter's, with tests/ importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    env.pop("PYTEST_CURRENT_TEST", None)
    return env
