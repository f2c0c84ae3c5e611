"""The A2A traceability ``Step`` model and its conversions to and from spans and extension JSON.

A Step is one unit of work in a multi-agent trace, as defined by the A2A traceability
extension (``https://github.com/a2aproject/a2a-samples/extensions/traceability/v1``): an
agent invocation (AGENT), a tool or model call inside an agent (TOOL), or the host's own
orchestration (HOST). Every span coordbench emits converts into a Step without losing the
span's name, kind, times, status, attributes or service, and a Step converts back into a
span, so agents that report Steps instead of spans feed the same pipeline.

The extension JSON written here follows the extension's proto field names in snake_case
(``step_id``, ``step_action.agent_invocation``...), with times as RFC 3339 strings at
nanosecond precision and ``latency`` in milliseconds. The reader also accepts the proto3
JSON spelling (``stepId``...) and the flattened shape of the extension's Python sample
(``name``/``parameters``/``requests`` instead of ``step_action``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeAlias, cast

from coordbench import jsontext, semconv
from coordbench.errors import StepFormatError
from coordbench.spans import AttributeValue, SpanData, SpanKind, StatusCode

__all__ = [
    "MAX_TRACE_NESTING",
    "AgentInvocation",
    "CallType",
    "ResponseTrace",
    "Step",
    "StepAction",
    "ToolInvocation",
    "call_type_of",
    "format_timestamp",
    "parse_timestamp",
    "response_trace_from_dict",
    "response_trace_from_metadata",
    "response_trace_to_dict",
    "span_from_step",
    "step_from_dict",
    "step_from_span",
    "step_to_dict",
]


class CallType(StrEnum):
    """What kind of work a step is (the extension's ``CallTypeEnum``, plus HOST from its sample)."""

    AGENT = "AGENT"
    """An A2A call to another agent."""
    TOOL = "TOOL"
    """A tool, model or other call made inside an agent."""
    HOST = "HOST"
    """Orchestration by the host (for example the assessor driving a scenario)."""


_CALL_TYPE_NUMBERS = {1: CallType.AGENT, 2: CallType.TOOL, 3: CallType.HOST}


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """The action of a TOOL step: which tool, with which parameters."""

    tool_name: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AgentInvocation:
    """The action of an AGENT step: which agent was called, and the callee's own trace if it sent one."""

    agent_url: str | None = None
    agent_name: str | None = None
    requests: Mapping[str, Any] | None = None
    response_trace: ResponseTrace | None = None


StepAction: TypeAlias = ToolInvocation | AgentInvocation


@dataclass(frozen=True, slots=True)
class Step:
    """One traceability step.

    Attributes:
        step_id: Unique id of the step (the span id for steps made from spans).
        trace_id: Id of the trace the step belongs to.
        call_type: AGENT, TOOL or HOST.
        parent_step_id: Id of the parent step; ``None`` for a root step.
        name: Human-readable name (the span name).
        start_time_unix_nano: Start, nanoseconds since the Unix epoch.
        end_time_unix_nano: End, nanoseconds since the Unix epoch.
        latency: Duration in milliseconds; derived from the times when not given.
        error: Error description when the step failed, else ``None``.
        cost: Cost reported for the step, if any.
        total_tokens: Tokens used (input + output), if known.
        step_action: What the step invoked (agent or tool), if known.
        additional_attributes: Everything else the step carries.
    """

    step_id: str
    trace_id: str
    call_type: CallType
    parent_step_id: str | None = None
    name: str = ""
    start_time_unix_nano: int | None = None
    end_time_unix_nano: int | None = None
    latency: float | None = None
    error: str | None = None
    cost: float | None = None
    total_tokens: int | None = None
    step_action: StepAction | None = None
    additional_attributes: Mapping[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])

    def __post_init__(self) -> None:
        """Derive ``latency`` from the times when it was not given."""
        if self.latency is None and self.start_time_unix_nano is not None and self.end_time_unix_nano is not None:
            object.__setattr__(self, "latency", max(0, self.end_time_unix_nano - self.start_time_unix_nano) / 1e6)

    @property
    def start_time(self) -> datetime | None:
        """Start as an aware UTC datetime (microsecond precision)."""
        return _to_datetime(self.start_time_unix_nano)

    @property
    def end_time(self) -> datetime | None:
        """End as an aware UTC datetime (microsecond precision)."""
        return _to_datetime(self.end_time_unix_nano)


