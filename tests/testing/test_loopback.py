"""LoopbackServer and AnnouncingServer: start and failure are events, never polls or clocks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from coordbench.testing import LoopbackServer


def _app(_url: str) -> Starlette:
    return Starlette(routes=[Route("/", lambda request: PlainTextResponse("up"))])


def test_start_returns_once_it_serves() -> None:
    with LoopbackServer(_app, startup_timeout=3600) as url:  # a guard: start returns on the event
        assert httpx.get(url, timeout=30).text == "up"


def test_a_failed_startup_is_reported_at_once_not_after_the_guard() -> None:
    @asynccontextmanager
    async def broken(_app: Starlette) -> AsyncIterator[None]:
        raise RuntimeError("the store cannot open")
        yield  # pragma: no cover

    def app(_url: str) -> Starlette:
        return Starlette(lifespan=broken)

    server = LoopbackServer(app, startup_timeout=3600)  # were it waiting on a clock, this would take an hour
    with pytest.raises(RuntimeError, match="uvicorn did not start on http"):
        server.start()
    server.stop()
