"""The HTTP floor of OTLP ingest: the receiver's server stack with nothing behind it.

``python -m benchmarks.http_floor PORT`` serves ``POST /v1/traces`` on the stack the real
receiver runs on (uvicorn as ``coordbench receiver`` starts it, FastAPI, the same garbage
collector settings): it reads the whole body the way the receiver does and answers an empty
``ExportTraceServiceResponse``, decoding and storing nothing. What this process spends per
request is the part of the ingest budget no decoder or store can win back.
"""

from __future__ import annotations

import sys

import uvicorn
from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from coordbench.backend import tune_gc_for_ingest

_EMPTY = ExportTraceServiceResponse().SerializeToString()


def create_app() -> FastAPI:
    """An app that takes OTLP bodies and drops them."""
    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:  # pyright: ignore[reportUnusedFunction]
        return {"status": "ok"}

    @app.post("/v1/traces")
    async def traces(request: Request) -> Response:  # pyright: ignore[reportUnusedFunction]
        chunks = [chunk async for chunk in request.stream()]
        b"".join(chunks)
        return Response(_EMPTY, media_type="application/x-protobuf")

    return app


if __name__ == "__main__":
    tune_gc_for_ingest()
    uvicorn.run(create_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
