"""The HTTP floor of OTLP ingest: the receiver's server stack with nothing behind it.

``python -m benchmarks.http_floor PORT`` serves ``POST /v1/traces`` on the stack the real
receiver runs on (uvicorn as ``coordbench receiver`` starts it, FastAPI, the same garbage
collector settings): it reads the whole body the way the receiver does and answers an empty
``ExportTraceServiceResponse``, decoding and storing nothing. What this process spends per
request is the part of the ingest budget no decoder or store can win back.

``python -m benchmarks.http_floor PORT --count-json`` is the naive OTLP/JSON receiver on the
same stack: it gunzips a gzip body, parses it with ``json.loads``, counts its spans (its
``/v1/stats`` says how many, as ``stored``) and keeps nothing: what a receiver that validates
and stores nothing does, the bar an OTLP/JSON receiver that stores its spans should clear.
"""

from __future__ import annotations

import gzip
import json
import sys
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from coordbench.server.app import tune_gc_for_ingest

_EMPTY = ExportTraceServiceResponse().SerializeToString()


def _span_count(document: Any) -> int:
    return sum(len(scope.get("spans") or ()) for r in document.get("resourceSpans") or () for scope in r["scopeSpans"])


def create_app(*, count_json: bool = False) -> FastAPI:
    """An app that takes OTLP bodies and drops them (``count_json``: after parsing them and counting their spans)."""
    app = FastAPI()
    counted = [0]

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:  # pyright: ignore[reportUnusedFunction]
        return {"status": "ok"}

    @app.get("/v1/stats")
    async def stats() -> dict[str, int]:  # pyright: ignore[reportUnusedFunction]
        return {"stored": counted[0]}

    @app.post("/v1/traces")
    async def traces(request: Request) -> Response:  # pyright: ignore[reportUnusedFunction]
        chunks = [chunk async for chunk in request.stream()]
        body = b"".join(chunks)
        if not count_json:
            return Response(_EMPTY, media_type="application/x-protobuf")
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        counted[0] += _span_count(json.loads(body))
        return Response(b"{}", media_type="application/json")

    return app


if __name__ == "__main__":
    tune_gc_for_ingest()
    app = create_app(count_json="--count-json" in sys.argv[2:])
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
