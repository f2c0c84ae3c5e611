"""Building A2A agent servers that 1.0 and 0.3 clients can both talk to.

a2a-sdk 1.3 speaks A2A 1.0; AgentBeats' client and templates are built on a2a-sdk 0.3. A
server serves both when its card lists a JSON-RPC interface with ``protocol_version="0.3"``
(so the card carries the legacy top-level ``url`` a 0.3 client requires) and its JSON-RPC
route has the 0.3 compatibility layer on (``message/send``, ``message/stream``...).
:func:`build_agent_card` and :func:`create_a2a_app` do both, and declare the traceability
and timestamp extensions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from coordbench.instrument.card import with_trace_extensions
from coordbench.server.bodylimit import BodyLimitMiddleware
from coordbench.server.jsonguard import JsonGuardMiddleware

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "REST_PREFIX",
    "a2a_routes",
    "build_agent_card",
    "create_a2a_app",
    "is_rest_path",
    "quiet_rejected_requests",
]

REST_PREFIX = "/rest"
"""Where the HTTP+JSON (REST) binding is mounted, below the agent's base URL."""


def is_rest_path(path: str) -> bool:
    """Whether ``path`` belongs to the REST (HTTP+JSON) binding, under :data:`REST_PREFIX`."""
    return path == REST_PREFIX or path.startswith(REST_PREFIX + "/")


_REJECTED_REQUEST_LOGS = frozenset({"Failed to validate base JSON-RPC request", "Failed to parse request params"})
"""What a2a-sdk's JSON-RPC route logs, with a whole traceback, for a request that is merely malformed."""


class _RejectedRequestFilter(logging.Filter):
    """One line, not a traceback, for each malformed A2A request a2a-sdk rejects.

    a2a-sdk logs every JSON-RPC request that fails validation with ``logger.exception``: a
    client sending bad requests filled the log with a traceback each (2.3 MB for ~8,000
    requests). The request's fault is not a bug of the server: the record keeps its level and
    says what was wrong in one line; tracebacks stay for the server's own errors.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.msg in _REJECTED_REQUEST_LOGS:
            exc = record.exc_info[1]
            record.msg = f"{record.msg}: {type(exc).__name__}: {str(exc)[:500]}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_rejected_requests() -> None:
    """Install the one-line logging of malformed A2A requests (idempotent)."""
    dispatcher = logging.getLogger("a2a.server.routes.jsonrpc_dispatcher")
    if not any(isinstance(f, _RejectedRequestFilter) for f in dispatcher.filters):
        dispatcher.addFilter(_RejectedRequestFilter())


def build_agent_card(
    name: str,
    url: str,
    *,
    description: str,
    skills: Sequence[AgentSkill] = (),
    version: str = "1.0.0",
    streaming: bool = True,
    trace_extensions: bool = True,
    input_modes: Sequence[str] = ("text/plain", "application/json"),
    output_modes: Sequence[str] = ("text/plain", "application/json"),
) -> AgentCard:
    """An agent card that 1.0 and 0.3 clients accept.

    Args:
        name: The agent's name (what traces and graphs call it).
        url: The agent's public base URL, e.g. ``http://127.0.0.1:9009/``.
        description: What the agent does.
        skills: The agent's skills; when none are given, one skill named after the agent,
            described by ``description``, so the card stays spec-compliant (A2A requires one).
        version: The agent's version.
        streaming: Whether the agent streams (SSE).
        trace_extensions: Declare the traceability and timestamp extensions.
        input_modes: Accepted input media types.
        output_modes: Produced output media types.

    Returns:
        The card: JSON-RPC 1.0 and 0.3 interfaces at ``url``, REST 1.0 at ``url`` + ``/rest``.
    """
    base = url if url.endswith("/") else url + "/"
    if not skills:
        skill_id = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent"
        skills = [AgentSkill(id=skill_id, name=name, description=description, tags=["a2a"])]
    card = AgentCard(
        name=name,
        description=description,
        version=version,
        provider=AgentProvider(organization="coordbench", url="https://github.com/coordbench/coordbench"),
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=base),
            AgentInterface(protocol_binding="HTTP+JSON", protocol_version="1.0", url=base.rstrip("/") + REST_PREFIX),
            AgentInterface(protocol_binding="JSONRPC", protocol_version="0.3", url=base),
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=list(input_modes),
        default_output_modes=list(output_modes),
        skills=list(skills),
    )
    return with_trace_extensions(card) if trace_extensions else card


DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest request body an agent app accepts by default (413 past it)."""


def create_a2a_app(
    card: AgentCard,
    executor: AgentExecutor,
    *,
    task_store: TaskStore | None = None,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> Starlette:
    """A Starlette app serving ``executor`` as an A2A agent: card, JSON-RPC (1.0 + 0.3) and REST.

    The request handler is closed when the app shuts down, so no agent task outlives the server.
    Every request body is bounded (:class:`~coordbench.server.bodylimit.BodyLimitMiddleware`): a
    larger one gets 413 as soon as its bytes pass the cap, before the handler buffers it.

    Args:
        card: The agent's card (see :func:`build_agent_card`).
        executor: The agent's logic.
        task_store: Where tasks are kept (default: in memory).
        max_request_bytes: The largest request body accepted.

    Returns:
        The ASGI app; serve it with uvicorn.
    """
    routes, handler = a2a_routes(card, executor, task_store=task_store)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            await handler.aclose()

    middleware = [
        Middleware(BodyLimitMiddleware, limit=max_request_bytes),
        Middleware(JsonGuardMiddleware, rest=is_rest_path),
    ]
    return Starlette(routes=routes, lifespan=lifespan, middleware=middleware)


def a2a_routes(
    card: AgentCard, executor: AgentExecutor, *, task_store: TaskStore | None = None
) -> tuple[list[BaseRoute], DefaultRequestHandler]:
    """The routes of an A2A agent (card, JSON-RPC 1.0 + 0.3 at ``/``, REST under ``/rest``), to add to an app.

    Returns:
        The routes, and the request handler; close it (``await handler.aclose()``) when the
        app shuts down.
    """
    quiet_rejected_requests()
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=task_store or InMemoryTaskStore(), agent_card=card
    )
    routes: list[BaseRoute] = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix=REST_PREFIX),
    ]
    return routes, handler
