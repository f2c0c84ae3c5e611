"""Shared A2A helpers: agent cards and apps that 1.0 and 0.3 clients can both use, and the messenger."""

from coordbench.a2a.app import REST_PREFIX, a2a_routes, build_agent_card, create_a2a_app
from coordbench.a2a.messenger import DEFAULT_TIMEOUT, ERROR_KINDS, AgentCallError, Messenger, Reply, error_kind

__all__ = [
    "DEFAULT_TIMEOUT",
    "ERROR_KINDS",
    "REST_PREFIX",
    "AgentCallError",
    "Messenger",
    "Reply",
    "a2a_routes",
    "build_agent_card",
    "create_a2a_app",
    "error_kind",
]
