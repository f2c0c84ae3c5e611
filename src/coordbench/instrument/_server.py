"""Server side: one SERVER span per A2A request an a2a-sdk request handler serves.

The span is opened in the request handler (``DefaultRequestHandler`` and
``LegacyRequestHandler``), where both the HTTP headers (``ServerCallContext.state``) and the
parsed message are at hand, so the parent comes from ``traceparent`` in the headers, else
from the message metadata. The agent's executor runs in a copy of the handler's context,
so everything the agent does becomes a descendant of the span; the executor also holds the
span open until it returns, even when it outlives the handler.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import Token
from dataclasses import dataclass
from typing import Any, cast

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import SpanContext, SpanKind

from coordbench import semconv
from coordbench.instrument import _payload, _sdk
from coordbench.instrument._errors import record_error
from coordbench.instrument._extensions import (
    attach_response_trace,
    response_trace_for,
    stamp_timestamps,
    total_cost,
)
from coordbench.instrument._internal import internal_error
from coordbench.instrument._record import CallRecord, await_through, stream_through
from coordbench.instrument._state import CURRENT_SERVER_CALL, STATE, ServerCall

__all__ = ["SERVER_METHODS", "ServerMethod", "TracedExecutor", "wrap_executor_run", "wrap_stream", "wrap_unary"]


@dataclass(frozen=True, slots=True)
class ServerMethod:
    """One request-handler method we trace."""

    attr: str
    wire: str
    stream: bool = False
    is_send: bool = False


SERVER_METHODS = (
    ServerMethod("on_message_send", "SendMessage", is_send=True),
    ServerMethod("on_message_send_stream", "SendStreamingMessage", stream=True, is_send=True),
    ServerMethod("on_get_task", "GetTask"),
    ServerMethod("on_list_tasks", "ListTasks"),
    ServerMethod("on_cancel_task", "CancelTask"),
    ServerMethod("on_subscribe_to_task", "SubscribeToTask", stream=True),
    ServerMethod("on_create_task_push_notification_config", "CreateTaskPushNotificationConfig"),
    ServerMethod("on_get_task_push_notification_config", "GetTaskPushNotificationConfig"),
    ServerMethod("on_list_task_push_notification_configs", "ListTaskPushNotificationConfigs"),
    ServerMethod("on_delete_task_push_notification_config", "DeleteTaskPushNotificationConfig"),
    ServerMethod("on_get_extended_agent_card", "GetExtendedAgentCard"),
)


def _headers_in(state: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The request's HTTP headers, or its gRPC call metadata (keys lower-cased), from its call context's state."""
    if state is None:
        return None
    headers = state.get("headers")
    # ``type(...) is dict`` first: an isinstance check against the Mapping ABC is slow on the hot path
    if type(headers) is dict or isinstance(headers, Mapping):
        return cast("Mapping[str, Any]", headers)
    grpc_context = state.get(_GRPC_CONTEXT)
    return _grpc_metadata(grpc_context) if grpc_context is not None else None


_GRPC_CONTEXT = "grpc_context"  # where a2a-sdk's GrpcHandler keeps the grpc.aio.ServicerContext


def _grpc_metadata(grpc_context: Any) -> dict[str, str] | None:
    metadata = grpc_context.invocation_metadata()
    if metadata is None:
        return None
    out: dict[str, str] = {}
    for key, value in metadata:
        if not str(key).endswith("-bin"):  # binary metadata carries no trace context
            out[str(key).lower()] = value.decode() if isinstance(value, bytes) else str(value)
    return out


def _state_of(call_context: Any) -> Mapping[str, Any] | None:
    state = getattr(call_context, "state", None)
    return cast("Mapping[str, Any]", state) if type(state) is dict or isinstance(state, Mapping) else None


@functools.lru_cache(maxsize=4)
def _fields_of(propagator: TextMapPropagator) -> frozenset[str]:
    """The carrier keys ``propagator`` reads (``traceparent``, ``tracestate``, ``baggage``...), lower-cased.

    Our client writes exactly these (``propagate.inject``) into the headers and the message
    metadata, so the server reads them all back: a key left out here is context lost at the hop.
    """
    return frozenset(str(f).lower() for f in propagator.fields)