@dataclass(frozen=True, slots=True)
class ResponseTrace:
    """The extension's ``ResponseTrace``: the steps an agent took to answer one request."""

    trace_id: str
    steps: tuple[Step, ...] = ()


def _to_datetime(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)


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


# --- timestamps ----------------------------------------------------------------------------

_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt ](?P<time>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,9}))?"
    r"(?P<tz>[Zz]|[+-]\d{2}:\d{2})?"
)


_last_second: tuple[int, str] = (-1, "")


def format_timestamp(ns: int) -> str:
    """Format nanoseconds since the epoch as RFC 3339 UTC with nine fractional digits.

    Example:
        >>> format_timestamp(1_700_000_000_123_456_789)
        '2023-11-14T22:13:20.123456789Z'
    """
    global _last_second
    seconds, frac = divmod(ns, 1_000_000_000)
    cached_second, prefix = _last_second  # one read: another thread may replace the pair, never half of it
    if cached_second != seconds:  # instrumented agents stamp many messages per second: format the date once
        prefix = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _last_second = (seconds, prefix)
    return f"{prefix}.{frac:09d}Z"


def parse_timestamp(value: str) -> int:
    """Parse an RFC 3339 timestamp (``Z`` or offset, up to nanoseconds) into epoch nanoseconds.

    A timestamp without a zone is read as UTC.

    Raises:
        StepFormatError: If the string is not an RFC 3339 timestamp.
    """
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        raise StepFormatError(f"not an RFC 3339 timestamp: {value!r}")
    tz = match["tz"] or "Z"
    try:
        base = datetime.fromisoformat(f"{match['date']}T{match['time']}{'+00:00' if tz in 'Zz' else tz}")
    except ValueError as exc:
        raise StepFormatError(f"not an RFC 3339 timestamp: {value!r}") from exc
    frac = (match["frac"] or "").ljust(9, "0")
    return int(base.timestamp()) * 1_000_000_000 + int(frac or 0)


# --- Step <-> extension JSON --------------------------------------------------------------


def step_to_dict(step: Step) -> dict[str, Any]:
    """The Step as extension JSON (a plain dict, ready for ``json.dumps`` or message metadata).

    Fields that are ``None`` are left out; the root step has no ``parent_step_id``.
    """
    out: dict[str, Any] = {"step_id": step.step_id, "trace_id": step.trace_id, "call_type": step.call_type.value}
    if step.parent_step_id is not None:
        out["parent_step_id"] = step.parent_step_id
    if step.name:
        out["name"] = step.name
    action = step.step_action
    if isinstance(action, AgentInvocation):
        inv: dict[str, Any] = {}
        if action.agent_url is not None:
            inv["agent_url"] = action.agent_url
        if action.agent_name is not None:
            inv["agent_name"] = action.agent_name
        if action.requests is not None:
            inv["requests"] = dict(action.requests)
        if action.response_trace is not None:
            inv["response_trace"] = response_trace_to_dict(action.response_trace)
        out["step_action"] = {"agent_invocation": inv}
    elif isinstance(action, ToolInvocation):
        tool: dict[str, Any] = {"tool_name": action.tool_name}
        if action.parameters is not None:
            tool["parameters"] = dict(action.parameters)
        out["step_action"] = {"tool_invocation": tool}
    if step.cost is not None:
        out["cost"] = step.cost
    if step.total_tokens is not None:
        out["total_tokens"] = step.total_tokens
    if step.additional_attributes:
        out["additional_attributes"] = {k: _jsonable(v) for k, v in step.additional_attributes.items()}
    if step.latency is not None:
        out["latency"] = step.latency
    if step.start_time_unix_nano is not None:
        out["start_time"] = format_timestamp(step.start_time_unix_nano)
    if step.end_time_unix_nano is not None:
        out["end_time"] = format_timestamp(step.end_time_unix_nano)
    if step.error is not None:
        out["error"] = step.error
    return out


def _jsonable(value: AttributeValue) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def response_trace_to_dict(trace: ResponseTrace) -> dict[str, Any]:
    """The ResponseTrace as extension JSON."""
    return {"trace_id": trace.trace_id, "steps": [step_to_dict(s) for s in trace.steps]}


_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_LATENCY_MS = (2**64 - 1) / 1e6  # a span's times are unsigned 64-bit nanoseconds


