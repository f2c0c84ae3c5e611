"""Span trees → StepTree → AgentGraph, and the graph metrics computed on them."""

from coordbench.graph.agentgraph import (
    AGENT,
    HOST,
    add_declared_agents,
    agent_view,
    build_agent_graph,
    flow_view,
    with_tools,
)
from coordbench.graph.evaluate import evaluate_graph
from coordbench.graph.steptree import VIRTUAL_ROOT, CriticalPath, StepTree

__all__ = [
    "AGENT",
    "HOST",
    "VIRTUAL_ROOT",
    "CriticalPath",
    "StepTree",
    "add_declared_agents",
    "agent_view",
    "build_agent_graph",
    "evaluate_graph",
    "flow_view",
    "with_tools",
]
