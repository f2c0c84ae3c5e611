"""Read API over the trace store: one trace with its completeness, a paged listing, counters."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request

from coordbench.spans import span_to_dict
from coordbench.store.memory import TraceStore

__all__ = ["router"]

router = APIRouter()


def _store(request: Request) -> TraceStore:
    return request.app.state.store


@router.get("/v1/traces/{trace_id}", summary="One trace: spans and completeness")
async def get_trace(
    request: Request,
    trace_id: str,
    wait: Annotated[
        float, Query(ge=0, le=600, description="Wait up to this many seconds for the trace to complete")
    ] = 0,
    quiet: Annotated[float, Query(ge=0, le=600, description="With wait: seconds without new spans that end it")] = 2.0,
) -> dict[str, Any]:
    """The spans of a trace (by start time) and its completeness report."""
    store = _store(request)
    try:
        snapshot = await store.wait_complete(trace_id, quiet=quiet, timeout=wait) if wait else store.get(trace_id)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    if snapshot is None or not snapshot.spans:
        raise HTTPException(404, f"trace {trace_id.lower()} not found")
    return {
        "trace_id": snapshot.trace_id,
        "completeness": dataclasses.asdict(snapshot.completeness),
        "spans": [span_to_dict(s) for s in snapshot.spans],
    }


@router.get("/v1/traces", summary="Traces, newest first, paged")
async def list_traces(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Annotated[str | None, Query(description="The 'next' value of the previous page")] = None,
) -> dict[str, Any]:
    """A page of trace summaries and the cursor of the next page."""
    try:
        page, after = _store(request).list_traces(limit=limit, cursor=cursor)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    return {"traces": [dataclasses.asdict(t) for t in page], "next": after}


@router.get("/v1/stats", summary="Span counters")
async def stats(request: Request) -> dict[str, Any]:
    """``received`` / ``stored`` / ``duplicates`` / ``rejected`` / ``evicted`` and what is held now."""
    return dataclasses.asdict(_store(request).stats)
