"""Shared fixtures: relay agents served on loopback, and an OTLP sink for cross-process spans."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.server.app import create_app
from coordbench.server.state import backend_of
from coordbench.settings import Settings
from coordbench.testing import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))

from agents.relay import RelayExecutor
from support.otlp_sink import OtlpSink

pytest_plugins = ["pytester", "support.processes"]

# Scripts for other interpreters (a2a-sdk 0.3, the model server) and the plugin package: not test modules.
collect_ignore_glob = ["agents/v03_*.py", "agents/tau2_*.py", "plugins/*"]

StartAgent = Callable[..., str]

LOCAL_MODEL_GROUP = "local-model"
"""The xdist group of every test that needs the local model: one worker runs them, one model server serves them."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group tests for ``--dist loadgroup``: a file's tests together, and every test of the local model together.

    The model server has one slot and takes two cores' worth of CPU while it thinks: two workers each
    starting their own (a session fixture per worker) ran both at once and slowed every test on the
    machine. In one group, one worker runs the model tests one after another on one server.
    """
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        needs_model = item.get_closest_marker("llm") is not None or "local_llm" in getattr(item, "fixturenames", ())
        item.add_marker(pytest.mark.xdist_group(LOCAL_MODEL_GROUP if needs_model else item.nodeid.split("::")[0]))


@pytest.fixture(scope="module", autouse=True)
def _collect_garbage_after_each_file() -> Iterator[None]:
    """A full garbage collection after each test file, so a leak is reported in the file that made it.

    A socket or file left open inside a reference cycle is only found, and its ResourceWarning
    raised (an error here), when the cyclic collector next runs: otherwise in whichever test
    happens to be running then, often in another file.

    What survives the collection (the imports, session fixtures, caches) is then frozen
    (:func:`gc.freeze`): no later collection walks it again, automatic ones included. A worker
    that has loaded the model frameworks holds millions of objects, and each full collection
    over them took about a second; now each walks what was made since the last file ended.
    """
    yield
    gc.collect()
    gc.freeze()


def pytest_sessionfinish() -> None:
    """Unfreeze at the end, so the interpreter's last collection frees all of it.

    Frozen objects are never collected, not even as the interpreter exits, and extension types
    that count their live objects at exit (duckdb's, through nanobind) would report them leaked.
    """
    gc.unfreeze()


@pytest.fixture
def start_agent() -> Iterator[StartAgent]:
    """Start a relay agent on a random loopback port: ``start_agent("B", next_url=..., behaviour=...)`` → URL."""
    servers: list[LoopbackServer] = []

    def start(name: str, **options: object) -> str:
        executor = RelayExecutor(name, **options)  # type: ignore[arg-type]

        def app(url: str) -> object:
            executor.self_url = url
            return create_a2a_app(build_agent_card(name, url, description=f"relay {name}"), executor)

        server = LoopbackServer(app)
        servers.append(server)
        return server.start()

    yield start
    for server in reversed(servers):
        server.stop()


class Backend:
    """A running trace backend (uvicorn on loopback, gRPC on a free port)."""

    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.url = server.url.rstrip("/")
        self.app = server.app

    @property
    def grpc_port(self) -> int:
        return int(backend_of(self.app).grpc_port or 0)

    def stats(self) -> dict[str, object]:
        return httpx.get(f"{self.url}/v1/stats", headers=self.headers, timeout=10).json()

    headers: dict[str, str] = {}  # noqa: RUF012 - replaced per instance when a token is set


StartBackend = Callable[..., Backend]


@pytest.fixture
def start_backend() -> Iterator[StartBackend]:
    """Start the trace backend: ``start_backend(max_spans=10, token="t")`` → :class:`Backend`."""
    servers: list[LoopbackServer] = []

    def start(**overrides: object) -> Backend:
        settings = Settings(**{"grpc_port": 0, **overrides})  # type: ignore[arg-type]
        server = LoopbackServer(lambda _url: create_app(settings))
        servers.append(server)
        server.start()
        backend = Backend(server)
        if settings.token:
            backend.headers = {"Authorization": f"Bearer {settings.token.get_secret_value()}"}
        return backend

    yield start
    for server in reversed(servers):
        server.stop()


@pytest.fixture
def backend(start_backend: StartBackend) -> Backend:
    """A trace backend with default settings."""
    return start_backend()


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
