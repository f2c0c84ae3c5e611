"""The tau2 evaluation service as an ADK agents folder: ``adk api_server --a2a .../adk_agents``."""

from coordbench.tau2.adk_agents.tau2_evaluator import agent

__all__ = ["agent"]
