"""Guarding the agent against our own bugs: log and continue, re-raise under pytest."""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("coordbench.instrument")

__all__ = ["internal_error"]


def _under_pytest() -> bool:
    return "PYTEST_CURRENT_TEST" in os.environ


def internal_error(what: str, exc: Exception) -> None:
    """Handle a failure of our bookkeeping, from the ``except Exception`` block that caught it.

    Instrumentation problems never break the instrumented agent: ``exc`` is logged with its
    traceback and the call goes on, except while a pytest test runs (``PYTEST_CURRENT_TEST``
    is set), where it is re-raised so our own tests see it (the same policy as logfire's
    ``handle_internal_errors``). A ``try``/``except`` around the bookkeeping costs nothing
    until something fails, which matters on the path of every A2A call.

    Args:
        what: What the failed code was doing, for the log message.
        exc: The exception caught.

    Raises:
        Exception: ``exc`` itself, under pytest.
    """
    if _under_pytest():
        raise exc
    logger.error("coordbench instrumentation failed while %s; the call continues", what, exc_info=exc)
