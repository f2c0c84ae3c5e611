"""``A2AInstrumentor``: drop-in OpenTelemetry tracing for a2a-sdk agents and clients."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection
from typing import Any

from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # pyright: ignore[reportMissingTypeStubs]
from opentelemetry.instrumentation.utils import unwrap
from wrapt import wrap_function_wrapper

from coordbench import __version__, semconv
from coordbench.envflags import content_capture, env_flag
from coordbench.instrument import _client, _sdk, _server
from coordbench.instrument._sdk_spans import restore_sdk_spans, suppress_sdk_spans
from coordbench.instrument._state import STATE

__all__ = ["A2AInstrumentor"]

_CLIENT_MODULE = "a2a.client.base_client"
_HANDLER_CLASSES = (
    ("a2a.server.request_handlers.default_request_handler_v2", "DefaultRequestHandlerV2"),
    ("a2a.server.request_handlers.default_request_handler", "LegacyRequestHandler"),
)
_ACTIVE_TASK = ("a2a.server.agent_execution.active_task", "ActiveTask", "__init__")
_LEGACY_RUN = ("a2a.server.request_handlers.default_request_handler", "LegacyRequestHandler", "_run_event_stream")


class A2AInstrumentor(BaseInstrumentor):
    """Traces every A2A call an a2a-sdk client makes and every A2A request an a2a-sdk server handles.

    Client side, each call through an a2a-sdk ``Client`` becomes a CLIENT span
    (``invoke_agent {callee}`` for messages) that lasts until the last streamed event, and
    carries the W3C trace context to the callee in the HTTP headers and in the message
    metadata, and asks for the traceability and timestamp extensions. Server side, each
    request a ``DefaultRequestHandler`` (or ``LegacyRequestHandler``) serves becomes a SERVER
    span, child of the caller's span, open until the agent's executor has finished.
    a2a-sdk's own spans are suppressed (they are unlinked and about 55 per request).

    Use ``A2AInstrumentor().instrument(tracer_provider=provider)``, or run the agent under
    ``opentelemetry-instrument``, which finds this class through the
    ``opentelemetry_instrumentor`` entry point. ``uninstrument()`` restores the SDK.

    Keyword arguments of ``instrument()``:
        tracer_provider: The provider to create spans with (default: the global one).
        suppress_sdk_spans: Silence a2a-sdk's built-in spans (default ``True``).
        request_extensions: Ask callees for the traceability and timestamp extensions
            through the ``A2A-Extensions`` header (default ``True``); ``False`` asks for
            neither, a collection of their URIs for those only
            (``[semconv.TRACEABILITY_EXTENSION_URI]``: steps without timestamps).
        propagate_in_metadata: Also put the trace context in the outgoing message metadata,
            for transports that drop headers (default ``True``).
        capture_content: Record the text of sent and received messages on client spans
            (``gen_ai.input.messages``, ``gen_ai.output.messages``, at most 4 KiB each); the
            LLM judge and text evaluator read it. Default: the
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` variable (a boolean word, or
            the GenAI instrumentations' ``SPAN_ONLY`` / ``SPAN_AND_EVENT``), else off, since
            messages may hold personal data.
        fingerprints: Record a fingerprint of each sent and received message's text on client
            spans (``a2a.request.fingerprint``, ``a2a.response.fingerprint``: 48 integers each,
            hashes of word trigrams, never the text; :mod:`coordbench.sketch`) and its size in
            characters, from which the evaluators tell whether a message carries an earlier
            answer. Default: on, unless ``COORDBENCH_FINGERPRINTS=false``.
    """

    _wrapped: list[tuple[Any, str]]

    def instrumentation_dependencies(self) -> Collection[str]:
        """The a2a-sdk versions this instrumentation knows."""
        return ("a2a-sdk >= 1.3, < 2",)

    def _wrap(self, module: str, cls_name: str, attr: str, wrapper: Callable[..., Any]) -> None:
        cls = getattr(importlib.import_module(module), cls_name)
        wrap_function_wrapper(cls, attr, wrapper)
        self._wrapped.append((cls, attr))

    def _instrument(self, **kwargs: Any) -> None:
        requested = _client.extensions_to_request(kwargs.get("request_extensions", True))  # raises before any change
        STATE.tracer = trace.get_tracer(
            semconv.INSTRUMENTATION_NAME, __version__, tracer_provider=kwargs.get("tracer_provider")
        )
        STATE.request_extensions = requested
        STATE.propagate_in_metadata = bool(kwargs.get("propagate_in_metadata", True))
        capture = kwargs.get("capture_content")
        if capture is None:
            capture = content_capture(semconv.CAPTURE_CONTENT_ENV)
        STATE.capture_content = bool(capture)
        fingerprints = kwargs.get("fingerprints")
        if fingerprints is None:
            fingerprints = env_flag(semconv.FINGERPRINTS_ENV, True)
        STATE.fingerprints = bool(fingerprints)
        if kwargs.get("suppress_sdk_spans", True):
            suppress_sdk_spans()
        self._wrapped = []
        for method in _client.CLIENT_METHODS:
            wrapper = _client.wrap_stream(method) if method.stream else _client.wrap_unary(method)
            self._wrap(_CLIENT_MODULE, "BaseClient", method.attr, wrapper)
        for module, cls_name in _HANDLER_CLASSES:
            for server_method in _server.SERVER_METHODS:
                server_wrapper = (
                    _server.wrap_stream(server_method) if server_method.stream else _server.wrap_unary(server_method)
                )
                self._wrap(module, cls_name, server_method.attr, server_wrapper)
        _sdk.check()  # says once which a2a-sdk internals are gone; those parts are left out, never the agent
        if _sdk.available("task_executor"):
            self._wrap(*_ACTIVE_TASK, _server.wrap_active_task_init)
        if _sdk.available("legacy_run"):
            self._wrap(*_LEGACY_RUN, _server.wrap_executor_run)

    def _uninstrument(self, **kwargs: Any) -> None:
        for cls, attr in reversed(getattr(self, "_wrapped", [])):
            unwrap(cls, attr)
        self._wrapped = []
        restore_sdk_spans()
        STATE.tracer = None
        STATE.request_extensions = ()
        STATE.capture_content = False
        STATE.fingerprints = True
        STATE.propagate_in_metadata = True
