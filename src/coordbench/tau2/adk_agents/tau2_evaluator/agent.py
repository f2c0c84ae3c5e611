"""``root_agent`` for ADK's command line (``adk web --a2a`` / ``adk api_server --a2a``)."""

from coordbench.tau2.service import build_agent, quiet_experimental_warnings

__all__ = ["root_agent"]

quiet_experimental_warnings()
root_agent = build_agent()