def parent_context(params: Any, call_context: Any) -> Context | None:
    """The context a request carries (trace context and baggage): from the headers, else the message metadata.

    The headers win when they carry a valid trace context. The metadata entries that repeat
    the headers exactly (our client sends both) are then removed from the request, and the
    metadata itself when nothing else is left in it: they have done their job, and the
    agent, its task history and the response carry exactly the message the caller wrote.
    Context that came in the metadata alone stays in it.

    When the current context already holds a span of the same trace (an ASGI or FastAPI
    server span that extracted the same header), that context is kept, so our span nests
    under it instead of beside it.

    Returns:
        The context to parent the server span on, or ``None`` to use the current one.
    """
    return _parent_from(params, _headers_in(_state_of(call_context)))


def _parent_from(params: Any, headers: Mapping[str, Any] | None) -> Context | None:
    """:func:`parent_context`, from the request's headers already looked up."""
    fields = _fields_of(propagate.get_global_textmap())
    current = otel_context.get_current()
    extracted: Context | None = None
    remote = trace.INVALID_SPAN_CONTEXT
    message = getattr(params, "message", None)
    metadata = message.metadata if message is not None and message.metadata.fields else None
    if headers is not None:
        carrier = {k: str(headers[k]) for k in fields if k in headers}
        if carrier:
            extracted, remote = _extract(carrier, current)
            if remote.is_valid:
                if metadata is not None:
                    _drop_repeated_context(metadata, carrier)
                    # it held our copy only: the message is back as the caller wrote it
                    if not metadata.fields and message is not None:
                        message.ClearField("metadata")
                metadata = None
    if metadata is not None:
        carrier: dict[str, str] = {}
        for key in fields:
            value = _payload.struct_get_str(metadata, key)
            if value is not None:
                carrier[key] = value
        if carrier:
            # on top of what the headers brought (their baggage, say), since they brought no trace context
            from_metadata, from_metadata_remote = _extract(carrier, current if extracted is None else extracted)
            if extracted is None or from_metadata_remote.is_valid:
                extracted, remote = from_metadata, from_metadata_remote
    if extracted is None:
        return None
    mine = trace.get_current_span(current).get_span_context()
    if mine.is_valid and remote.is_valid and mine.trace_id == remote.trace_id:
        return None
    return extracted


def _extract(carrier: Mapping[str, str], base: Context) -> tuple[Context, SpanContext]:
    """``base`` with the carrier's context on top, and the span context the carrier brought.

    Extracting into ``base`` keeps its other values; a carrier without a valid trace context
    leaves ``base``'s span in place, which is not the carrier's (the invalid span context is
    returned then).
    """
    extracted = propagate.extract(carrier, context=base)
    span = trace.get_current_span(extracted)
    brought = span is not trace.get_current_span(base)
    return extracted, span.get_span_context() if brought else trace.INVALID_SPAN_CONTEXT


def _drop_repeated_context(metadata: Any, carrier: Mapping[str, str]) -> None:
    """Remove the metadata entries that repeat the headers' context exactly (key and value)."""
    entries = metadata.fields
    for key, value in carrier.items():
        if key in entries and _payload.struct_get_str(metadata, key) == value:
            del entries[key]


_AGENT_CACHE_ATTR = "_coordbench_agent"


def _agent_of(handler: Any) -> tuple[str, dict[str, Any]]:
    """The agent's name and the span attributes naming it, from the handler's card (cached on the handler)."""
    card = _sdk.handler_card(handler)
    cached = getattr(handler, _AGENT_CACHE_ATTR, None)
    if cached is not None and cached[0] is card:
        return cached[1], cached[2]
    agent = str(getattr(card, "name", "") or "") or "unknown-agent"
    attrs: dict[str, Any] = {semconv.A2A_CALL_TYPE: "AGENT", semconv.GEN_AI_AGENT_NAME: agent}
    agent_version = getattr(card, "version", "")
    if agent_version:
        attrs[semconv.GEN_AI_AGENT_VERSION] = str(agent_version)
    with contextlib.suppress(AttributeError):  # a handler class with __slots__: work it out every time
        setattr(handler, _AGENT_CACHE_ATTR, (card, agent, attrs))
    return agent, attrs


