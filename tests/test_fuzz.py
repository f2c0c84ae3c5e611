"""Fuzzing every route of the green, the receiver and a purple agent: no 5xx, no hang, bounded memory.

Each server runs as its own process. The routes in their OpenAPI documents are fuzzed by
schemathesis (valid and invalid parameters, bodies and content types); the A2A routes, which
are not in OpenAPI, and every route with raw bodies, by Hypothesis. Every answer must come
within :data:`ANSWER_LIMIT` seconds and be below 500, and each process's resident memory may
not grow by more than :data:`MEMORY_GROWTH` bytes over the run.

``COORDBENCH_FUZZ_EXAMPLES`` sets the examples per route (default 15, enough for ``make test``);
raise it for a longer run (``COORDBENCH_FUZZ_EXAMPLES=500 pytest tests/test_fuzz.py``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from support.commands import ServerProcess
from support.processes import AgentProcess

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("COORDBENCH_FUZZ_EXAMPLES", "15"))
ANSWER_LIMIT = 30.0
"""Seconds an answer may take: far beyond any answer these servers give (they take milliseconds)."""
MEMORY_GROWTH = 300 * 1024 * 1024
TOKEN = "fuzz-token-9d1c"


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class Served:
    """A server process under fuzzing, with its memory when the fuzzing started."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.url = server.url
        self.headers = server.headers
        self.rss_at_start = _rss(server.proc.pid)

    def check_memory(self) -> None:
        grown = _rss(self.server.proc.pid) - self.rss_at_start
        assert grown < MEMORY_GROWTH, f"resident memory grew by {grown / 2**20:.0f} MiB under fuzzing"


@pytest.fixture(scope="module")
def green(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env = {**os.environ, "COORDBENCH_TOKEN": TOKEN}
    out = tmp_path_factory.mktemp("fuzz-green")
    with ServerProcess("green", "--output-dir", str(out), env=env, token=TOKEN) as server:
        served = Served(server)
        yield served
        served.check_memory()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Served]:
    env = {**os.environ, "COORDBENCH_TOKEN": TOKEN}
    with ServerProcess("receiver", "--no-grpc", env=env, token=TOKEN) as server:
        served = Served(server)
        yield served
        served.check_memory()


@pytest.fixture(scope="module")
def purple() -> Iterator[str]:
    command = [sys.executable, "-m", "coordbench.cli", "purple", "--role", "writer", "--shape", "star", "--port", "0"]
    agent = AgentProcess(command, dict(os.environ))
    try:
        yield agent.url.rstrip("/")
    finally:
        agent.stop()


NO_SHRINK = [Phase.explicit, Phase.generate]
"""A failure is reported as generated: shrinking a hang would wait out a timeout at every step."""
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
OPEN_BY_DESIGN = {"/", "/healthz"}
"""Paths the green answers without its token: the A2A agent (AgentBeats sends none) and the health check."""


def _operations(served: Served) -> list[Any]:
    schema = schemathesis.openapi.from_url(f"{served.url}/openapi.json", headers=served.headers)
    return [result.ok() for result in schema.get_all_operations()]


def _fuzz_operations(served: Served, *, with_token: bool, open_paths: frozenset[str] = frozenset()) -> int:
    """Fuzz every OpenAPI operation of ``served`` with valid and invalid cases; how many operations."""
    operations = _operations(served)
    for operation in operations:
        if not with_token and operation.path in open_paths:
            continue
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE)
        )

        @FUZZ
        @given(case=strategy)
        def run(case: Any) -> None:
            headers = served.headers if with_token else {}
            response = case.call(base_url=served.url, headers=headers, timeout=ANSWER_LIMIT)
            case.validate_response(response, checks=[not_a_server_error])
            if not with_token:
                assert response.status_code == 401, (
                    f"{case.method} {case.path} answered {response.status_code} without the token"
                )

        run()
    return len(operations)


def test_green_routes(green: Served) -> None:
    assert _fuzz_operations(green, with_token=True) >= 8


def test_green_routes_without_the_token(green: Served) -> None:
    _fuzz_operations(green, with_token=False, open_paths=frozenset(OPEN_BY_DESIGN))


def test_receiver_routes(receiver: Served) -> None:
    assert _fuzz_operations(receiver, with_token=True) >= 6


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
METHODS = st.sampled_from(
    ["SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "ListTasks", "SubscribeToTask",
     "GetExtendedAgentCard", "message/send", "message/stream", "tasks/get", "tasks/cancel", "nope"]
)  # fmt: skip
REQUEST = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": METHODS},
    optional={"id": st.one_of(st.integers(), st.text(max_size=10), st.none()), "params": JSON},
)
BODY = st.one_of(
    REQUEST.map(lambda r: json.dumps(r).encode()),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=300),
    st.sampled_from([b'{"id": "\\ud800", "jsonrpc": "2.0", "method": "SendMessage"}', b'{"id": NaN}', b"[" * 5000,
                     b'{"jsonrpc": "2.0", "method": "SendMessage", "id": 1, "params": {"message": "\\udc00"}}']),
)  # fmt: skip
PATHS = st.sampled_from(["/", "/rest/message:send", "/rest/tasks/x", "/.well-known/agent-card.json", "/v1/traces",
                         "/traces", "/register"])  # fmt: skip
CONTENT_TYPES = st.sampled_from(["application/json", "application/x-protobuf", "text/plain", "application/grpc"])


def _raw(url: str, path: str, body: bytes, content_type: str, headers: dict[str, str]) -> None:
    try:
        response = httpx.post(
            f"{url}{path}",
            content=body,
            headers={"Content-Type": content_type, "A2A-Version": "1.0", **headers},
            timeout=ANSWER_LIMIT,
        )
    except httpx.TimeoutException as exc:
        raise AssertionError(
            f"POST {path} ({content_type}) got no answer in {ANSWER_LIMIT:g} s: {body[:300]!r}"
        ) from exc
    assert response.status_code < 500, f"POST {path} ({content_type}) answered {response.status_code}: {body[:200]!r}"


@settings(
    max_examples=EXAMPLES * 8, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
@given(path=PATHS, body=BODY, content_type=CONTENT_TYPES, with_token=st.booleans())
def test_green_raw_bodies(green: Served, path: str, body: bytes, content_type: str, with_token: bool) -> None:
    _raw(green.url, path, body, content_type, green.headers if with_token else {})


@settings(
    max_examples=EXAMPLES * 8, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
@given(path=PATHS, body=BODY, content_type=CONTENT_TYPES)
def test_purple_agent_raw_bodies(purple: str, path: str, body: bytes, content_type: str) -> None:
    _raw(purple, path, body, content_type, {})


@settings(
    max_examples=EXAMPLES * 4, deadline=None, suppress_health_check=list(HealthCheck), database=None, phases=NO_SHRINK
)
@given(path=PATHS, body=BODY, content_type=CONTENT_TYPES)
def test_receiver_raw_bodies(receiver: Served, path: str, body: bytes, content_type: str) -> None:
    _raw(receiver.url, path, body, content_type, receiver.headers)
