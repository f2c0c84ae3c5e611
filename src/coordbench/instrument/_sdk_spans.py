"""Suppressing a2a-sdk's own spans while coordbench instruments the SDK.

a2a-sdk decorates its transports, dispatchers, request handlers and event queues with
``a2a.utils.telemetry.trace_class``: about 55 SERVER spans per request, without attributes
and without trace context propagation (see ``shared/notes/a2a-sdk.md`` §4). Its wrappers
look up ``a2a.utils.telemetry.trace.get_tracer`` on every call, so replacing that module
attribute turns them into pass-throughs: they neither record spans nor change the current
span, and our spans stay the parents of whatever the agent does inside.
"""

from __future__ import annotations

import importlib
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span

__all__ = ["restore_sdk_spans", "suppress_sdk_spans"]

_saved: list[Any] = []


class _NoSpan:
    """A context manager yielding the invalid span; entering it changes nothing."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


class _PassThroughTracer:
    """A tracer whose spans record nothing and never become current (so ours stay the parents)."""

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> _NoSpan:
        return _NO_SPAN

    def start_span(self, *args: Any, **kwargs: Any) -> Span:
        return INVALID_SPAN


class _SuppressedTrace:
    """Stands in for the ``opentelemetry.trace`` module inside ``a2a.utils.telemetry``."""

    _tracer = _PassThroughTracer()

    def get_tracer(self, *args: Any, **kwargs: Any) -> _PassThroughTracer:
        return self._tracer

    def __getattr__(self, name: str) -> Any:
        return getattr(trace, name)


def suppress_sdk_spans() -> None:
    """Silence a2a-sdk's built-in spans (idempotent)."""
    telemetry = importlib.import_module("a2a.utils.telemetry")
    if _saved or not getattr(telemetry, "otel_enabled", False):
        return
    _saved.append(telemetry.trace)
    setattr(telemetry, "trace", _SuppressedTrace())  # noqa: B010 - the module is not typed


def restore_sdk_spans() -> None:
    """Undo :func:`suppress_sdk_spans`."""
    if _saved:
        setattr(importlib.import_module("a2a.utils.telemetry"), "trace", _saved.pop())  # noqa: B010
