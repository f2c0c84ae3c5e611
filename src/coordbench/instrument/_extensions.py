"""Serving the two extensions a traced agent declares: traceability and timestamps.

- **Traceability**: when a caller asks for it (``A2A-Extensions``), the agent answers with the
  steps it took (its tool, model and agent calls, as traceability Steps) in the metadata of
  its final response, under ``github.com/a2aproject/a2a-samples/extensions/traceability/v1/traceability``.
  A callee's own trace nests under the AGENT step that called it. On the caller's side, a
  ResponseTrace found in a response is kept on the CLIENT span (``a2a.response_trace``) and its
  costs are summed into ``a2a.step.cost``, so agents that report Steps instead of exporting
  spans still reach the backend.
- **Timestamps**: when asked for, messages and artifacts in the response get their RFC 3339
  creation time in metadata (stamped as they leave the agent, unless the agent set one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from a2a.types import Artifact, Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Span

from coordbench import semconv
from coordbench.instrument._state import CURRENT_SERVER_CALL, ServerCall
from coordbench.spans import span_data_from_readable
from coordbench.steps import (
    ResponseTrace,
    format_timestamp,
    response_trace_from_metadata,
    response_trace_to_dict,
    step_from_span,
)

__all__ = [
    "MAX_RESPONSE_TRACE_BYTES",
    "attach_response_trace",
    "read_response_trace",
    "record_step",
    "stamp_timestamps",
    "total_cost",
]

MAX_RESPONSE_TRACE_BYTES = 64 * 1024
"""Larger callee traces are not copied onto the caller's span (their cost is still summed)."""


def record_step(span: Span) -> None:
    """Add a finished span of ours to the steps of the request being served, if its caller asked for them."""
    call = CURRENT_SERVER_CALL.get()
    if call is None or not call.collect_steps or not isinstance(span, ReadableSpan):
        return
    call.steps.append(step_from_span(span_data_from_readable(span)))


def response_trace_for(call: ServerCall) -> ResponseTrace:
    """The steps the agent has finished so far for this request."""
    trace_id = format(call.span.get_span_context().trace_id, "032x")
    return ResponseTrace(trace_id=trace_id, steps=tuple(call.steps))


_HOLDER_TYPES = (Message, Task, TaskStatusUpdateEvent)


def _metadata_holders(event: Any) -> list[Any]:
    return [event] if isinstance(event, _HOLDER_TYPES) else []


def attach_response_trace(event: Any, trace: ResponseTrace) -> None:
    """Put ``trace`` in the metadata of a final response (Message, Task or status update)."""
    value = response_trace_to_dict(trace)
    for holder in _metadata_holders(event):
        holder.metadata.update({semconv.TRACEABILITY_METADATA_KEY: value})
        if isinstance(holder, Message) and semconv.TRACEABILITY_EXTENSION_URI not in holder.extensions:
            holder.extensions.append(semconv.TRACEABILITY_EXTENSION_URI)


def read_response_trace(event: Any) -> ResponseTrace | None:
    """The ResponseTrace a response carries, if any (Task, Message, status or artifact update)."""
    holders: list[Any] = _metadata_holders(event)
    if isinstance(event, Task | TaskStatusUpdateEvent) and event.status.HasField("message"):
        holders.append(event.status.message)
    key = semconv.TRACEABILITY_METADATA_KEY
    for holder in holders:
        fields = holder.metadata.fields
        if key in fields:
            return response_trace_from_metadata({key: MessageToDict(fields[key])})
    return None


def total_cost(trace: ResponseTrace) -> float | None:
    """The cost of everything in ``trace``: the sum of its steps' costs (``None`` if none reports one).

    An AGENT step's cost already covers the trace nested under it, so only top-level steps count.
    """
    costs = [s.cost for s in trace.steps if s.cost is not None]
    return sum(costs) if costs else None


def response_trace_json(trace: ResponseTrace) -> str | None:
    """The trace as compact JSON for a span attribute, or ``None`` when over the size cap."""
    text = json.dumps(response_trace_to_dict(trace), separators=(",", ":"), sort_keys=True)
    return text if len(text) <= MAX_RESPONSE_TRACE_BYTES else None


_TIMESTAMP_KEY = semconv.TIMESTAMP_METADATA_KEY
_TIMESTAMP_KEYS = semconv.TIMESTAMP_METADATA_KEYS


def _stamp(holders: Iterable[Message | Artifact]) -> None:
    now = ""  # formatted on first need: most events (status updates without a message) have nothing to stamp
    for holder in holders:
        fields = holder.metadata.fields
        for key in _TIMESTAMP_KEYS:
            if key in fields:
                break
        else:
            if not now:
                now = format_timestamp(time.time_ns())
            # the map entry directly: ``Struct.update`` is Python-level and several times slower
            fields[_TIMESTAMP_KEY].string_value = now


def stamp_timestamps(event: Any) -> None:
    """Stamp the messages and artifacts of a response event with the current time (RFC 3339), one time per event."""
    if isinstance(event, Message):
        _stamp((event,))
    elif isinstance(event, TaskArtifactUpdateEvent):
        _stamp((event.artifact,))
    elif isinstance(event, Task):
        if event.status.HasField("message"):
            _stamp([*event.artifacts, event.status.message])
        elif event.artifacts:
            _stamp(event.artifacts)
    elif isinstance(event, TaskStatusUpdateEvent) and event.status.HasField("message"):
        _stamp((event.status.message,))
