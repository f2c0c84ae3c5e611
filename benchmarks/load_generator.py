"""Load generator process: POST prepared bodies to a receiver over keep-alive connections.

``python benchmarks/load_generator.py URL BODIES_FILE CONTENT_TYPE ENCODING CONNECTIONS``
prints JSON: requests, seconds (first request to last response), statuses. A ``grpc://HOST:PORT``
URL sends each (protobuf) body as one OTLP/gRPC ``TraceService/Export`` call instead, over
CONNECTIONS channels; statuses are then gRPC status names.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import sys
import time
from collections import Counter

import grpc
import httpx

_EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


async def grpc_main(target: str, bodies: list[bytes], connections: int) -> None:
    statuses: Counter[str] = Counter()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    options = [("grpc.max_send_message_length", 64 << 20)]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(connections)]
    try:
        for channel in channels:
            await channel.channel_ready()

        async def worker(channel: grpc.aio.Channel) -> None:
            export = channel.unary_unary(_EXPORT)  # bytes in, bytes out: the bodies are encoded already
            while not queue.empty():
                body = queue.get_nowait()
                try:
                    await export(body, timeout=120)
                    statuses["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    statuses[exc.code().name] += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(channel) for channel in channels))
        elapsed = time.perf_counter() - started
    finally:
        for channel in channels:
            await channel.close()
    print(json.dumps({"requests": len(bodies), "seconds": elapsed, "statuses": dict(statuses)}))


async def main(url: str, bodies_file: str, content_type: str, encoding: str, connections: int) -> None:
    with open(bodies_file, "rb") as handle:  # noqa: ASYNC230 - read once before the clock starts
        bodies: list[bytes] = pickle.load(handle)  # noqa: S301 - our own file
    if url.startswith("grpc://"):
        await grpc_main(url.removeprefix("grpc://"), bodies, connections)
        return
    headers = {"Content-Type": content_type}
    if encoding:
        headers["Content-Encoding"] = encoding
    statuses: Counter[int] = Counter()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        await client.get(url.replace("/v1/traces", "/healthz"))

        async def worker() -> None:
            while not queue.empty():
                body = queue.get_nowait()
                response = await client.post(url, content=body, headers=headers)
                statuses[response.status_code] += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        elapsed = time.perf_counter() - started
    print(json.dumps({"requests": len(bodies), "seconds": elapsed, "statuses": dict(statuses)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
