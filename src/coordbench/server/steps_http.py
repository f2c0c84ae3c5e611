"""``POST /traces``: traceability Steps reported as JSON, the receiver's way in for agents that report Steps, not spans.

The body is ``{"agent": name, "steps": [Step, ...]}``, a list of Steps, or one Step (the Step
shapes: :mod:`coordbench.steps`). Each Step becomes a span in the same store the OTLP routes
fill. The body is read under the same bound as an OTLP export (:func:`read_body`); what goes
wrong is raised as the domain's errors, which the app's exception handlers answer
(:func:`coordbench.server.app.mount_backend`): 400 naming every malformed field of the first
malformed Step, 413 over the size cap or for a batch larger than the whole store, 415 for a
non-JSON body, 503 with ``Retry-After`` when the store is full.
"""

from __future__ import annotations

from typing import Any, cast

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from coordbench import jsontext, semconv
from coordbench.errors import StepFormatError
from coordbench.otlp.codecs import encoded_span
from coordbench.server.otlp_http import read_body
from coordbench.server.state import backend_of
from coordbench.steps import span_from_step, step_from_dict

__all__ = ["router"]

router = APIRouter()


def _steps_of(document: Any) -> tuple[str | None, list[Any], str]:
    """The reporting agent, the raw Steps and the path errors name them by."""
    if isinstance(document, dict) and "steps" in document:
        envelope = cast("dict[str, Any]", document)
        unknown = sorted(set(envelope) - {"steps", "agent"})
        if unknown:
            raise StepFormatError(f"unknown field(s): {', '.join(unknown)} (expected 'agent' and 'steps')")
        agent = envelope.get("agent")
        if agent is not None and (not isinstance(agent, str) or not agent):
            raise StepFormatError("agent: must be a non-empty string")
        raw: Any = envelope["steps"]
        path = "steps"
    elif isinstance(document, list):
        agent, raw, path = None, cast("list[Any]", document), "steps"
    else:
        agent, raw, path = None, [cast("object", document)], "step"
    if not isinstance(raw, list) or not raw:
        raise StepFormatError(f"{path}: must be a non-empty list of Steps")
    return agent, cast("list[Any]", raw), path


@router.post("/traces", summary="Traceability Steps reported as JSON")
async def report_steps(request: Request) -> JSONResponse:
    """Store the Steps as spans; answer with what was accepted, stored and which traces they joined."""
    backend = backend_of(request.app)
    settings, store = backend.settings, backend.store
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise HTTPException(415, f"send Steps as application/json, not {content_type or 'no content type'}")
    body = await read_body(request, settings.max_body_bytes)
    try:
        document: Any = jsontext.loads(body)
    except ValueError as exc:
        raise StepFormatError(f"body is not JSON: {exc}") from exc
    agent, raw_steps, path = _steps_of(document)
    resource = {semconv.SERVICE_NAME: agent} if agent else None
    try:
        steps = [
            step_from_dict(item, path=f"{path}[{i}]" if path == "steps" else path) for i, item in enumerate(raw_steps)
        ]
        encoded = [encoded_span(span_from_step(step, resource=resource)) for step in steps]
    except StepFormatError:
        raise
    except (ValueError, OverflowError) as exc:  # a value no span can hold (an id, a time out of range)
        raise StepFormatError(str(exc)) from exc
    result = await store.add(encoded)
    return JSONResponse(
        {
            "accepted": len(encoded),
            "stored": result.stored,
            "duplicates": result.duplicates,
            "traces": sorted({s.trace_id for s in (span.decode() for span in encoded)}),
        }
    )
