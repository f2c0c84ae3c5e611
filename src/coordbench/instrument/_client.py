"""Client side: one CLIENT span per A2A call made through an a2a-sdk ``Client``.

``BaseClient`` is the transport-independent client every ``ClientFactory`` builds, so its
methods are the one place that sees every call, streaming or not, over JSON-RPC, REST or
gRPC, against 1.0 and 0.3 agents. The span covers a streamed response until its last event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from a2a.client import ClientCallContext
from a2a.types import SendMessageRequest, StreamResponse
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Span, SpanKind

from coordbench import semconv
from coordbench.instrument import _sdk
from coordbench.instrument._extensions import read_response_trace, record_step, response_trace_json, total_cost
from coordbench.instrument._internal import internal_error
from coordbench.instrument._peer import Peer, peer_of
from coordbench.instrument._record import CallRecord, await_through, stream_through
from coordbench.instrument._state import CURRENT_SERVER_CALL, STATE

__all__ = ["CLIENT_METHODS", "ClientMethod", "extensions_to_request", "wrap_stream", "wrap_unary"]

_TRACE_EXTENSIONS = (semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI)


@dataclass(frozen=True, slots=True)
class ClientMethod:
    """One ``BaseClient`` method we trace, with its A2A method names."""

    attr: str
    wire: str
    wire_v03: str
    stream: bool = False


SEND_MESSAGE = ClientMethod("send_message", "SendMessage", "message/send", stream=True)
CLIENT_METHODS = (
    SEND_MESSAGE,
    ClientMethod("get_task", "GetTask", "tasks/get"),
    ClientMethod("cancel_task", "CancelTask", "tasks/cancel"),
    ClientMethod("list_tasks", "ListTasks", "ListTasks"),
    ClientMethod("subscribe", "SubscribeToTask", "tasks/resubscribe", stream=True),
    ClientMethod("get_extended_agent_card", "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"),
    ClientMethod(
        "create_task_push_notification_config", "CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set"
    ),
    ClientMethod(
        "get_task_push_notification_config", "GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get"
    ),
    ClientMethod(
        "list_task_push_notification_configs", "ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list"
    ),
    ClientMethod(
        "delete_task_push_notification_config",
        "DeleteTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/delete",
    ),
)


def _is_streaming(client: Any) -> bool:
    config = _sdk.client_config(client)
    card = _sdk.client_card(client)
    return bool(getattr(config, "streaming", False)) and bool(card is not None and card.capabilities.streaming)


_REQUESTABLE = frozenset({semconv.TRACEABILITY_EXTENSION_URI, *semconv.TIMESTAMP_EXTENSION_URIS})


def extensions_to_request(value: object) -> tuple[str, ...]:
    """The extension URIs a client asks callees for, from ``instrument(request_extensions=...)``.

    Args:
        value: ``True`` (or ``None``, not given): the traceability and timestamp extensions;
            ``False``: none; or a collection of those URIs (either spelling of the timestamp
            URI), to ask for some only (the timestamps cost a callee a metadata entry per
            message and artifact, converted to and from JSON).

    Returns:
        The URIs, sorted and without repeats.

    Raises:
        TypeError: If ``value`` is a string or not a collection of strings.
        ValueError: If a URI is not one of the two extensions.

    Example:
        >>> extensions_to_request([semconv.TRACEABILITY_EXTENSION_URI])
        ('https://github.com/a2aproject/a2a-samples/extensions/traceability/v1',)
    """
    if value is None or value is True:
        return tuple(sorted(_TRACE_EXTENSIONS))
    if value is False:
        return ()
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            "request_extensions takes True, False or a collection of extension URIs, "
            f"not {type(value).__name__} {value!r}"
        )
    uris: set[str] = set()
    for uri in cast("Iterable[object]", value):
        if not isinstance(uri, str):
            raise TypeError(f"request_extensions: an extension URI is a string, not {type(uri).__name__} {uri!r}")
        if uri not in _REQUESTABLE:
            raise ValueError(f"request_extensions: {uri!r} is not one of {', '.join(sorted(_REQUESTABLE))}")
        uris.add(uri)
    return tuple(sorted(uris))


def _merge_extensions(existing: str | None, requested: tuple[str, ...]) -> str:
    if not existing:
        return ",".join(requested)
    uris = {u.strip() for u in existing.split(",") if u.strip()}
    uris.update(requested)
    return ",".join(sorted(uris))


class _ClientCall(CallRecord):
    """The CLIENT span of one call and what it learns from the response."""

    __slots__ = ("ctx", "span")
    captures_content = True
    ends_after_final_event = False

    def __init__(self, client: Any, method: ClientMethod, streaming: bool, request: Any) -> None:
        super().__init__(is_send=method is SEND_MESSAGE, streaming=streaming)
        peer: Peer = peer_of(client)
        wire = method.wire_v03 if peer.protocol_version == "0.3" and peer.binding == "JSONRPC" else method.wire
        if self.is_send and streaming:
            wire = "message/stream" if wire == "message/send" else "SendStreamingMessage"
        name = self.request_name(request, wire, peer.name)

        attrs: dict[str, Any] = dict(peer.attributes)
        attrs[semconv.A2A_METHOD] = wire
        attrs[semconv.A2A_STREAMING] = streaming
        caller = CURRENT_SERVER_CALL.get()
        if caller is not None:
            attrs[semconv.A2A_CALLER_NAME] = caller.agent_name
        tracer = STATE.tracer
        assert tracer is not None  # noqa: S101 - callers check STATE.tracer first
        current = otel_context.get_current()  # looked up once for the sampler, the processors and the new context
        # given at start, so samplers and processors that read attributes when a span starts see them
        self.span: Span = tracer.start_span(
            name, context=current, kind=SpanKind.CLIENT, attributes=self.request_attributes(attrs, request)
        )
        self.ctx = trace.set_span_in_context(self.span, current)

    def prepare(self, request: Any, context: ClientCallContext | None) -> tuple[Any, ClientCallContext]:
        """The request and call context to send: trace context in headers (and message metadata)."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=self.ctx)
        params: dict[str, str] = dict(context.service_parameters or {}) if context is not None else {}
        params.update(carrier)
        requested = STATE.request_extensions
        if requested:
            params[semconv.EXTENSIONS_HEADER] = _merge_extensions(params.get(semconv.EXTENSIONS_HEADER), requested)
        new_context = (
            ClientCallContext(service_parameters=params)
            if context is None
            else context.model_copy(update={"service_parameters": params})
        )
        if self.is_send and STATE.propagate_in_metadata and isinstance(request, SendMessageRequest):
            copy = SendMessageRequest()
            copy.CopyFrom(request)  # the caller's request stays as it wrote it
            fields = copy.message.metadata.fields
            for key, value in carrier.items():  # the map entries directly: ``Struct.update`` is Python-level
                fields[key].string_value = value
            request = copy
        return request, new_context

    def observe_event(self, event: Any) -> bool:
        """Learn from one ``StreamResponse`` or unary result; ``True`` when the call is over.

        The final response may carry the callee's traceability steps: they are kept on the
        span (``a2a.response_trace``) and their cost summed into ``a2a.step.cost``.
        """
        payload = event
        if isinstance(event, StreamResponse):
            kind = event.WhichOneof("payload")
            if kind is None:
                return not self.streaming
            payload = getattr(event, kind)
        final = self.observe(payload)
        if final and self.is_send and self.span.is_recording():
            trace = read_response_trace(payload)
            if trace is not None:
                cost = total_cost(trace)
                if cost is not None:
                    self.span.set_attribute(semconv.A2A_STEP_COST, cost)
                text = response_trace_json(trace)
                if text is not None:
                    self.span.set_attribute(semconv.A2A_RESPONSE_TRACE, text)
        return final

    def enter(self) -> object:
        """Make the span current."""
        return otel_context.attach(self.ctx)

    def leave(self, token: object) -> None:
        """Undo :meth:`enter`."""
        otel_context.detach(token)  # pyright: ignore[reportArgumentType]

    def fail_with(self, exc: BaseException) -> None:
        """Record ``exc`` on the span."""
        self.fail(self.span, exc)

    def finish(self) -> None:
        """End the span (once) and count it as a step of the request being served."""
        if self.end(self.span):
            self.span.end()
            record_step(self.span)


