"""The shared A2A client: one cached client per agent URL, bearer auth, timeouts, text and data replies.

Tracing comes from :class:`~coordbench.instrument.A2AInstrumentor` when it is on: every call
then carries ``traceparent`` (headers and message metadata) and asks for the traceability and
timestamp extensions, with no code here.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.client.errors import A2AClientTimeoutError, AgentCardResolutionError
from a2a.helpers import get_data_parts, get_text_parts, new_data_part, new_text_part
from a2a.types import AgentCard, Artifact, GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from google.protobuf.json_format import MessageToDict

from coordbench.errors import CoordbenchError
from coordbench.instrument import FINAL_STATES, ends_stream
from coordbench.redaction import redact, register_secret

__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "DEFAULT_TIMEOUT",
    "ERROR_KINDS",
    "AgentCallError",
    "Messenger",
    "Reply",
    "ReplyTooLargeError",
    "error_kind",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0
"""Seconds a call may take end to end (the AgentBeats templates' default)."""

ERROR_TEXT_LIMIT = 2_000
"""Most characters of an :class:`AgentCallError`'s message (an agent's error text may be any length)."""

DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024
"""Bytes an agent may send in answer to one request (its card, or a whole response stream)."""


ERROR_KINDS = ("connection", "timeout", "auth", "card", "protocol", "malformed_reply")
"""What an :class:`AgentCallError` can be, from the transport up: the agent could not be reached,
did not answer in time, refused the credentials (HTTP 401/403), had no valid card, broke the
A2A protocol (an HTTP or JSON-RPC error), or answered with something that is not an A2A reply."""


class AgentCallError(CoordbenchError):
    """A call to an agent failed: unreachable, no card, timed out, or a protocol error.

    Attributes:
        kind: One of :data:`ERROR_KINDS`.
    """

    default_message = "the agent call failed"

    def __init__(self, message: str | None = None, *, kind: str = "protocol") -> None:
        super().__init__(message)
        self.kind = kind


class ReplyTooLargeError(AgentCallError):
    """An agent sent more than the messenger's ``max_reply_bytes`` in answer to one request."""

    default_message = "the agent's reply is too large"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, kind="malformed_reply")


