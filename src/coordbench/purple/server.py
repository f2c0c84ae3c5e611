"""Serving one purple agent: its card, its A2A app, its tracing and its registration.

The app is built with :func:`coordbench.a2a.create_a2a_app` (A2A 1.0 and the 0.3 wire format,
card at ``/.well-known/agent-card.json``, JSON-RPC ``message/send`` and ``SendMessage``,
streaming, REST), instrumented with :class:`~coordbench.instrument.A2AInstrumentor` and
exporting OTLP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (unless the member is one that exports nothing).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from a2a.types import AgentSkill
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from starlette.applications import Starlette

from coordbench import __version__
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.purple.agent import PurpleAgent
from coordbench.purple.llm import LLMBackend
from coordbench.purple.roles import ROLES
from coordbench.purple.team import Team
from coordbench.server.loopback import AnnouncingServer

__all__ = ["PurpleSettings", "create_purple_app", "register", "serve_member"]

logger = logging.getLogger(__name__)


class PurpleSettings(BaseSettings):
    """A purple agent's settings (``PURPLE_*`` variables; the command line wins).

    The one reader of ``PURPLE_*``: the command line passes only what was given on it.
    """

    model_config = SettingsConfigDict(env_prefix="PURPLE_", extra="ignore", frozen=True)

    role: str | None = Field(None, description="Which member of the team to serve (its name).")
    team: Path | None = Field(None, description="A team file (TOML).")
    shape: str | None = Field(None, description="Build the team of a shape (when no team file is given).")
    size: int = Field(3, ge=2, le=16, description="Workers in a shaped team.")

    host: str = Field("127.0.0.1", description="Interface to bind.")
    port: int = Field(9009, ge=0, le=65535, description="Port (0: any free port).")
    card_url: str | None = Field(None, description="URL the card advertises (default http://host:port/).")
    pace: float = Field(0.05, ge=0, le=10, description="Seconds per unit of simulated work.")
    call_timeout: float = Field(
        120.0, gt=0, le=86_400, description="Seconds a call to another member may take (a slow model needs more)."
    )
    registry: str | None = Field(None, description="An assessor to register with (POST /register) and ask for peers.")


def create_purple_app(
    team: Team,
    name: str,
    url: str,
    *,
    peers: dict[str, str] | None = None,
    peers_file: Path | None = None,
    registry: str | None = None,
    pace: float = 0.05,
    llm: LLMBackend | None = None,
    call_timeout: float = 120.0,
) -> Starlette:
    """The A2A app of member ``name`` of ``team``, advertising ``url``.

    Raises:
        KeyError: If ``name`` is not a member.
    """
    member = team.member(name)
    description = (
        f"coordbench purple agent '{name}' of team '{team.name}': the {member.role}, who {ROLES[member.role]}."
    )
    skill = AgentSkill(
        id=member.role,
        name=member.role,
        description=ROLES[member.role],
        tags=["coordbench", "purple", member.role],
        examples=["Plan the launch of a note-taking app: owners, timeline, risks."],
    )
    card = build_agent_card(name, url, description=description, skills=[skill], version=__version__)
    agent = PurpleAgent(
        team, name, peers=peers, peers_file=peers_file, registry=registry, pace=pace, llm=llm, timeout=call_timeout
    )
    app = create_a2a_app(card, agent)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Starlette) -> AsyncGenerator[None]:
        async with inner(application):
            try:
                yield
            finally:
                await agent.close()

    app.router.lifespan_context = lifespan
    app.state.agent = agent
    return app


def register(registry: str, name: str, url: str, role: str) -> bool:
    """Register with an assessor's registry (``POST /register``); ``False`` (logged) if it did not take it."""
    body: dict[str, Any] = {"name": name, "url": url, "role": role, "description": ROLES.get(role, "")}
    try:
        response = httpx.post(registry.rstrip("/") + "/register", json=body, timeout=10)
    except httpx.HTTPError as exc:
        logger.warning("cannot register with %s: %s", registry, exc)
        return False
    if response.status_code not in (200, 201):
        logger.warning("the registry at %s answered %s: %s", registry, response.status_code, response.text[:200])
        return False
    return True


def serve_member(
    team: Team,
    name: str,
    sock: socket.socket,
    *,
    settings: PurpleSettings,
    peers_file: Path | None = None,
    announce: Callable[[str], None],
) -> None:
    """Serve member ``name`` of ``team`` on the bound ``sock`` until stopped (SIGTERM, Ctrl-C).

    Traced as its own service (its name), exporting where ``OTEL_*`` says (nowhere for a member
    that exports no spans); registers with ``settings.registry`` if set; calls
    ``announce(url)`` once it serves.

    Raises:
        KeyError: If ``name`` is not a member.
    """
    from coordbench.instrument import A2AInstrumentor
    from coordbench.telemetry import configure_tracing

    member = team.member(name)
    url = settings.card_url or f"http://{settings.host}:{sock.getsockname()[1]}/"
    # a member that "exports no spans" still traces (its calls carry the context on), exporting nowhere
    provider = configure_tracing(member.name, exporters=None if member.export else [])
    A2AInstrumentor().instrument(tracer_provider=provider, capture_content=True)
    app = create_purple_app(
        team, member.name, url, peers_file=peers_file, registry=settings.registry, pace=settings.pace,
        llm=LLMBackend.from_env(), call_timeout=settings.call_timeout,
    )  # fmt: skip
    if settings.registry:
        register(settings.registry, member.name, url, member.role)
    server = AnnouncingServer(
        uvicorn.Config(app, log_level="warning", timeout_keep_alive=30, timeout_graceful_shutdown=5),
        announce=lambda: announce(url),
    )
    try:
        server.run(sockets=[sock])
    finally:
        provider.shutdown()
