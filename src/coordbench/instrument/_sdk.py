"""Every a2a-sdk internal the instrumentation relies on, in one place, checked before it is used.

a2a-sdk's public surface (clients' and request handlers' methods) gives the spans; a few
private internals give what the public surface cannot: the SERVER span held open until the
agent's executor finishes (``ActiveTask``'s executor, ``LegacyRequestHandler._run_event_stream``),
the serving agent's name (a handler's card), and the callee's card, transport and streaming
setting (a client's). :func:`missing` checks each is still there in the installed a2a-sdk;
:func:`check` logs, once, which are gone and what is lost, and the instrumentation then leaves
that part out (fewer attributes, or a SERVER span that ends when the handler returns) rather than
break the user's agent. Every read of a private attribute goes through the accessors below.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INTERNALS",
    "Internal",
    "available",
    "check",
    "client_card",
    "client_config",
    "client_transport",
    "handler_card",
    "missing",
    "set_task_executor",
    "task_executor",
    "unwrap_transport",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Internal:
    """A private a2a-sdk name coordbench uses.

    Attributes:
        key: How coordbench refers to it.
        module: The module that defines the class.
        cls: The class.
        attr: The attribute: a method, or an instance attribute its ``__init__`` sets.
        method: ``attr`` is a method (else an attribute ``__init__`` assigns).
        lost: What the spans lose without it.
    """

    key: str
    module: str
    cls: str
    attr: str
    method: bool
    lost: str

    def present(self) -> bool:
        """Whether the installed a2a-sdk still has it."""
        try:
            owner = getattr(importlib.import_module(self.module), self.cls)
        except (ImportError, AttributeError):
            return False
        if self.method:
            return callable(getattr(owner, self.attr, None))
        init = getattr(owner, "__init__", None)
        code = getattr(init, "__code__", None)
        return code is not None and self.attr in code.co_names


_SERVER = "a2a.server.request_handlers"
INTERNALS: tuple[Internal, ...] = (
    Internal("task_executor", "a2a.server.agent_execution.active_task", "ActiveTask", "_agent_executor", False,
             "SERVER spans end when the request handler returns, not when the agent's executor has finished"),
    Internal("legacy_run", f"{_SERVER}.default_request_handler", "LegacyRequestHandler", "_run_event_stream", True,
             "LegacyRequestHandler's SERVER spans end before the agent's executor has finished"),
    Internal("handler_card", f"{_SERVER}.default_request_handler_v2", "DefaultRequestHandlerV2", "_agent_card", False,
             "SERVER spans name the agent 'unknown-agent'"),
    Internal("legacy_handler_card", f"{_SERVER}.default_request_handler", "LegacyRequestHandler", "_agent_card", False,
             "LegacyRequestHandler's SERVER spans name the agent 'unknown-agent'"),
    Internal("client_card", "a2a.client.base_client", "BaseClient", "_card", False,
             "CLIENT spans lose the callee's name and streaming is assumed off"),
    Internal("client_transport", "a2a.client.base_client", "BaseClient", "_transport", False,
             "CLIENT spans lose the callee's address, port and transport"),
    Internal("client_config", "a2a.client.base_client", "BaseClient", "_config", False,
             "CLIENT spans assume the call is not streamed"),
)  # fmt: skip
"""Every private name used, with what is lost without it."""

_BY_KEY = {internal.key: internal for internal in INTERNALS}
_present: dict[str, bool] = {}
_reported = False


def available(key: str) -> bool:
    """Whether the internal called ``key`` is there (looked up once).

    Raises:
        KeyError: For a key that is not in :data:`INTERNALS`.
    """
    found = _present.get(key)
    if found is None:
        found = _present[key] = _BY_KEY[key].present()
    return found


def missing() -> list[Internal]:
    """The internals the installed a2a-sdk no longer has."""
    return [internal for internal in INTERNALS if not available(internal.key)]


def check() -> list[Internal]:
    """:func:`missing`, logging once (a warning) which are gone and what the spans lose."""
    global _reported
    gone = missing()
    if gone and not _reported:
        _reported = True
        for internal in gone:
            logger.warning(
                "coordbench: a2a-sdk no longer has %s.%s (%s): %s; upgrade coordbench for full spans",
                internal.cls,
                internal.attr,
                internal.module,
                internal.lost,
            )
    return gone


def _read(key: str, owner: object, attr: str) -> Any:
    return getattr(owner, attr, None) if available(key) else None


def client_card(client: object) -> Any:
    """The agent card a client holds (``None`` if unknown)."""
    return _read("client_card", client, "_card")


def client_transport(client: object) -> Any:
    """The transport a client calls through (``None`` if unknown)."""
    return _read("client_transport", client, "_transport")


def client_config(client: object) -> Any:
    """The client's configuration (``None`` if unknown)."""
    return _read("client_config", client, "_config")


def handler_card(handler: object) -> Any:
    """The card of the agent a request handler serves (``None`` if unknown)."""
    key = "legacy_handler_card" if type(handler).__name__ == "LegacyRequestHandler" else "handler_card"
    return _read(key, handler, "_agent_card")


def task_executor(task: object) -> Any:
    """The executor an ``ActiveTask`` runs (``None`` if unknown)."""
    return _read("task_executor", task, "_agent_executor")


def set_task_executor(task: object, executor: object) -> None:
    """Make an ``ActiveTask`` run ``executor`` (nothing when the internal is gone)."""
    if available("task_executor"):
        task._agent_executor = executor  # type: ignore[attr-defined]


def unwrap_transport(transport: Any) -> Any:
    """The transport under a2a-sdk's decorators (tenant, interceptors...), read through their ``_base``."""
    seen = 0
    while transport is not None and type(transport).__name__.endswith("Decorator") and seen < 16:
        inner = getattr(transport, "_base", None)
        if inner is None:
            break
        transport, seen = inner, seen + 1
    return transport
