"""The assessor's server: one app on one port for A2A, the OTLP receiver, Step reports and peers.

Routes:

- A2A: the agent card (``/.well-known/agent-card.json``), JSON-RPC 1.0 and 0.3 at ``/``,
  REST under ``/rest``;
- the trace backend (:func:`coordbench.server.app.mount_backend`): ``POST /v1/traces`` (OTLP/HTTP),
  ``POST /traces`` (traceability Steps as JSON, for agents that report Steps instead of spans),
  ``GET /v1/traces[/{id}]``, ``GET /v1/stats``;
- ``POST /register`` and ``GET /peers``: the agent registry for peer discovery;
- ``GET /healthz``.

With a token configured, every route needs ``Authorization: Bearer`` but the A2A routes (the
AgentBeats client sends no token) and ``/healthz``: the trace backend, Step reports, the
registry, the reports, ``/metrics`` and the API documentation.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from a2a.types import AgentSkill
from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import HTMLResponse
from opentelemetry.sdk.trace.export import SpanExporter

from coordbench import __version__
from coordbench.a2a import a2a_routes, build_agent_card
from coordbench.a2a.app import is_rest_path
from coordbench.green.executor import GreenExecutor
from coordbench.green.registry import PeerRegistry, Registration
from coordbench.green.reports import ReportShelf
from coordbench.green.request import SAMPLE_REQUEST
from coordbench.green.settings import DEFAULT_NAME, GreenSettings, load_green_settings
from coordbench.green.tracing import AssessorTracing
from coordbench.server.app import backend_app, build_store, serve_store
from coordbench.store import SpanStore
from coordbench.telemetry import otlp_endpoint, requested_exporters

__all__ = ["DEFAULT_NAME", "GreenSettings", "create_green_app", "load_green_settings"]

logger = logging.getLogger(__name__)

_OPEN_PATHS = frozenset({"/healthz", "/.well-known/agent-card.json"})
"""What a token does not guard besides the A2A messages: the agent card (the AgentBeats client sends no token)
and the health check."""


def _skill() -> AgentSkill:
    return AgentSkill(
        id="coordination-assessment",
        name="Multi-agent coordination assessment",
        description=(
            "Sends each scenario's task to the participants over A2A, collects the team's OpenTelemetry "
            "traces, and scores how the agents coordinated: agent-graph metrics, protocol and latency "
            "figures, an LLM judge (rule-based fallback) and text similarity. Send "
            '{"participants": {role: url}, "config": {...}} as the message text or as a data part.'
        ),
        tags=["assessment", "coordination", "multi-agent", "opentelemetry", "a2a", "agentbeats"],
        examples=[json.dumps(SAMPLE_REQUEST, sort_keys=True)],
        input_modes=["text/plain", "application/json"],
        output_modes=["text/plain", "application/json"],
    )


def _self_exporters(settings: GreenSettings, url: str) -> list[SpanExporter]:
    """The exporters ``OTEL_*`` asks for, unless ``export_self`` is off or they point at this assessor.

    An agent author's shell often has ``OTEL_EXPORTER_OTLP_ENDPOINT`` set to the assessor: the
    assessor's own spans are in its store already, and exporting them to itself would only
    wait, at shutdown, on a server that is gone.
    """
    if not settings.export_self:
        return []
    endpoint = otlp_endpoint("traces") or ""
    own = {f"{settings.host}:{settings.port}", urlsplit(url).netloc}
    if settings.host in ("0.0.0.0", "127.0.0.1", "localhost", "::"):  # noqa: S104 - comparing, not binding
        own |= {f"127.0.0.1:{settings.port}", f"localhost:{settings.port}"}
    if endpoint and urlsplit(endpoint.strip()).netloc in own:
        logger.info("OTEL_EXPORTER_OTLP_ENDPOINT is this assessor (%s): its own spans stay in its store only", endpoint)
        return []
    return requested_exporters()


def _protected(method: str, path: str) -> bool:
    """Everything but the A2A routes and ``/healthz`` needs the token: a route added later is guarded by default.

    The A2A routes are the card, JSON-RPC messages (``POST /``) and the REST binding; ``GET /`` (the
    endpoint list and version) is guarded like every other route.
    """
    return not (path in _OPEN_PATHS or (path == "/" and method == "POST") or is_rest_path(path))


def create_green_app(settings: GreenSettings | None = None, *, store: SpanStore | None = None) -> FastAPI:
    """The assessor: A2A agent, trace backend, Step reports and peer registry in one app.

    Args:
        settings: Settings (default: from the environment).
        store: A store to use instead of building one from the settings.
    """
    settings = settings or load_green_settings()
    store = store or build_store(settings)
    url = settings.card_url or f"http://{settings.host}:{settings.port}/"
    card = build_agent_card(
        settings.name,
        url,
        description="coordbench assessor: measures how well an A2A multi-agent team coordinates, from its traces.",
        skills=[_skill()],
        version=__version__,
    )
    reports = ReportShelf(settings.output_dir)
    executor = GreenExecutor(
        store=store,
        assessor=settings.name,
        output_dir=settings.output_dir,
        heartbeat=settings.heartbeat,
        reports=reports,
    )
    routes, handler = a2a_routes(card, executor)
    registry = PeerRegistry()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        async with serve_store(app, settings, store):
            tracing = (
                AssessorTracing(
                    settings.name,
                    store,
                    asyncio.get_running_loop(),
                    capture_content=settings.capture_content,
                    exporters=_self_exporters(settings, url),
                )
                if settings.trace_self
                else None
            )
            try:
                yield
            finally:
                await handler.aclose()
                if tracing is not None:
                    await tracing.close()

    app = backend_app(
        settings,
        store,
        title="coordbench green assessor",
        description=(
            "An A2A agent (card at /.well-known/agent-card.json; JSON-RPC at /, REST under /rest) that "
            "assesses how a team of A2A agents coordinates, plus the trace backend its participants export "
            "to (POST /v1/traces) and the results it wrote (GET /v1/traces lists the scenario traces)."
        ),
        lifespan=lifespan,
        protects=_protected,
        a2a_jsonrpc=frozenset({"/"}),
        a2a_rest=is_rest_path,
    )
    app.state.executor = executor
    app.state.registry = registry
    app.state.card = card

    @app.post("/register", tags=["peers"], status_code=201, summary="Register an agent for peer discovery")
    async def register(registration: Registration, response: Response) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        try:
            peer, new = registry.register(registration)
        except OverflowError as exc:
            raise HTTPException(507, str(exc)) from exc
        response.status_code = 201 if new else 200
        return peer.model_dump(mode="json")

    @app.get("/reports", tags=["reports"], summary="The assessments' HTML reports, newest first")
    async def list_reports() -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        return {"reports": [{"assessment_id": i, "url": f"/reports/{i}"} for i in reports.ids()]}

    @app.get("/reports/{assessment_id}", tags=["reports"], summary="One assessment's HTML report")
    async def get_report(assessment_id: str) -> HTMLResponse:  # pyright: ignore[reportUnusedFunction]
        html = reports.get(assessment_id)
        if html is None:
            raise HTTPException(404, f"no report for assessment {assessment_id!r} (GET /reports lists them)")
        return HTMLResponse(html)

    @app.get("/peers", tags=["peers"], summary="Registered agents")
    async def peers(role: str | None = None) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        return {"peers": [p.model_dump(mode="json") for p in registry.peers(role)]}

    app.router.routes.extend(routes)
    return app