class _Reader:
    """Reads one JSON object, accepting snake_case and lowerCamelCase keys, reporting paths."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, Mapping):
            raise StepFormatError(f"{path}: expected an object, got {type(data).__name__}")
        self.data = cast("Mapping[str, Any]", data)
        self.path = path

    def get(self, key: str) -> Any:
        if key in self.data:
            return self.data[key]
        head, *rest = key.split("_")
        return self.data.get(head + "".join(p.title() for p in rest))

    def string(self, key: str, *, required: bool = False) -> str | None:
        value = self.get(key)
        if value is None or value == "":
            if required:
                raise StepFormatError(f"{self.path}.{key}: required")
            return None
        if not isinstance(value, str):
            raise StepFormatError(f"{self.path}.{key}: expected a string, got {type(value).__name__}")
        return value

    def number(self, key: str, *, minimum: float | None = None, maximum: float | None = None) -> float | None:
        """A finite number (JSON number or numeric string), within ``minimum`` and ``maximum`` if given."""
        value = self.get(key)
        if value is None:
            return None
        number: float | None = None
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                number = float(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        if number is None:
            raise StepFormatError(f"{self.path}.{key}: expected a number, got {value!r}")
        if not math.isfinite(number):  # NaN and infinities parse, but no cost or duration is one
            raise StepFormatError(f"{self.path}.{key}: expected a finite number, got {value!r}")
        if minimum is not None and number < minimum:
            raise StepFormatError(f"{self.path}.{key}: expected a number >= {minimum:g}, got {value!r}")
        if maximum is not None and number > maximum:
            raise StepFormatError(f"{self.path}.{key}: expected a number <= {maximum:g}, got {value!r}")
        return number

    def integer(self, key: str, *, minimum: int | None = None) -> int | None:
        """A 64-bit integer (JSON number, or a decimal string as proto3 JSON writes int64), exactly."""
        value = self.get(key)
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            integer = value
        elif isinstance(value, str) and _DECIMAL.fullmatch(value):
            integer = int(value)
        else:
            number = self.number(key)
            if number is None or not number.is_integer():
                raise StepFormatError(f"{self.path}.{key}: expected an integer, got {value!r}")
            integer = int(number)
        if not _INT64_MIN <= integer <= _INT64_MAX:
            raise StepFormatError(f"{self.path}.{key}: out of the 64-bit integer range, got {value!r}")
        if minimum is not None and integer < minimum:
            raise StepFormatError(f"{self.path}.{key}: expected an integer >= {minimum}, got {value!r}")
        return integer

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise StepFormatError(f"{self.path}.{key}: expected an object, got {type(value).__name__}")
        return cast("Mapping[str, Any]", value)

    def timestamp(self, key: str) -> int | None:
        value = self.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, str):
            try:
                return parse_timestamp(value)
            except StepFormatError as exc:
                raise StepFormatError(f"{self.path}.{key}: {exc.message}") from exc
        raise StepFormatError(f"{self.path}.{key}: expected an RFC 3339 string, got {value!r}")


def _call_type(value: Any, path: str) -> CallType:
    if isinstance(value, int | float) and not isinstance(value, bool) and int(value) in _CALL_TYPE_NUMBERS:
        return _CALL_TYPE_NUMBERS[int(value)]
    if isinstance(value, str):
        name = value.upper().removeprefix("CALL_TYPE_ENUM_").removeprefix("CALL_TYPE_")
        if name in CallType.__members__:
            return CallType(name)
    raise StepFormatError(f"{path}.call_type: expected one of AGENT, TOOL, HOST, got {value!r}")


def _attributes(raw: Mapping[str, Any] | None, path: str) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for key, value in (raw or {}).items():
        out[key] = _attribute_value(value, f"{path}.additional_attributes.{key}")
    return out


def _attribute_value(value: Any, path: str) -> AttributeValue:
    if value is None or isinstance(value, str | bool | int | float):
        return cast("AttributeValue", value)
    if isinstance(value, list | tuple):
        items = cast("Sequence[Any]", value)
        return tuple(_attribute_value(v, path) for v in items)
    if isinstance(value, Mapping):
        mapping = cast("Mapping[str, Any]", value)
        return {str(k): _attribute_value(v, path) for k, v in mapping.items()}
    raise StepFormatError(f"{path}: unsupported value {value!r}")


def step_from_dict(data: object, *, path: str = "step") -> Step:
    """Read a Step from extension JSON.

    Accepts the shape :func:`step_to_dict` writes, proto3 JSON (lowerCamelCase keys,
    numeric call types) and the flattened shape of the extension's Python sample
    (``name``, ``parameters``, ``requests``, ``step_type`` at the top level).

    Args:
        data: The decoded JSON object.
        path: Where the object sits, for error messages.

    Returns:
        The Step.

    Raises:
        StepFormatError: If a field is missing or has the wrong type; the message names the field.
    """
    r = _Reader(data, path)
    call_type = _call_type(r.get("call_type"), path)
    name = r.string("name") or ""
    action: StepAction | None = None
    raw_action = r.mapping("step_action")
    additional = _attributes(r.mapping("additional_attributes"), path)
    if raw_action is not None:
        ar = _Reader(raw_action, f"{path}.step_action")
        agent, tool = ar.mapping("agent_invocation"), ar.mapping("tool_invocation")
        if agent is not None:
            action = _agent_invocation(_Reader(agent, f"{ar.path}.agent_invocation"))
        elif tool is not None:
            tr = _Reader(tool, f"{ar.path}.tool_invocation")
            action = ToolInvocation(
                tool_name=tr.string("tool_name", required=True) or "", parameters=tr.mapping("parameters")
            )
    elif call_type is CallType.TOOL and name:
        action = ToolInvocation(tool_name=name, parameters=r.mapping("parameters"))
    elif call_type is CallType.AGENT and (name or r.get("requests") is not None):
        action = AgentInvocation(agent_name=name or None, requests=r.mapping("requests"))
    step_type = r.string("step_type")
    if step_type is not None:
        additional.setdefault("step_type", step_type)
    error = r.get("error")
    if error is not None and not isinstance(error, str):
        error = json.dumps(error, sort_keys=True)
    return Step(
        step_id=r.string("step_id", required=True) or "",
        trace_id=r.string("trace_id", required=True) or "",
        call_type=call_type,
        parent_step_id=r.string("parent_step_id"),
        name=name,
        start_time_unix_nano=r.timestamp("start_time"),
        end_time_unix_nano=r.timestamp("end_time"),
        latency=r.number("latency", minimum=0, maximum=_MAX_LATENCY_MS),
        error=error or None,
        cost=r.number("cost"),
        total_tokens=r.integer("total_tokens", minimum=0),
        step_action=action,
        additional_attributes=additional,
    )


MAX_TRACE_NESTING = 64
"""Most response traces nested in one another that a Step document may hold (agent chains that deep are
unheard of; the bound keeps a hostile document from exhausting the stack)."""


def _agent_invocation(r: _Reader) -> AgentInvocation:
    raw_trace = r.get("response_trace")
    if raw_trace is not None and r.path.count(".response_trace") >= MAX_TRACE_NESTING:
        raise StepFormatError(f"{r.path}.response_trace: traces nested more than {MAX_TRACE_NESTING} deep")
    return AgentInvocation(
        agent_url=r.string("agent_url"),
        agent_name=r.string("agent_name"),
        requests=r.mapping("requests"),
        response_trace=None
        if raw_trace is None
        else response_trace_from_dict(raw_trace, path=f"{r.path}.response_trace"),
    )


def response_trace_from_dict(data: object, *, path: str = "response_trace") -> ResponseTrace:
    """Read a ResponseTrace (``{"trace_id": ..., "steps": [...]}``) from extension JSON.

    Raises:
        StepFormatError: If the object or one of its steps is malformed.
    """
    r = _Reader(data, path)
    raw_steps = r.get("steps")
    if raw_steps is None:
        raw_steps = []
    if not isinstance(raw_steps, list):
        raise StepFormatError(f"{path}.steps: expected a list, got {type(raw_steps).__name__}")
    items = cast("list[Any]", raw_steps)
    steps = tuple(step_from_dict(s, path=f"{path}.steps[{i}]") for i, s in enumerate(items))
    trace_id = r.string("trace_id") or (steps[0].trace_id if steps else None)
    if trace_id is None:
        raise StepFormatError(f"{path}.trace_id: required")
    return ResponseTrace(trace_id=trace_id, steps=steps)


def response_trace_from_metadata(metadata: Mapping[str, Any]) -> ResponseTrace | None:
    """The ResponseTrace carried in A2A message/artifact/status metadata, if any.

    Args:
        metadata: The metadata as a plain dict (``MessageToDict`` of the Struct).

    Returns:
        The trace, or ``None`` when the metadata carries no traceability key.

    Raises:
        StepFormatError: If the key is present but its value is malformed.
    """
    raw = metadata.get(semconv.TRACEABILITY_METADATA_KEY)
    if raw is None:
        return None
    return response_trace_from_dict(raw, path=semconv.TRACEABILITY_METADATA_KEY)