class _ServerRequest(CallRecord):
    """The SERVER span of one request, and what it learns from the response."""

    __slots__ = ("call", "ctx")
    ends_after_final_event = True

    def __init__(self, handler: Any, method: ServerMethod, params: Any, call_context: Any) -> None:
        super().__init__(is_send=method.is_send, streaming=method.stream)
        agent, agent_attrs = _agent_of(handler)
        state = _state_of(call_context)
        wire = state.get("method") if state is not None else None
        if not isinstance(wire, str) or not wire:
            wire = method.wire
        headers = _headers_in(state)
        requested: set[str] = getattr(call_context, "requested_extensions", None) or set()
        name = self.request_name(params, method.wire, agent)

        def attributes() -> dict[str, Any]:  # the SERVER span's attributes at start
            if "/" in wire:
                version = "0.3"
            elif headers is not None:
                version = str(headers.get("a2a-version") or "0.3")
            else:
                version = "1.0"
            attrs = dict(agent_attrs)
            attrs[semconv.A2A_METHOD] = wire
            attrs[semconv.A2A_PROTOCOL_VERSION] = version
            attrs[semconv.A2A_STREAMING] = method.stream
            if state is not None and "request_id" in state:
                attrs[semconv.A2A_PROTOCOL_BINDING] = "JSONRPC"
                attrs[semconv.RPC_SYSTEM_NAME] = "jsonrpc"
            elif state is not None and _GRPC_CONTEXT in state:
                attrs[semconv.A2A_PROTOCOL_BINDING] = "GRPC"
                attrs[semconv.RPC_SYSTEM_NAME] = "grpc"
            elif headers is not None:
                attrs[semconv.A2A_PROTOCOL_BINDING] = "HTTP+JSON"
            if requested:
                attrs[semconv.A2A_REQUESTED_EXTENSIONS] = tuple(sorted(requested))
            return self.request_attributes(attrs, params)

        tracer = STATE.tracer
        assert tracer is not None  # noqa: S101 - callers check STATE.tracer first
        parent = _parent_from(params, headers)
        span = tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes())
        self.call = ServerCall(
            span=span,
            agent_name=agent,
            collect_steps=method.is_send and semconv.TRACEABILITY_EXTENSION_URI in requested,
            timestamps=method.is_send and not requested.isdisjoint(semconv.TIMESTAMP_EXTENSION_URIS),
        )
        self.ctx = trace.set_span_in_context(span, parent)  # the caller's baggage comes along

    def enter(self) -> object:
        """Make the span and the server call current."""
        return otel_context.attach(self.ctx), CURRENT_SERVER_CALL.set(self.call)

    def leave(self, token: object) -> None:
        """Undo :meth:`enter`."""
        otel_token, call_token = cast("tuple[object, Token[ServerCall | None]]", token)
        CURRENT_SERVER_CALL.reset(call_token)
        otel_context.detach(otel_token)  # pyright: ignore[reportArgumentType]

    def observe_event(self, event: Any) -> bool:
        """Learn from one response event or result; ``True`` when it is the last.

        Also serves the extensions the caller asked for: timestamps on messages and artifacts,
        and the agent's steps on the final response (left out when there are none: an empty
        trace says nothing and costs the SDK a JSON round trip per call).
        """
        final = self.observe(event)
        if self.call.timestamps:
            stamp_timestamps(event)
        if final and self.call.collect_steps and self.call.steps:
            attach_response_trace(event, response_trace_for(self.call))
        return final

    def fail_with(self, exc: BaseException) -> None:
        """Record ``exc`` on the span."""
        self.fail(self.call.span, exc)

    def finish(self) -> None:
        """Record the outcome and release the request's hold on the span (once).

        When the caller asked for the agent's steps, the span also gets their summed cost.
        """
        call = self.call
        if self.end(call.span):
            if call.collect_steps and call.steps and call.span.is_recording():
                cost = total_cost(response_trace_for(call))
                if cost is not None:
                    call.span.set_attribute(semconv.A2A_STEP_COST, cost)
            call.release()


