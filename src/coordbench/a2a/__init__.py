"""Shared A2A helpers: agent cards and apps that 1.0 and 0.3 clients can both use."""

from coordbench.a2a.app import REST_PREFIX, build_agent_card, create_a2a_app

__all__ = ["REST_PREFIX", "build_agent_card", "create_a2a_app"]
