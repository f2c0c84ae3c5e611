"""What a traced A2A call learns from its request and response, shared by client and server spans."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from a2a.types import Message, SendMessageRequest, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from opentelemetry.trace import Span, Status, StatusCode

from coordbench import semconv
from coordbench.instrument import _payload
from coordbench.instrument._errors import record_error
from coordbench.instrument._internal import internal_error
from coordbench.instrument._state import STATE
from coordbench.sketch import FINGERPRINT_TEXT_LIMIT, fingerprint

__all__ = ["CallRecord", "TracedCall", "aclose", "await_through", "stream_through"]

_FAILED = TaskState.TASK_STATE_FAILED  # read once: each ``TaskState.X`` is a Python-level ``__getattr__``
_KEPT_TEXT = max(FINGERPRINT_TEXT_LIMIT, _payload.CONTENT_LIMIT)
"""Characters of an answer's text kept while it arrives: enough to record it and fingerprint it."""


class CallRecord:
    """Bookkeeping for one A2A call, seen from either end.

    Subclasses own the span; this class turns the request, the response events and a
    failure into span attributes and a status.
    """

    __slots__ = (
        "chars_out",
        "context_id",
        "done",
        "events",
        "failed",
        "is_send",
        "response_size",
        "state",
        "streaming",
        "task_id",
        "text_chars_out",
        "texts_out",
        "texts_seen",
    )

    captures_content = False
    """Whether this end records message content when capture is on (the caller's end does)."""

    def __init__(self, *, is_send: bool, streaming: bool) -> None:
        self.is_send = is_send
        self.streaming = streaming
        self.context_id = ""
        self.task_id = ""
        self.state: int | None = None
        self.events = 0
        self.response_size = 0
        self.chars_out = 0
        self.failed = False
        self.done = False
        self.texts_out: list[str] | None = None
        self.texts_seen: set[str] = set()
        self.text_chars_out = 0

    def request_name(self, request: Any, wire: str, agent: str) -> str:
        """Learn the ids the request carries; returns the span name."""
        if self.is_send and isinstance(request, SendMessageRequest):
            message = request.message
            self.context_id = message.context_id
            self.task_id = message.task_id
            return f"{semconv.OPERATION_INVOKE_AGENT} {agent}"
        task_id = getattr(request, "id", None) or getattr(request, "task_id", None)
        if isinstance(task_id, str) and task_id:
            self.task_id = task_id
        return f"{wire} {agent}"

    def request_attributes(self, attrs: dict[str, Any], request: Any) -> dict[str, Any]:
        """Add what the request says to ``attrs`` and return it (for a span that records: sizes, digest, content)."""
        if self.is_send and isinstance(request, SendMessageRequest):
            message = request.message
            attrs[semconv.GEN_AI_OPERATION_NAME] = semconv.OPERATION_INVOKE_AGENT
            attrs[semconv.A2A_MESSAGE_ID] = message.message_id
            chars, digest = _payload.message_facts(message)
            attrs[semconv.A2A_MESSAGE_DIGEST] = digest
            attrs[semconv.A2A_REQUEST_SIZE] = request.ByteSize()
            attrs[semconv.GEN_AI_USAGE_INPUT_TOKENS] = _payload.estimate_tokens(chars)
            if self.captures_content and (STATE.capture_content or STATE.fingerprints):
                text = _payload.parts_text(message.parts)
                if STATE.capture_content:
                    attrs[semconv.GEN_AI_INPUT_MESSAGES] = _payload.recorded_messages("user", [text])
                if STATE.fingerprints:
                    attrs[semconv.A2A_REQUEST_FINGERPRINT] = fingerprint(text)
                    attrs[semconv.A2A_REQUEST_TEXT_CHARS] = len(text)
                self.texts_out = []
        return attrs

    def observe(self, event: Any) -> bool:
        """Learn ids, state and sizes from one response object (Task, Message or update event).

        Returns:
            Whether it is the last event of the call: anything at all when the call does not
            stream; else a message, or a status update or task that ends the stream
            (:func:`~coordbench.instrument._payload.ends_stream`).
        """
        if isinstance(event, Task):
            self.task_id, self.context_id, self.state = event.id, event.context_id, event.status.state
            chars = _payload.artifacts_chars(event.artifacts)
            if event.status.HasField("message"):
                chars += _payload.message_chars(event.status.message)
        elif isinstance(event, TaskStatusUpdateEvent):
            self.task_id, self.context_id, self.state = event.task_id, event.context_id, event.status.state
            chars = _payload.message_chars(event.status.message) if event.status.HasField("message") else 0
        elif isinstance(event, Message):
            self.context_id = event.context_id or self.context_id
            self.task_id = event.task_id or self.task_id
            chars = _payload.message_chars(event)
        elif isinstance(event, TaskArtifactUpdateEvent):
            self.task_id = event.task_id or self.task_id
            chars = _payload.parts_chars(event.artifact.parts)
        else:
            return not self.streaming
        self.events += 1
        self.response_size += event.ByteSize()
        self.chars_out += chars
        if self.texts_out is not None:
            self._capture(event)
        if not self.streaming or isinstance(event, Message):
            return True
        if isinstance(event, TaskArtifactUpdateEvent):
            return False
        return _payload.ends_stream(self.state, snapshot=isinstance(event, Task))

    def _capture(self, event: Any) -> None:
        """Keep the text of a response event (content capture or fingerprints are on), up to a bound."""
        texts = self.texts_out
        assert texts is not None  # noqa: S101 - only called when capturing
        found: list[str] = []
        if isinstance(event, Task):
            found.extend(_payload.parts_text(a.parts) for a in event.artifacts)
            if event.status.HasField("message"):
                found.append(_payload.parts_text(event.status.message.parts))
        elif isinstance(event, TaskStatusUpdateEvent):
            if event.status.HasField("message"):
                found.append(_payload.parts_text(event.status.message.parts))
        elif isinstance(event, Message):
            found.append(_payload.parts_text(event.parts))
        elif isinstance(event, TaskArtifactUpdateEvent):
            found.append(_payload.parts_text(event.artifact.parts))
        for text in found:
            if not text:
                continue
            if self.text_chars_out < _KEPT_TEXT:  # what is kept is bounded; what is counted is not
                if text in self.texts_seen:  # the same answer as a message and as an artifact (ADK sends both): once
                    continue
                self.texts_seen.add(text)
                texts.append(text[: _KEPT_TEXT - self.text_chars_out])
            self.text_chars_out += len(text)

    def fail(self, span: Span, exc: BaseException) -> None:
        """Record ``exc`` as the call's failure."""
        self.failed = True
        record_error(span, exc)

    def end(self, span: Span) -> bool:
        """Put the outcome on ``span`` (once); returns ``False`` if it was already done."""
        if self.done:
            return False
        self.done = True
        if not span.is_recording():
            return True
        attrs: dict[str, Any] = {}
        if self.context_id:
            attrs[semconv.GEN_AI_CONVERSATION_ID] = self.context_id
        if self.task_id:
            attrs[semconv.A2A_TASK_ID] = self.task_id
        if self.state is not None:
            attrs[semconv.A2A_TASK_STATE] = _payload.task_state_name(self.state)
        if self.is_send:
            attrs[semconv.A2A_RESPONSE_SIZE] = self.response_size
            attrs[semconv.A2A_RESPONSE_EVENTS] = self.events
            attrs[semconv.GEN_AI_USAGE_OUTPUT_TOKENS] = _payload.estimate_tokens(self.chars_out)
            attrs[semconv.A2A_USAGE_ESTIMATED] = True
            if self.texts_out is not None:
                kept = [t for t in self.texts_out if t]
                if STATE.capture_content:
                    attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _payload.recorded_messages("assistant", kept)
                if STATE.fingerprints:
                    attrs[semconv.A2A_RESPONSE_FINGERPRINT] = fingerprint("\n".join(kept))
                    attrs[semconv.A2A_RESPONSE_TEXT_CHARS] = self.text_chars_out
        if not self.failed and self.state == _FAILED:
            attrs[semconv.ERROR_TYPE] = semconv.ERROR_TASK_FAILED
            span.set_status(Status(StatusCode.ERROR, "the agent reported the task as failed"))
        span.set_attributes(attrs)
        return True


