"""Guarding the agent against our own bugs: log and continue, re-raise under pytest."""

from __future__ import annotations

import logging
import os
from types import TracebackType

logger = logging.getLogger("coordbench.instrument")

__all__ = ["internal_error", "internal_errors"]


def _under_pytest() -> bool:
    return "PYTEST_CURRENT_TEST" in os.environ


def internal_error(what: str, exc: Exception) -> None:
    """Handle a failure of our bookkeeping, from the ``except Exception`` block that caught it.

    The same policy as :class:`internal_errors`, for the hot paths of every A2A call, where a
    ``try``/``except`` costs nothing until something fails and a context manager costs three
    Python calls each time: log ``exc`` with its traceback and continue, or re-raise it while
    a pytest test runs.

    Args:
        what: What the failed code was doing, for the log message.
        exc: The exception caught.

    Raises:
        Exception: ``exc`` itself, under pytest.
    """
    if _under_pytest():
        raise exc
    logger.error("coordbench instrumentation failed while %s; the call continues", what, exc_info=exc)


class internal_errors:  # used like a function: ``with internal_errors("..."):``
    """Run instrumentation bookkeeping so that its failure never breaks the instrumented agent.

    An exception inside the block is logged with its traceback and swallowed, except while a
    pytest test runs (``PYTEST_CURRENT_TEST`` is set), where it propagates so our own tests
    see it (the same policy as logfire's ``handle_internal_errors``).

    Args:
        what: What the block does, for the log message.
    """

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if exc is None or not isinstance(exc, Exception) or _under_pytest():
            return False
        logger.error("coordbench instrumentation failed while %s; the call continues", self.what, exc_info=exc)
        return True
