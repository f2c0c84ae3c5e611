"""Serving one purple agent: its card, its A2A app, its tracing and its registration.

The app is built with :func:`coordbench.a2a.create_a2a_app` (A2A 1.0 and the 0.3 wire format,
card at ``/.well-known/agent-card.json``, JSON-RPC ``message/send`` and ``SendMessage``,
streaming, REST), instrumented with :class:`~coordbench.instrument.A2AInstrumentor` and
exporting OTLP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (unless the member is one that exports nothing).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
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

__all__ = ["PurpleSettings", "create_purple_app", "register"]

logger = logging.getLogger(__name__)


class PurpleSettings(BaseSettings):
    """A purple agent's settings (``PURPLE_*`` variables; the command line wins)."""

    model_config = SettingsConfigDict(env_prefix="PURPLE_", extra="ignore", frozen=True)

    host: str = Field("127.0.0.1", description="Interface to bind.")
    port: int = Field(9009, ge=0, le=65535, description="Port (0: any free port).")
    card_url: str | None = Field(None, description="URL the card advertises (default http://host:port/).")
    pace: float = Field(0.05, ge=0, le=10, description="Seconds per unit of simulated work.")
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
    agent = PurpleAgent(team, name, peers=peers, peers_file=peers_file, registry=registry, pace=pace, llm=llm)
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