class TracedCall(Protocol):
    """What :func:`stream_through` needs from a client call or a server request."""

    ends_after_final_event: bool
    """End the span once the final event has been taken on, not before it is handed over.

    A server's final event is taken on by a2a-sdk, which writes it to the caller and then asks
    for the next one: ending there keeps the span's end work off the answer's way and lets the
    SERVER span cover the answer's sending. A caller may stop iterating at its final event and
    never ask again, so a client call ends before handing it over.
    """

    def enter(self) -> object:
        """Make the call's context current; returns what :meth:`leave` needs to undo it."""
        ...

    def leave(self, token: object) -> None:
        """Undo :meth:`enter`."""
        ...

    def observe_event(self, event: Any) -> bool:
        """Learn from one event; ``True`` when it is the last."""
        ...

    def fail_with(self, exc: BaseException) -> None:
        """Record a failure."""
        ...

    def finish(self) -> None:
        """End the call's span (idempotent)."""
        ...


def _finish(call: TracedCall) -> None:
    """End ``call``'s span; a failure of ours is logged (raised under pytest), never the caller's."""
    try:
        call.finish()
    except Exception as exc:
        internal_error("ending a span", exc)


async def aclose(generator: Any) -> None:
    """Close an async generator (anything with ``aclose``)."""
    close = getattr(generator, "aclose", None)
    if close is not None:
        await close()


