"""Serving test agents as processes: a free loopback port, and ``READY <url>`` once a server serves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import uvicorn

from coordbench.server.loopback import bind_loopback


def free_port() -> int:
    """A 127.0.0.1 port free now, for a process that binds it itself (another may take it in between: rare)."""
    sock = bind_loopback()
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def serve_announced(app_for: Callable[[str], Any]) -> None:
    """Build the app for its URL, serve it on a free 127.0.0.1 port and print ``READY <url>`` when it serves."""
    sock = bind_loopback()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(app_for(url), log_level="warning"))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes only a flag
            await asyncio.sleep(0.01)
        print(f"READY {url}", flush=True)
        await task

    asyncio.run(serve())
