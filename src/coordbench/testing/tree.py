"""The span tree a test asserts on: the domain's :class:`~coordbench.spantree.SpanTree` and :meth:`SpanTree.one`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coordbench import spantree
from coordbench.spans import SpanData

__all__ = ["SpanTree"]


class SpanTree(spantree.SpanTree):
    """A :class:`coordbench.spantree.SpanTree` with the assertion helper tests use.

    Args:
        spans: The spans; a span id seen twice is kept once (the first copy).
    """

    def one(self, predicate: Callable[[SpanData], bool] | None = None, **match: Any) -> SpanData:
        """The single span matching; see :meth:`find`.

        Raises:
            AssertionError: If no span or several spans match (the message shows the tree).
        """
        found = self.find(predicate, **match)
        if len(found) != 1:
            raise AssertionError(f"expected exactly one span matching {match}, found {len(found)}:\n{self.render()}")
        return found[0]
