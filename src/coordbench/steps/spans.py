"""Steps to and from spans: every span coordbench emits converts into a Step and back.

A span converts into a Step without losing its name, kind, times, status, attributes or
service, and a Step converts back into an equal span (events and links aside), so agents that
report Steps instead of spans (``POST /traces``) feed the same pipeline.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, cast

from coordbench import jsontext, semconv
from coordbench.errors import StepFormatError
from coordbench.spans import AttributeValue, SpanData, SpanKind, StatusCode
from coordbench.steps.document import response_trace_from_dict, response_trace_to_dict
from coordbench.steps.model import AgentInvocation, CallType, ResponseTrace, Step, StepAction, ToolInvocation

__all__ = ["call_type_of", "span_from_step", "step_from_span"]


# --- span -> Step ------------------------------------------------------------------------

_CONSUMED_ATTRIBUTES = frozenset(
    {
        semconv.A2A_STEP_ID,
        semconv.A2A_STEP_PARENT_ID,
        semconv.A2A_CALL_TYPE,
        semconv.A2A_STEP_COST,
        semconv.A2A_RESPONSE_TRACE,
    }
)
_SPAN_KIND_KEY = "span.kind"


def call_type_of(span: SpanData) -> CallType:
    """The call type of a span.

    The explicit ``a2a.step.call_type`` attribute wins. Otherwise ``gen_ai.operation.name``
    decides (``invoke_agent`` → AGENT; tool and model operations → TOOL;
    ``invoke_workflow`` → HOST); then an A2A method on the span means AGENT; anything else
    is the agent's own orchestration, HOST.

    Args:
        span: The span.

    Returns:
        The call type.
    """
    explicit = span.attributes.get(semconv.A2A_CALL_TYPE)
    if isinstance(explicit, str) and explicit in CallType.__members__:
        return CallType(explicit)
    operation = span.attributes.get(semconv.GEN_AI_OPERATION_NAME)
    if operation == semconv.OPERATION_INVOKE_AGENT:
        return CallType.AGENT
    if operation in semconv.TOOL_OPERATIONS:
        return CallType.TOOL
    if operation == semconv.OPERATION_INVOKE_WORKFLOW:
        return CallType.HOST
    if semconv.A2A_METHOD in span.attributes:
        return CallType.AGENT
    return CallType.HOST


def _int_attr(span: SpanData, key: str) -> int | None:
    value = span.attributes.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _response_trace_attribute(span: SpanData) -> ResponseTrace | None:
    raw = span.attribute_str(semconv.A2A_RESPONSE_TRACE)
    if raw is None:
        return None
    try:
        return response_trace_from_dict(jsontext.loads(raw), path=semconv.A2A_RESPONSE_TRACE)
    except (ValueError, StepFormatError):
        return None  # a malformed report from a callee is not the span's fault; the span still converts


def step_from_span(span: SpanData) -> Step:
    """Convert a span into a Step, keeping everything the span says.

    Span attributes land in ``additional_attributes`` (except the ``a2a.step.*`` ones that
    become Step fields), together with ``span.kind`` and the resource's ``service.name``.
    Span events and links are not carried.

    Args:
        span: The span.

    Returns:
        The Step; :func:`span_from_step` turns it back into an equal span (events aside).
    """
    attrs = span.attributes
    call_type = call_type_of(span)
    action: StepAction | None = None
    if call_type is CallType.AGENT:
        action = AgentInvocation(
            agent_url=span.attribute_str(semconv.A2A_AGENT_URL),
            agent_name=span.attribute_str(semconv.GEN_AI_AGENT_NAME),
            response_trace=_response_trace_attribute(span),
        )
    elif call_type is CallType.TOOL:
        raw_params = span.attribute_str(semconv.A2A_TOOL_PARAMETERS)
        params: Mapping[str, Any] | None = None
        if raw_params is not None:
            try:
                loaded = jsontext.loads(raw_params)
            except ValueError:
                loaded = None
            params = cast("dict[str, Any]", loaded) if isinstance(loaded, dict) else None
        action = ToolInvocation(tool_name=span.attribute_str(semconv.GEN_AI_TOOL_NAME) or span.name, parameters=params)
    input_tokens = _int_attr(span, semconv.GEN_AI_USAGE_INPUT_TOKENS)
    output_tokens = _int_attr(span, semconv.GEN_AI_USAGE_OUTPUT_TOKENS)
    total = None if input_tokens is None and output_tokens is None else (input_tokens or 0) + (output_tokens or 0)
    cost = attrs.get(semconv.A2A_STEP_COST)
    error: str | None = None
    if span.status_code is StatusCode.ERROR:
        error = span.status_message or span.attribute_str(semconv.ERROR_TYPE) or "error"
    additional: dict[str, AttributeValue] = {k: v for k, v in attrs.items() if k not in _CONSUMED_ATTRIBUTES}
    additional[_SPAN_KIND_KEY] = span.kind.name
    if span.service_name is not None:
        additional[semconv.SERVICE_NAME] = span.service_name
    return Step(
        step_id=span.attribute_str(semconv.A2A_STEP_ID) or span.span_id,
        trace_id=span.trace_id,
        call_type=call_type,
        parent_step_id=span.attribute_str(semconv.A2A_STEP_PARENT_ID) or span.parent_span_id,
        name=span.name,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        error=error,
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        total_tokens=total,
        step_action=action,
        additional_attributes=additional,
    )


# --- Step -> span ------------------------------------------------------------------------

_HEX16 = re.compile(r"[0-9a-f]{16}")
_HEX32 = re.compile(r"[0-9a-f]{32}")


def _hex_id(value: str, width: int) -> str:
    """``value`` if it already is a W3C id of ``width`` hex digits, else a stable hash of it."""
    pattern = _HEX16 if width == 16 else _HEX32
    if pattern.fullmatch(value) and value != "0" * width:
        return value
    return hashlib.sha256(value.encode()).hexdigest()[:width]


def span_from_step(step: Step, *, resource: Mapping[str, AttributeValue] | None = None) -> SpanData:
    """Turn a Step into a span, so Step reports feed the span pipeline.

    Step ids that are not W3C ids (the extension's sample uses ``step-<uuid>``) are mapped
    to stable 16/32-hex-digit ids by hashing, and the original ids are kept in
    ``a2a.step.id`` / ``a2a.step.parent_id`` so :func:`step_from_span` restores them.

    Args:
        step: The step.
        resource: Resource attributes for the span; ``service.name`` defaults to the
            step's ``service.name`` attribute.

    Returns:
        The span. A step without times gets zero times.
    """
    additional = dict(step.additional_attributes)
    kind_name = additional.pop(_SPAN_KIND_KEY, None)
    service = additional.pop(semconv.SERVICE_NAME, None)
    attrs: dict[str, AttributeValue] = {}
    action = step.step_action
    if isinstance(action, AgentInvocation):
        attrs[semconv.GEN_AI_OPERATION_NAME] = semconv.OPERATION_INVOKE_AGENT
        if action.agent_name:
            attrs[semconv.GEN_AI_AGENT_NAME] = action.agent_name
        if action.agent_url:
            attrs[semconv.A2A_AGENT_URL] = action.agent_url
        if action.response_trace is not None:
            attrs[semconv.A2A_RESPONSE_TRACE] = json.dumps(
                response_trace_to_dict(action.response_trace), separators=(",", ":"), sort_keys=True
            )
    elif isinstance(action, ToolInvocation):
        attrs[semconv.GEN_AI_OPERATION_NAME] = semconv.OPERATION_EXECUTE_TOOL
        attrs[semconv.GEN_AI_TOOL_NAME] = action.tool_name
        if action.parameters is not None:
            attrs[semconv.A2A_TOOL_PARAMETERS] = json.dumps(action.parameters, sort_keys=True)
    attrs.update(additional)
    attrs[semconv.A2A_CALL_TYPE] = step.call_type.value
    if step.cost is not None:
        attrs[semconv.A2A_STEP_COST] = step.cost
    span_id = _hex_id(step.step_id, 16)
    if span_id != step.step_id:
        attrs[semconv.A2A_STEP_ID] = step.step_id
    parent_span_id = None if step.parent_step_id is None else _hex_id(step.parent_step_id, 16)
    if step.parent_step_id is not None and parent_span_id != step.parent_step_id:
        attrs[semconv.A2A_STEP_PARENT_ID] = step.parent_step_id
    res: dict[str, AttributeValue] = dict(resource or {})
    if isinstance(service, str):
        res.setdefault(semconv.SERVICE_NAME, service)
    start = step.start_time_unix_nano or 0
    end = step.end_time_unix_nano
    if end is None:
        end = start + round((step.latency or 0) * 1e6)
    kind = (
        SpanKind[kind_name]
        if isinstance(kind_name, str) and kind_name in SpanKind.__members__
        else (SpanKind.CLIENT if step.call_type is CallType.AGENT else SpanKind.INTERNAL)
    )
    return SpanData(
        trace_id=_hex_id(step.trace_id, 32),
        span_id=span_id,
        parent_span_id=parent_span_id,
        name=step.name or _default_step_name(step),
        kind=kind,
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=attrs,
        status_code=StatusCode.ERROR if step.error is not None else StatusCode.UNSET,
        status_message=step.error or "",
        resource=res,
    )


def _default_step_name(step: Step) -> str:
    action = step.step_action
    if isinstance(action, AgentInvocation):
        return f"{semconv.OPERATION_INVOKE_AGENT} {action.agent_name or action.agent_url or ''}".rstrip()
    if isinstance(action, ToolInvocation):
        return f"{semconv.OPERATION_EXECUTE_TOOL} {action.tool_name}"
    return step.call_type.value.lower()
