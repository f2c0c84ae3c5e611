"""tau2's synchronous orchestrator calling asynchronous A2A clients.

tau2 runs each simulation in a worker thread and asks its agent for the next message with a
blocking call. The bridge owns one event loop in a daemon thread and, on it, one
:class:`~coordbench.a2a.Messenger` (one HTTP connection pool) per endpoint and credentials,
reused by every turn of every task. Each call measures its HTTP exchanges through httpx event
hooks and runs in the caller's OpenTelemetry context, so the A2A spans of every turn join the
run's trace whichever thread asked.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import httpx
from a2a.types import Part
from opentelemetry import context as otel_context

from coordbench.a2a import Messenger, Reply
from coordbench.tau2.config import A2AConfig
from coordbench.tau2.metrics import RequestMetrics

__all__ = ["BRIDGE", "A2ABridge"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_CURRENT: contextvars.ContextVar[RequestMetrics | None] = contextvars.ContextVar("coordbench_tau2_call", default=None)


async def _on_request(request: httpx.Request) -> None:
    metrics = _CURRENT.get()
    if metrics is not None:
        metrics.request_bytes += len(request.content)


async def _on_response(response: httpx.Response) -> None:
    metrics = _CURRENT.get()
    if metrics is not None:
        await response.aread()
        metrics.response_bytes += len(response.content)
        metrics.http_status = response.status_code


def _key(config: A2AConfig) -> tuple[str, str | None, float, bool]:
    return (config.endpoint, config.token, config.timeout, config.verify_tls)


class A2ABridge:
    """Blocking A2A calls for tau2's worker threads, on one shared event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._messengers: dict[tuple[str, str | None, float, bool], Messenger] = {}

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="coordbench-tau2-a2a", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._running_loop()).result()

    def _messenger(self, config: A2AConfig) -> Messenger:
        messenger = self._messengers.get(_key(config))
        if messenger is None:
            messenger = self._messengers[_key(config)] = Messenger(
                timeout=config.timeout,
                token=config.token,
                streaming=False,
                verify_tls=config.verify_tls,
                event_hooks={"request": [_on_request], "response": [_on_response]},
            )
        return messenger

    def agent_name(self, config: A2AConfig) -> str:
        """Read the agent's card (once per endpoint) and return its name.

        Raises:
            AgentCallError: The card is missing or invalid, or the agent is unreachable.
        """

        async def read() -> str:
            return await self._messenger(config).agent_name(config.endpoint)

        return self._run(read())

    def send(self, config: A2AConfig, parts: Sequence[Part], context_id: str, metrics: RequestMetrics) -> Reply:
        """Send one turn and wait for the reply; ``metrics`` gets its latency, bytes and status.

        Raises:
            AgentCallError: The call failed (its ``kind`` says how).
        """
        parent = otel_context.get_current()

        async def call() -> Reply:
            token = otel_context.attach(parent)
            _CURRENT.set(metrics)
            started = time.perf_counter()
            try:
                return await self._messenger(config).send(config.endpoint, parts=parts, context_id=context_id)
            finally:
                metrics.latency_ms = round((time.perf_counter() - started) * 1e3, 3)
                otel_context.detach(token)

        return self._run(call())

    def close(self) -> None:
        """Close every client and stop the loop (a later call starts a new one)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
            messengers, self._messengers = list(self._messengers.values()), {}
        if loop is None or loop.is_closed():
            return

        async def close_all() -> None:
            for messenger in messengers:
                await messenger.close()

        asyncio.run_coroutine_threadsafe(close_all(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()


BRIDGE = A2ABridge()
"""The process's bridge, shared by every ``a2a_agent``."""
