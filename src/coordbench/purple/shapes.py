"""The names of the team shapes, apart from the team model: the command line lists them without importing it."""

from __future__ import annotations

__all__ = ["ALL_SHAPES", "FRAMEWORK_SHAPES", "SHAPES"]

SHAPES = ("star", "chain", "tree", "mesh", "bottleneck", "isolated")
"""The structural team shapes ``--shape`` builds (the live tests' set)."""
FRAMEWORK_SHAPES = ("react", "groupchat", "handoff")
"""The shapes agent frameworks produce, one call at a time, each decided on the last answer: a ReAct
orchestrator, a group chat with a manager, a handoff chain."""
ALL_SHAPES = SHAPES + FRAMEWORK_SHAPES
"""Every shape (the demo's default)."""