async def stream_through(
    start: Callable[[], tuple[AsyncIterator[Any], TracedCall | None]],
) -> AsyncIterator[Any]:
    """Yield a wrapped stream's events, each produced inside the call's context, and account for them.

    ``start`` runs at the first iteration (so a stream that is never iterated opens no span)
    and returns the wrapped a2a-sdk stream and the call to account to (``None`` passes the
    events through untouched). The context is entered only around each step of the stream,
    never across a ``yield``, so the consumer's code between events runs in its own context.
    A client call's span ends at the final event, before handing it over: callers usually stop
    iterating there, and an abandoned generator is only closed when it is collected. A server
    request's span (``ends_after_final_event``) ends once the final event has been taken on,
    when a2a-sdk, having written it to the caller, asks for more. What the stream does after
    its final event (closing the HTTP response, usually nothing else) runs outside the ended
    span, untouched. A consumer that stops early (``aclose``) ends the span without an error.
    """
    inner, call = start()
    if call is None:
        async for event in inner:
            yield event
        return
    try:
        while True:
            token = call.enter()
            try:
                event = await anext(inner)
            except StopAsyncIteration:
                return
            finally:
                call.leave(token)
            try:
                final = call.observe_event(event)
                if final and not call.ends_after_final_event:
                    call.finish()
            except Exception as exc:
                internal_error("recording a response event", exc)
                final = False
            yield event
            if final:
                if call.ends_after_final_event:  # taken on: a2a-sdk has written it and asks for more
                    _finish(call)
                break
        while True:  # the call is over: pass the rest through
            try:
                event = await anext(inner)
            except StopAsyncIteration:
                return
            yield event
    except GeneratorExit:
        raise
    except BaseException as exc:
        call.fail_with(exc)
        raise
    finally:
        await aclose(inner)
        _finish(call)


async def await_through(work: Awaitable[Any], call: TracedCall | None) -> Any:
    """Await ``work`` (a unary call) inside ``call``'s context and account for its result or failure."""
    if call is None:
        return await work
    token = call.enter()
    try:
        result = await work
    except BaseException as exc:
        call.fail_with(exc)
        raise
    else:
        try:
            call.observe_event(result)
        except Exception as exc:
            internal_error("recording a response", exc)
    finally:
        call.leave(token)
        _finish(call)
    return result
