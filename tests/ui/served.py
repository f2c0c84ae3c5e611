"""Runs the UI tests look at: real teams' traces posted as OTLP bytes to a receiver that evaluates them online."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import httpx

from conftest import Backend
from coordbench.server.app import create_app
from coordbench.settings import Settings
from coordbench.testing import LoopbackServer
from evals.teams import Team, Worker
from online.traces import FAILING, GOOD, SERIAL, evaluation, post, team_trace, trace_id

ONLINE = {"evaluate": True, "evaluate_quiet": 0.2, "evaluate_settle": 1.0}

HOSTILE_TEAM = "<img src=x onerror=alert(1)>\"'&amp;</title><script>alert(2)</script>"
"""A team name (``service.namespace``) written to break out of every place a page puts it."""
HOSTILE_AGENT = "<svg/onload=alert(3)>"
"""An agent (service) name written the same way."""
HOSTILE = replace(
    FAILING,
    workers=(
        Worker(HOSTILE_AGENT, extra_failures=8, duplicate=True, relay="relay"),
        Worker("analyst", extra_failures=8, duplicate=True),
        Worker('writer"><b>x</b>', extra_failures=8, duplicate=True),
    ),
)


@dataclass
class Runs:
    """A receiver with evaluated runs: trace ids by what they are."""

    backend: Backend
    ids: dict[str, str] = field(default_factory=dict[str, str])
    headers: dict[str, str] = field(default_factory=dict[str, str])

    @property
    def url(self) -> str:
        return self.backend.url

    def add(self, name: str, n: int, team: Team, namespace: str) -> str:
        """Post ``team``'s trace under trace id ``n`` in ``namespace`` and wait for its evaluation."""
        post(self.url, team_trace(n, team, namespace=namespace), self.headers)
        self.ids[name] = trace_id(n)
        return self.ids[name]

    def wait(self) -> None:
        """Until every posted run is evaluated (the receiver's own event ends each wait)."""
        for trace in self.ids.values():
            if self.headers:
                response = httpx.get(
                    f"{self.url}/v1/traces/{trace}/evaluation", params={"wait": 120}, headers=self.headers, timeout=150
                )
                assert response.status_code == 200, response.text
            else:
                evaluation(self.url, trace)

    def listing(self) -> list[dict[str, object]]:
        """``GET /v1/evaluations``'s entries."""
        response = httpx.get(f"{self.url}/v1/evaluations", params={"limit": 1000}, headers=self.headers, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()["evaluations"]

    def record(self, name: str) -> dict[str, object]:
        """A run's record (``GET /v1/traces/{id}/evaluation``)."""
        response = httpx.get(f"{self.url}/v1/traces/{self.ids[name]}/evaluation", headers=self.headers, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()


@contextmanager
def receiver(**overrides: object) -> Iterator[Backend]:
    """A receiver on loopback for a whole test module (``conftest.start_backend`` is per test)."""
    settings = Settings(**{"grpc_port": None, **overrides})  # type: ignore[arg-type]
    server = LoopbackServer(lambda _url: create_app(settings))
    server.start()
    backend = Backend(server)
    if settings.token:
        backend.headers = {"Authorization": f"Bearer {settings.token.get_secret_value()}"}
    try:
        yield backend
    finally:
        server.stop()


@contextmanager
def standard_runs(**settings: object) -> Iterator[Runs]:
    """A receiver with five evaluated runs: two of team alpha (side by side, then one after another),
    two failing ones of team beta, and a failing one of a team whose name and agents' names are markup."""
    with receiver(**{**ONLINE, **settings}) as backend:
        runs = Runs(backend, headers=dict(backend.headers))
        runs.add("good", 1, GOOD, "alpha")
        runs.add("serial", 2, SERIAL, "alpha")
        runs.add("failing", 3, FAILING, "beta")
        runs.add("hostile", 4, HOSTILE, HOSTILE_TEAM)
        runs.add("failing again", 5, FAILING, "beta")
        runs.wait()
        yield runs