class _CappedStream(httpx.AsyncByteStream):
    """A response body that raises :class:`ReplyTooLargeError` once more than ``limit`` bytes came."""

    def __init__(self, stream: httpx.AsyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise ReplyTooLargeError(f"the reply exceeded {self._limit} bytes; the rest was not read")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose responses may carry ``limit`` bytes at most, counted as they arrive.

    Reading stops at the limit, so a participant answering 50 MB costs the reader the first
    ``limit`` bytes only, and nothing the parsers above would do with the rest.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            await response.aclose()
            raise ReplyTooLargeError(f"the reply announced {int(length)} bytes, more than the limit of {self._limit}")
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)  # noqa: S101 - what an async transport returns
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_CappedStream(stream, self._limit),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def error_kind(exc: BaseException) -> str:
    """Classify a failed call by the first cause in ``exc``'s chain that says what went wrong.

    Returns:
        One of :data:`ERROR_KINDS`.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AgentCallError) and seen is not exc:
            return seen.kind
        if isinstance(seen, httpx.HTTPStatusError):
            return "auth" if seen.response.status_code in {401, 403} else "protocol"
        if isinstance(seen, AgentCardResolutionError) and seen.status_code in {401, 403}:
            return "auth"
        if isinstance(seen, TimeoutError | httpx.TimeoutException | A2AClientTimeoutError):
            return "timeout"
        if isinstance(seen, httpx.TransportError):
            return "connection"
        if isinstance(seen, ValueError) and "JSON" in str(seen):
            return "malformed_reply"
        seen = seen.__cause__ or seen.__context__
    return "protocol"


def _state_name(state: int) -> str:
    try:
        return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")  # pyright: ignore[reportArgumentType]
    except ValueError:
        return "unknown"


@dataclass
class Reply:
    """What an agent answered.

    Attributes:
        state: Final task state (``completed``, ``failed``, ``input-required``...), or
            ``message`` when the agent answered with a plain message.
        text: Text of the reply: artifacts (or the reply message), else the status message.
        data: The data parts of the reply, in order.
        task_id: The task, if one was created.
        context_id: The conversation.
        duration_ms: How long the call took.
        metadata: The metadata of the reply message or task (token usage, for instance).
    """

    state: str
    text: str = ""
    data: list[Any] = field(default_factory=list[Any])
    task_id: str = ""
    context_id: str = ""
    duration_ms: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def ok(self) -> bool:
        """The agent completed the task, or answered with a message."""
        return self.state in {"completed", "message"}


def _collect(parts: Any, texts: list[str], data: list[Any]) -> None:
    texts.extend(get_text_parts(parts))
    data.extend(get_data_parts(parts))


def _from_artifacts(artifacts: Any, texts: list[str], data: list[Any]) -> None:
    for artifact in artifacts:
        _collect(artifact.parts, texts, data)


class Messenger:
    """Talks to A2A agents, 1.0 or 0.3, over JSON-RPC or HTTP+JSON.

    Args:
        timeout: Seconds each call may take, end to end.
        token: Bearer token sent to every agent (``Authorization: Bearer ...``); never logged.
        streaming: Stream responses when the agent supports it.
        headers: Extra HTTP headers for every request.
        verify_tls: Verify the agents' TLS certificates.
        event_hooks: httpx event hooks (``{"request": [...], "response": [...]}``), called for
            every HTTP exchange, agent cards included.
        max_reply_bytes: Most bytes read in answer to one request (a card, or a whole
            response stream); past it the call fails with :class:`ReplyTooLargeError`
            (kind ``malformed_reply``) and the rest is not read.
        remember_card_errors: Seconds a failed card read is remembered: calls to that agent fail
            at once with the same error meanwhile, instead of each waiting out its own timeout
            (0: every call tries again). An assessor remembers for the whole assessment.

    Use as an async context manager, or call :meth:`close` when done.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        token: str | None = None,
        streaming: bool = True,
        headers: Mapping[str, str] | None = None,
        verify_tls: bool = True,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        remember_card_errors: float = 0.0,
    ) -> None:
        if max_reply_bytes < 1:
            raise ValueError(f"max_reply_bytes must be at least 1, got {max_reply_bytes}")
        all_headers = dict(headers or {})
        if token:
            register_secret(token)
            all_headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout
        self.streaming = streaming
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers=all_headers,
            transport=_CappedTransport(httpx.AsyncHTTPTransport(verify=verify_tls), max_reply_bytes),
            event_hooks={name: list(hooks) for name, hooks in (event_hooks or {}).items()},
        )
        self._clients: dict[str, Client] = {}
        self._cards: dict[str, AgentCard] = {}
        self._card_errors: dict[str, tuple[float, AgentCallError]] = {}
        self.remember_card_errors = remember_card_errors
        self._locks: dict[str, asyncio.Lock] = {}
        self._contexts: dict[str, str] = {}

    async def __aenter__(self) -> Messenger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _client(self, url: str) -> Client:
        client = self._clients.get(url)
        if client is not None:
            return client
        self._raise_remembered(url)
        lock = self._locks.setdefault(url, asyncio.Lock())
        async with lock:
            client = self._clients.get(url)
            self._raise_remembered(url)
            if client is None:
                try:
                    card = await A2ACardResolver(self._http, url).get_agent_card()
                except Exception as exc:
                    kind = error_kind(exc)
                    error = AgentCallError(
                        redact(f"cannot read the agent card at {url}: {exc}", limit=ERROR_TEXT_LIMIT),
                        kind=kind if kind in {"connection", "timeout", "auth"} else "card",
                    )
                    if self.remember_card_errors > 0:  # one wait per agent, not one per call
                        self._card_errors[url] = (time.monotonic() + self.remember_card_errors, error)
                    raise error from exc
                config = ClientConfig(streaming=self.streaming, httpx_client=self._http)
                self._cards[url] = card
                client = self._clients[url] = ClientFactory(config).create(card)
        return client

    async def agent_name(self, url: str) -> str:
        """The name on the agent's card (read once, then cached).

        Raises:
            AgentCallError: The card cannot be read.
        """
        await self._client(url)
        return self._cards[url].name

    async def send(
        self,
        url: str,
        text: str | None = None,
        *,
        data: Any = None,
        parts: Sequence[Part] = (),
        context_id: str | None = None,
        new_conversation: bool = False,
        on_status: Callable[[str, str], Any] | None = None,
    ) -> Reply:
        """Send one user message (text and/or a data part) and wait for the final answer.

        Args:
            url: The agent's base URL (its card is read from there once, then cached).
            text: The text part.
            data: A JSON-serialisable data part.
            parts: Further parts, after the text and data parts.
            context_id: The conversation to continue (default: the last one with ``url``,
                unless ``new_conversation``).
            new_conversation: Start a new conversation with ``url``.
            on_status: Called with ``(state, text)`` for every status update that carries
                a message (progress reports, when streaming).

        Returns:
            The reply; a failed task is a reply (``state="failed"``), not an exception.

        Raises:
            AgentCallError: The agent is unreachable, has no valid card, timed out, or broke
                the protocol.
            ValueError: No text, data or part was given.
        """
        if text is None and data is None and not parts:
            raise ValueError("a message needs text or data")
        all_parts: list[Part] = []
        if text is not None:
            all_parts.append(new_text_part(text))
        if data is not None:
            all_parts.append(new_data_part(data))
        all_parts.extend(parts)
        if context_id is None and not new_conversation:
            context_id = self._contexts.get(url)
        message = Message(
            role=Role.ROLE_USER, parts=all_parts, message_id=str(uuid.uuid4()), context_id=context_id or ""
        )
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout):
                client = await self._client(url)
                reply = await self._exchange(client, SendMessageRequest(message=message), on_status)
        except TimeoutError as exc:
            raise AgentCallError(redact(f"{url} did not answer within {self.timeout:g} s"), kind="timeout") from exc
        except AgentCallError:
            raise
        except Exception as exc:
            raise AgentCallError(
                redact(f"call to {url} failed: {type(exc).__name__}: {exc}", limit=ERROR_TEXT_LIMIT),
                kind=error_kind(exc),
            ) from exc
        reply.duration_ms = (time.perf_counter() - started) * 1e3
        if reply.context_id:
            self._contexts[url] = reply.context_id
        return reply

    async def _exchange(
        self, client: Client, request: SendMessageRequest, on_status: Callable[[str, str], Any] | None
    ) -> Reply:
        texts: list[str] = []
        data: list[Any] = []
        status_texts: list[str] = []
        metadata: dict[str, Any] = {}
        task: Task | None = None
        state: int | None = None
        task_id = context_id = ""
        async for event in client.send_message(request):
            kind = event.WhichOneof("payload")
            if kind == "message":
                _collect(event.message.parts, texts, data)
                return Reply(
                    "message",
                    "\n".join(texts),
                    data,
                    event.message.task_id,
                    event.message.context_id,
                    metadata=MessageToDict(event.message.metadata),
                )
            if kind == "task":
                task = event.task
                task_id, context_id, state = task.id, task.context_id, task.status.state
                metadata.update(MessageToDict(task.metadata))
            elif kind == "status_update":
                update = event.status_update
                task_id, context_id, state = update.task_id, update.context_id, update.status.state
                metadata.update(MessageToDict(update.metadata))
                if update.status.HasField("message"):
                    status_texts = []
                    _collect(update.status.message.parts, status_texts, [])
                    if on_status is not None:
                        on_status(_state_name(update.status.state), "\n".join(status_texts))
            elif kind == "artifact_update":
                artifact: Artifact = event.artifact_update.artifact
                _collect(artifact.parts, texts, data)
            if kind != "artifact_update" and ends_stream(state, snapshot=kind == "task"):
                break
        if task is not None and state in FINAL_STATES and not texts and not data:
            _from_artifacts(task.artifacts, texts, data)
            if task.status.HasField("message"):
                status_texts = []
                _collect(task.status.message.parts, status_texts, [])
        if state not in FINAL_STATES and task_id:
            # the stream ended early (or the agent does not stream): read the task once
            task = await client.get_task(GetTaskRequest(id=task_id))
            state = task.status.state
            metadata.update(MessageToDict(task.metadata))
            texts, data = [], []
            _from_artifacts(task.artifacts, texts, data)
        if state is None:
            raise AgentCallError("the agent sent no task and no message", kind="malformed_reply")
        text = "\n".join(texts) if texts or data else "\n".join(status_texts)
        return Reply(_state_name(state), text, data, task_id, context_id, metadata=metadata)

    def reset(self) -> None:
        """Forget the conversations (the next message to each agent starts a new one) and the cards that failed."""
        self._contexts.clear()
        self._card_errors.clear()

    def card_error(self, url: str) -> AgentCallError | None:
        """Why the card at ``url`` could not be read, while that failure is remembered."""
        remembered = self._card_errors.get(url)
        if remembered is None or remembered[0] <= time.monotonic():
            return None
        return remembered[1]

    def _raise_remembered(self, url: str) -> None:
        failed = self.card_error(url)
        if failed is not None:
            raise AgentCallError(str(failed), kind=failed.kind)

    async def close(self) -> None:
        """Close every cached client and the HTTP connection pool."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            try:
                await client.close()
            except Exception as exc:  # closing must not hide the caller's own error
                logger.debug("closing an A2A client failed: %s", exc)
        await self._http.aclose()
