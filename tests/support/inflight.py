"""Holding a receiver's only decoding slot, with a body that does not finish until the test lets it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx


@asynccontextmanager
async def decoding_slot_held(client: httpx.AsyncClient, url: str) -> AsyncIterator[asyncio.Task[httpx.Response]]:
    """Inside the block an OTLP/HTTP export holds the receiver's decoding slot (``max_inflight=1``).

    Yields the export's task; on leaving, its body ends (one byte: a truncated message, answered 400).
    """
    release = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield b"\x0a"
        await release.wait()
        yield b""

    first = asyncio.create_task(
        client.post(f"{url}/v1/traces", content=slow_body(), headers={"Content-Type": "application/x-protobuf"})
    )
    deadline = time.monotonic() + 10
    while "coordbench_exports_inflight 1" not in (await client.get(f"{url}/metrics")).text:
        assert time.monotonic() < deadline, "the export never took the decoding slot"
        await asyncio.sleep(0.01)  # polling a condition, with a deadline
    try:
        yield first
    finally:
        release.set()
