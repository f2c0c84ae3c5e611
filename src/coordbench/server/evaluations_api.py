"""Read API over online evaluations: ``GET /v1/evaluations`` and ``GET /v1/traces/{id}/evaluation``."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from starlette.applications import Starlette

from coordbench.online.evaluator import OnlineEvaluator
from coordbench.server.peers import from_peers
from coordbench.server.state import backend_of

__all__ = ["parse_since", "router"]

router = APIRouter()

_OFF = "online evaluation is off: start the receiver with --evaluate (COORDBENCH_EVALUATE=true)"


def evaluator_of(app: Starlette) -> OnlineEvaluator | None:
    """The online evaluator of ``app`` (``None``: online evaluation is off)."""
    evaluator: object = getattr(app.state, "evaluator", None)
    return evaluator if isinstance(evaluator, OnlineEvaluator) else None


def _evaluator(request: Request) -> OnlineEvaluator:
    evaluator = evaluator_of(request.app)
    if evaluator is None:
        raise HTTPException(404, _OFF)
    return evaluator


def parse_since(value: str) -> int:
    """``since`` as Unix nanoseconds: Unix seconds (``1764170000.5``) or an RFC 3339 time with its offset.

    Raises:
        ValueError: Saying which forms are accepted.
    """
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        if not math.isfinite(seconds) or not 0 <= seconds < 1e11:
            raise ValueError(f"since {value[:64]!r} is out of range (Unix seconds from 0 to 10^11)")
        return int(seconds * 1_000_000_000)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00")) if len(text) <= 64 else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ValueError(
            f"since {value[:64]!r} is neither Unix seconds nor an RFC 3339 time with an offset (2026-11-26T18:00:00Z)"
        )
    return max(0, int(moment.timestamp() * 1_000_000_000))


@router.get("/v1/evaluations", summary="Online evaluations, newest first")
async def list_evaluations(
    request: Request,
    team: Annotated[str | None, Query(max_length=255, description="Only this team's traces")] = None,
    since: Annotated[
        str | None, Query(max_length=64, description="Evaluated at or after: Unix seconds or RFC 3339")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """The newest evaluations (each trace's latest), without their full results; the counters."""
    evaluator = _evaluator(request)
    try:
        since_ns = None if since is None else parse_since(since)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    records = evaluator.log.newest(team=team, since_unix_nano=since_ns, limit=limit)
    return {"evaluations": [r.head() for r in records], "stats": evaluator.describe()}


@router.get(
    "/v1/traces/{trace_id}/evaluation",
    summary="A trace's online evaluation",
    response_class=Response,
    responses={200: {"content": {"application/json": {}}}},
)
async def get_evaluation(
    request: Request,
    trace_id: str,
    wait: Annotated[float, Query(ge=0, le=600, description="Wait up to this many seconds for the evaluation")] = 0,
    revision: Annotated[int, Query(ge=1, le=2, description="With wait: wait for at least this revision")] = 1,
) -> Response:
    """The trace's latest evaluation: its record, with ``evaluation`` being ``coordbench evaluate``'s line."""
    evaluator = _evaluator(request)
    key = trace_id.strip().lower()
    if len(key) != 32 or any(c not in "0123456789abcdef" for c in key):
        raise HTTPException(400, f"trace id must be 32 hex digits, got {trace_id[:80]!r}")

    def ready() -> bool:
        record = evaluator.log.get(key)
        return record is not None and record.revision >= revision

    if evaluator.log.get(key) is None and key not in evaluator.store:
        answer = await from_peers(
            request, backend_of(request.app).settings.peers, wait
        )  # behind a load balancer another receiver may hold it
        if answer is not None:
            return answer

    if wait:
        await evaluator.wait_for(ready, wait)
    record = evaluator.log.get(key)
    if record is None:
        held = key in evaluator.store
        why = (
            "is held but not evaluated yet (it is evaluated once quiet and complete, if it has A2A calls)"
            if held
            else "is not held and has no evaluation"
        )
        raise HTTPException(404, f"trace {key} {why}")
    return Response(record.to_json(), media_type="application/json")
