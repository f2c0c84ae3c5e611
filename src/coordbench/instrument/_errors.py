"""Recording a failure on a span the way OpenTelemetry's conventions ask."""

from __future__ import annotations

import asyncio

from opentelemetry.trace import Span, Status, StatusCode

from coordbench import semconv

__all__ = ["error_type_of", "record_error"]


def error_type_of(exc: BaseException) -> str:
    """The ``error.type`` of an exception: its fully qualified class name (builtins unqualified)."""
    cls = type(exc)
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _jsonrpc_code(exc: BaseException) -> int | None:
    try:
        from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP
    except ImportError:  # pragma: no cover - a2a-sdk is a dependency
        return None
    for cls in type(exc).__mro__:
        code = JSON_RPC_ERROR_CODE_MAP.get(cls)  # pyright: ignore[reportArgumentType, reportCallIssue]
        if code is not None:
            return code
    return None


def record_error(span: Span, exc: BaseException) -> None:
    """Mark ``span`` as failed by ``exc``: exception event, ``error.type``, status ERROR.

    A2A errors also get ``rpc.response.status_code`` (their JSON-RPC error code).
    """
    if not span.is_recording():
        return
    span.record_exception(exc)
    span.set_attribute(semconv.ERROR_TYPE, error_type_of(exc))
    code = _jsonrpc_code(exc)
    if code is not None:
        span.set_attribute(semconv.RPC_RESPONSE_STATUS_CODE, str(code))
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"[:1024]))
