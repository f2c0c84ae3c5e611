"""The names of the team shapes, apart from the team model: the command line lists them without importing it."""

from __future__ import annotations

__all__ = ["SHAPES"]

SHAPES = ("star", "chain", "tree", "mesh", "bottleneck", "isolated")
"""The team shapes ``--shape`` builds."""