def _active() -> bool:
    return STATE.tracer is not None and is_instrumentation_enabled()


def _split(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, Any]:
    params = args[0] if args else kwargs.get("params")
    call_context = args[1] if len(args) > 1 else kwargs.get("context")
    return params, call_context


def wrap_unary(method: ServerMethod) -> Callable[..., Awaitable[Any]]:
    """A wrapt wrapper for a unary request-handler method."""

    async def wrapper(wrapped: Callable[..., Awaitable[Any]], instance: Any, args: Any, kwargs: Any) -> Any:
        if not _active():
            return await wrapped(*args, **kwargs)
        request: _ServerRequest | None = None
        try:
            request = _ServerRequest(instance, method, *_split(args, kwargs))
        except Exception as exc:
            internal_error("starting a server span", exc)
        return await await_through(wrapped(*args, **kwargs), request)

    return wrapper


def wrap_stream(method: ServerMethod) -> Callable[..., AsyncIterator[Any]]:
    """A wrapt wrapper for a streaming request-handler method; the span lasts until the stream ends."""

    def wrapper(
        wrapped: Callable[..., AsyncIterator[Any]], instance: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        if not _active():
            return wrapped(*args, **kwargs)

        def start() -> tuple[AsyncIterator[Any], _ServerRequest | None]:
            request: _ServerRequest | None = None
            try:
                request = _ServerRequest(instance, method, *_split(args, kwargs))
            except Exception as exc:
                internal_error("starting a server span", exc)
            return wrapped(*args, **kwargs), request

        return stream_through(start)

    return wrapper


async def hold_server_call(work: Awaitable[None]) -> None:
    """Await the agent's ``work`` while holding the current server call's span open.

    Errors the work raises are recorded on the span and re-raised unchanged.
    """
    call = CURRENT_SERVER_CALL.get()
    held = call is not None and call.acquire()
    try:
        await work
    except BaseException as exc:
        if held and call is not None:
            try:
                record_error(call.span, exc)
            except Exception as internal:
                internal_error("recording an executor error", internal)
        raise
    finally:
        if held and call is not None:
            call.release()


class TracedExecutor(AgentExecutor):
    """Wraps an agent's executor so the request's SERVER span covers all of its work.

    Errors the executor raises are recorded on the span (and re-raised unchanged).
    """

    def __init__(self, inner: AgentExecutor) -> None:
        """Wrap ``inner``."""
        self.inner = inner

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run the wrapped executor while holding the current server call open."""
        await hold_server_call(self.inner.execute(context, event_queue))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Delegate to the wrapped executor."""
        await self.inner.cancel(context, event_queue)

    def __getattr__(self, name: str) -> Any:
        """Expose the wrapped executor's other attributes."""
        return getattr(self.inner, name)


def wrap_active_task_init(wrapped: Callable[..., None], instance: Any, args: Any, kwargs: Any) -> None:
    """Wrap ``ActiveTask.__init__`` so each task runs its executor through :class:`TracedExecutor`."""
    wrapped(*args, **kwargs)
    executor = _sdk.task_executor(instance)
    if executor is not None and not isinstance(executor, TracedExecutor):
        _sdk.set_task_executor(instance, TracedExecutor(executor))


async def wrap_executor_run(wrapped: Callable[..., Awaitable[None]], instance: Any, args: Any, kwargs: Any) -> None:
    """Wrap ``LegacyRequestHandler._run_event_stream``, which runs the executor, like :class:`TracedExecutor`."""
    await hold_server_call(wrapped(*args, **kwargs))
