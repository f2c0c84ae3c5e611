"""Failures: spans say what happened, and the caller sees exactly what it would without us."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.types import GetTaskRequest, Role, SendMessageRequest, TaskState
from opentelemetry.sdk.trace import TracerProvider

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.a2a import build_agent_card
from coordbench.instrument import A2AInstrumentor, _client
from coordbench.spans import SpanKind, StatusCode
from coordbench.testing import RecordingSpanExporter, bind_loopback

Outcome = tuple[str, str]


async def outcome_of(action: Callable[[], Awaitable[Any]]) -> Outcome:
    """What the caller sees: the result's repr, or the exception's type and message."""
    try:
        result = await action()
    except Exception as exc:
        return f"raised {type(exc).__module__}.{type(exc).__qualname__}", str(exc)
    return "returned", repr(result)


async def with_and_without(action: Callable[[], Awaitable[Any]], provider: TracerProvider) -> tuple[Outcome, Outcome]:
    plain = await outcome_of(action)
    A2AInstrumentor().instrument(tracer_provider=provider)
    try:
        traced = await outcome_of(action)
    finally:
        A2AInstrumentor().uninstrument()
    return plain, traced


async def send(url: str, text: str, *, streaming: bool, call_timeout: float | None = None) -> list[Any]:
    async with httpx.AsyncClient() as http:
        card = build_agent_card("Down", url, description="nobody home")
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
        context = ClientCallContext(timeout=call_timeout)
        return [event.WhichOneof("payload") async for event in client.send_message(request, context=context)]


async def ask_once(url: str, text: str, *, streaming: bool) -> tuple[str, str]:
    client = AgentClient(url, streaming=streaming)
    try:
        return await client.ask(text)
    finally:
        await client.close()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_callee_down(
    tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    sock = bind_loopback()  # a port nobody listens on
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    plain, traced = await with_and_without(lambda: send(url, "hi", streaming=streaming), tracer_provider)
    sock.close()
    assert traced == plain
    assert plain[0] == "raised a2a.client.errors.A2AClientError"
    (span,) = span_exporter.spans()
    assert span.kind is SpanKind.CLIENT
    assert span.status_code is StatusCode.ERROR
    assert span.attributes[semconv.ERROR_TYPE] == "a2a.client.errors.A2AClientError"
    assert "Network communication error" in span.status_message
    assert [e.name for e in span.events] == ["exception"]


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_callee_timing_out(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    url = start_agent("Sleepy", delay=1.0)
    plain, traced = await with_and_without(
        lambda: send(url, "hi", streaming=streaming, call_timeout=0.2), tracer_provider
    )
    assert traced == plain
    assert plain[0] == "raised a2a.client.errors.A2AClientTimeoutError"
    call = next(s for s in span_exporter.spans() if s.kind is SpanKind.CLIENT)
    assert call.status_code is StatusCode.ERROR
    assert call.attributes[semconv.ERROR_TYPE] == "a2a.client.errors.A2AClientTimeoutError"
    assert call.duration_ms >= 200


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_callee_raising(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    url = start_agent("Crashy", behaviour="raise")
    plain, traced = await with_and_without(lambda: ask_once(url, "hi", streaming=streaming), tracer_provider)
    assert traced == plain
    assert plain == ("raised a2a.utils.errors.InternalError", "boom from Crashy")
    spans = await span_exporter.wait_for_async(lambda s: any(x.kind is SpanKind.SERVER for x in s))
    server = next(s for s in spans if s.kind is SpanKind.SERVER)
    call = next(s for s in spans if s.kind is SpanKind.CLIENT and s.name == "invoke_agent Crashy")
    assert server.status_code is StatusCode.ERROR
    assert server.attributes[semconv.ERROR_TYPE] == "RuntimeError"
    assert server.status_message == "RuntimeError: boom from Crashy"
    assert any(e.name == "exception" and e.attributes["exception.message"] == "boom from Crashy" for e in server.events)
    assert call.status_code is StatusCode.ERROR
    assert call.attributes[semconv.ERROR_TYPE] == "a2a.utils.errors.InternalError"
    assert call.attributes[semconv.RPC_RESPONSE_STATUS_CODE] == "-32603"


async def test_failed_task(start_agent: StartAgent, a2a_instrumented: RecordingSpanExporter) -> None:
    url = start_agent("Quitter", behaviour="fail")
    client = AgentClient(url, streaming=True)
    state, _ = await client.ask("hi")
    await client.close()
    assert state == TaskState.Name(TaskState.TASK_STATE_FAILED)
    spans = await a2a_instrumented.wait_for_async(lambda s: any(x.kind is SpanKind.SERVER for x in s))
    for span in spans:
        assert span.status_code is StatusCode.ERROR
        assert span.attributes[semconv.ERROR_TYPE] == "task_failed"
        assert span.attributes[semconv.A2A_TASK_STATE] == "failed"


async def test_jsonrpc_error(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    url = start_agent("Forgetful")

    async def get_unknown_task() -> object:
        client = AgentClient(url, streaming=False)
        try:
            return await (await client._get()).get_task(GetTaskRequest(id="no-such-task"))
        finally:
            await client.close()

    plain, traced = await with_and_without(get_unknown_task, tracer_provider)
    assert traced == plain
    assert plain[0] == "raised a2a.utils.errors.TaskNotFoundError"
    spans = await span_exporter.wait_for_async(2)
    for span in spans:
        assert span.status_code is StatusCode.ERROR
        assert span.attributes[semconv.ERROR_TYPE] == "a2a.utils.errors.TaskNotFoundError"
        assert span.attributes[semconv.RPC_RESPONSE_STATUS_CODE] == "-32001"


async def test_instrumentation_bug_never_breaks_the_call(
    start_agent: StartAgent,
    a2a_instrumented: RecordingSpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fault injected into our own bookkeeping: logged and swallowed in production, raised under pytest."""
    url = start_agent("Robust")

    def broken(_self: object, _event: object) -> bool:
        raise ZeroDivisionError("injected")

    monkeypatch.setattr(_client._ClientCall, "observe_event", broken)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    with caplog.at_level(logging.ERROR, logger="coordbench.instrument"):
        client = AgentClient(url, streaming=True)
        assert await client.ask("hi") == ("TASK_STATE_COMPLETED", "Robust(hi)")
        await client.close()
    assert "coordbench instrumentation failed while recording a response event" in caplog.text
    assert "ZeroDivisionError: injected" in caplog.text

    monkeypatch.setenv("PYTEST_CURRENT_TEST", "here")
    client = AgentClient(url, streaming=True)
    with pytest.raises(ZeroDivisionError, match="injected"):
        await client.ask("hi")
    await client.close()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_caller_cancelled_mid_call(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter, streaming: bool
) -> None:
    """The caller gives up (``asyncio.timeout``): it sees the same TimeoutError, and the span ends there.

    It gives up once the agent is working on the request, and the agent answers only after that:
    events, not a guessed time, so a busy machine cannot make the request arrive after the give-up.
    """
    started, gate = threading.Event(), threading.Event()
    url = start_agent("Slow", started=started, gate=gate)

    async def give_up() -> list[Any]:
        started.clear()
        gate.clear()
        try:
            async with asyncio.timeout(None) as deadline:

                async def expire_once_the_agent_works() -> None:
                    await asyncio.to_thread(started.wait, 60)
                    deadline.reschedule(asyncio.get_running_loop().time())

                watcher = asyncio.create_task(expire_once_the_agent_works())
                try:
                    return await send(url, "hi", streaming=streaming)
                finally:
                    watcher.cancel()
        finally:
            gate.set()  # the agent finishes only after the caller gave up

    plain, traced = await with_and_without(give_up, tracer_provider)
    assert traced == plain
    assert plain[0] == "raised builtins.TimeoutError"
    call = next(s for s in span_exporter.spans() if s.kind is SpanKind.CLIENT)  # already exported: it ended
    assert call.status_code is StatusCode.ERROR
    assert call.attributes[semconv.ERROR_TYPE] == "cancelled"
    # ended at the give-up, not when the agent finished its work
    spans = await span_exporter.wait_for_async(lambda s: any(x.kind is SpanKind.SERVER for x in s))
    served = next(s for s in spans if s.kind is SpanKind.SERVER)
    assert call.end_time_unix_nano < served.end_time_unix_nano