def _active() -> bool:
    return STATE.tracer is not None and is_instrumentation_enabled()


def _split(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ClientCallContext | None, dict[str, Any]]:
    rest = dict(kwargs)
    request = args[0] if args else rest.pop("request", None)
    context = rest.pop("context", None)
    return request, context, rest


def wrap_stream(method: ClientMethod) -> Callable[..., AsyncIterator[Any]]:
    """A wrapt wrapper for a streaming ``BaseClient`` method (``send_message``, ``subscribe``)."""

    def wrapper(
        wrapped: Callable[..., AsyncIterator[Any]], instance: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        if not _active():
            return wrapped(*args, **kwargs)

        def start() -> tuple[AsyncIterator[Any], _ClientCall | None]:
            call: _ClientCall | None = None
            call_args, call_kwargs = args, kwargs
            try:
                request, context, rest = _split(args, kwargs)
                call = _ClientCall(instance, method, _is_streaming(instance), request)
                request, context = call.prepare(request, context)
                call_args, call_kwargs = (request,), {**rest, "context": context}
            except Exception as exc:
                internal_error("starting a client span", exc)
            return wrapped(*call_args, **call_kwargs), call

        return stream_through(start)

    return wrapper


def wrap_unary(method: ClientMethod) -> Callable[..., Awaitable[Any]]:
    """A wrapt wrapper for a unary ``BaseClient`` method (``get_task``, ``cancel_task``...)."""

    async def wrapper(wrapped: Callable[..., Awaitable[Any]], instance: Any, args: Any, kwargs: Any) -> Any:
        if not _active():
            return await wrapped(*args, **kwargs)
        call: _ClientCall | None = None
        try:
            request, context, rest = _split(args, kwargs)
            call = _ClientCall(instance, method, False, request)
            request, context = call.prepare(request, context)
            args, kwargs = (request,), {**rest, "context": context}
        except Exception as exc:
            internal_error("starting a client span", exc)
        return await await_through(wrapped(*args, **kwargs), call)

    return wrapper
