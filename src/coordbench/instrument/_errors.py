"""Recording a failure on a span the way OpenTelemetry's conventions ask."""

from __future__ import annotations

import asyncio
import traceback

from opentelemetry.trace import Span, Status, StatusCode

from coordbench import semconv
from coordbench.redaction import redact

__all__ = ["MESSAGE_LIMIT", "STACKTRACE_LIMIT", "error_type_of", "record_error"]

MESSAGE_LIMIT = 4096
"""Most characters of an exception's message recorded on a span (an error may quote a whole reply)."""
STACKTRACE_LIMIT = 16_384
"""Most characters of an exception's stack trace recorded on a span."""


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

    A2A errors also get ``rpc.response.status_code`` (their JSON-RPC error code). The message
    and stack trace are cut (:data:`MESSAGE_LIMIT`, :data:`STACKTRACE_LIMIT`) and redacted
    (:func:`coordbench.redaction.redact`): an HTTP client's error names the URL it called, and
    a model provider's may echo the key it was sent.
    """
    if not span.is_recording():
        return
    message = redact(str(exc), limit=MESSAGE_LIMIT)
    stacktrace = redact("".join(traceback.format_exception(exc)), limit=STACKTRACE_LIMIT)
    span.record_exception(
        exc, attributes={semconv.EXCEPTION_MESSAGE: message, semconv.EXCEPTION_STACKTRACE: stacktrace}
    )
    span.set_attribute(semconv.ERROR_TYPE, error_type_of(exc))
    code = _jsonrpc_code(exc)
    if code is not None:
        span.set_attribute(semconv.RPC_RESPONSE_STATUS_CODE, str(code))
    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {message}"[:1024]))
