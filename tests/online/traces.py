"""Team traces for the online evaluation tests: generated spans with their own trace ids, posted as real OTLP bytes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import httpx

from coordbench.otlp import export_request
from coordbench.spans import SpanData
from evals.teams import Team, Worker, team_spans

PROTOBUF = {"Content-Type": "application/x-protobuf"}

GOOD = Team(workers=(Worker("researcher"), Worker("analyst"), Worker("writer")))
"""Three members asked side by side, each adding its own words."""
SERIAL = replace(GOOD, parallel=False)
"""The same work, one member after another: parallelism evidence fires."""
CRASHED = replace(GOOD, drop_agent="writer")
"""The writer's spans never arrive: the trace never completes."""
FAILING = Team(
    workers=(
        Worker("researcher", duplicate=True, extra_failures=8, relay="relay"),
        Worker("analyst", relay="relay2", extra_failures=8, duplicate=True),
        Worker("writer", extra_failures=8, duplicate=True, relay="relay3"),
    ),
    parallel=False,
)
"""Duplicates, relays, failures, serial work: coordination quality about 0.35."""


def until(check: Callable[[], bool], what: str, deadline: float = 180.0) -> None:
    """Poll ``check`` until it holds (an event the receiver reports), failing after a generous deadline."""
    end = time.monotonic() + deadline
    while not check():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.05)


def trace_id(n: int) -> str:
    """A distinct, valid trace id."""
    return f"{0xC0DE0000 + n:032x}"


def team_trace(n: int, team: Team = GOOD, *, namespace: str | None = None) -> list[SpanData]:
    """``team``'s spans under trace id ``n``, every resource in ``namespace`` when given."""
    spans = [s._replace(trace_id=trace_id(n)) for s in team_spans(team)]
    if namespace is not None:
        spans = [s._replace(resource={**s.resource, "service.namespace": namespace}) for s in spans]
    return spans


def post(url: str, spans: Iterable[SpanData], headers: dict[str, str] | None = None) -> httpx.Response:
    """Export ``spans`` to ``url`` as OTLP/protobuf; the answer must be 200."""
    response = httpx.post(
        f"{url}/v1/traces",
        content=export_request(list(spans)).SerializeToString(),
        headers={**PROTOBUF, **(headers or {})},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response


def evaluation(url: str, trace: str, *, revision: int = 1, wait: float = 120) -> dict[str, object]:
    """The trace's online evaluation record, waiting (on the server's event) for ``revision``."""
    response = httpx.get(
        f"{url}/v1/traces/{trace}/evaluation", params={"wait": wait, "revision": revision}, timeout=wait + 30
    )
    assert response.status_code == 200, response.text
    return response.json()


def stats(url: str) -> dict[str, object]:
    """The evaluator's counters (``GET /v1/stats``'s ``evaluations``)."""
    document = httpx.get(f"{url}/v1/stats", timeout=30).json()
    return document["evaluations"]


def by_id(spans: Sequence[SpanData]) -> dict[str, SpanData]:
    """The spans by span id."""
    return {s.span_id: s for s in spans}
