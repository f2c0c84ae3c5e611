"""Read API over the trace store: one trace with its completeness, a paged listing, counters.

A trace is decoded and serialised on a worker thread, from a copy of its spans taken on the
event loop: a 100k-span trace takes seconds to render, and the receivers share that loop.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import StreamingResponse

from coordbench.errors import CoordbenchError
from coordbench.server.peers import from_peers
from coordbench.server.state import backend_of
from coordbench.spans import span_to_dict
from coordbench.store.base import SpanStore, TraceSnapshot

__all__ = ["router"]

router = APIRouter()


def _store(request: Request) -> SpanStore:
    return backend_of(request.app).store


_SPANS_PER_CHUNK = 500


def _render(snapshot: TraceSnapshot) -> list[bytes]:
    """The JSON document in chunks of a few hundred spans.

    Empties ``snapshot.spans`` as it goes.

    Span by span and chunk by chunk, because a single C call holds the GIL until it returns:
    one ``json.dumps`` of a 100k-span trace (55 MB) froze the event loop, and with it the
    receivers, for most of a second; so did joining and sending it as one piece.
    """
    dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
    head = dumps({"trace_id": snapshot.trace_id, "completeness": dataclasses.asdict(snapshot.completeness)})
    chunks = [f'{head[:-1]},"spans":['.encode()]
    spans = snapshot.spans  # consumed as it is rendered: freeing 100k decoded spans in one go holds the GIL ~100 ms
    first = True
    while spans:
        part = spans[:_SPANS_PER_CHUNK]
        del spans[:_SPANS_PER_CHUNK]
        body = ",".join([dumps(span_to_dict(s)) for s in part])
        chunks.append((body if first else "," + body).encode())
        first = False
        del part
    chunks.append(b"]}")
    return chunks


async def _stream(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


@router.get(
    "/v1/traces/{trace_id}",
    summary="One trace: spans and completeness",
    response_class=Response,
    responses={200: {"content": {"application/json": {}}}},
)
async def get_trace(
    request: Request,
    trace_id: str,
    wait: Annotated[
        float, Query(ge=0, le=600, description="Wait up to this many seconds for the trace to complete")
    ] = 0,
    quiet: Annotated[float, Query(ge=0, le=600, description="With wait: seconds without new spans that end it")] = 2.0,
) -> Response:
    """The spans of a trace (by start time) and its completeness report (asked of ``--peer`` receivers if not held)."""
    store = _store(request)
    if trace_id.strip().lower() not in store and not store.blocking_reads:
        answer = await from_peers(request, backend_of(request.app).settings.peers, wait)
        if answer is not None:
            return answer
    try:
        if wait:
            waited = await store.wait_complete(trace_id, quiet=quiet, timeout=wait)
            build: Callable[[], TraceSnapshot] | None = (lambda: waited) if waited.spans else None
        else:
            build = store.snapshot_builder(trace_id)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    except CoordbenchError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": "5"}) from exc
    if build is None:
        raise HTTPException(404, f"trace {trace_id.lower()} not found")
    # Built, rendered and freed on the worker thread: freeing 100k decoded spans alone holds
    # the GIL for ~100 ms, which must not happen on the event loop.
    try:
        snapshot = await anyio.to_thread.run_sync(build)
    except CoordbenchError as exc:  # a store that reads elsewhere (ClickHouse) and could not
        raise HTTPException(503, str(exc), headers={"Retry-After": "5"}) from exc
    if not snapshot.spans:  # a store that must read to know (ClickHouse) found nothing
        raise HTTPException(404, f"trace {trace_id.lower()} not found")
    chunks = await anyio.to_thread.run_sync(lambda: _render(snapshot))
    if len(chunks) <= 3:  # small enough to send whole, with a Content-Length
        return Response(b"".join(chunks), media_type="application/json")
    return StreamingResponse(_stream(chunks), media_type="application/json")


@router.get("/v1/traces", summary="Traces, newest first, paged")
async def list_traces(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Annotated[str | None, Query(description="The 'next' value of the previous page")] = None,
) -> dict[str, Any]:
    """A page of trace summaries and the cursor of the next page."""
    store = _store(request)
    try:
        if store.blocking_reads:
            page, after = await anyio.to_thread.run_sync(lambda: store.list_traces(limit=limit, cursor=cursor))
        else:
            page, after = store.list_traces(limit=limit, cursor=cursor)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    except CoordbenchError as exc:
        raise HTTPException(503, str(exc), headers={"Retry-After": "5"}) from exc
    return {"traces": [dataclasses.asdict(t) for t in page], "next": after}


@router.get("/v1/stats", summary="Span counters")
async def stats(request: Request) -> dict[str, Any]:
    """``received`` / ``stored`` / ``duplicates`` / ``rejected`` / ``evicted``, what is held now, and more.

    Other parts of the app add sections through the backend's ``stats_sections`` (online
    evaluation adds ``evaluations``).
    """
    backend = backend_of(request.app)
    document: dict[str, Any] = dataclasses.asdict(backend.store.stats)
    for name, section in backend.stats_sections.items():
        document[name] = section()
    return document
