"""The traceability extension's JSON shapes of a Step and a ResponseTrace, as pydantic models.

What is written follows the extension's proto field names in snake_case (``step_id``,
``step_action.agent_invocation``...), with times as RFC 3339 strings at nanosecond precision
and ``latency`` in milliseconds. What is read may also use the proto3 JSON spelling
(``stepId``..., numeric call types, 64-bit integers as decimal strings) or the flattened
shape of the extension's Python sample (``name``/``parameters``/``requests``/``step_type`` at
the top level instead of ``step_action``).

A document that does not fit is refused with a :class:`~coordbench.errors.StepFormatError`
naming every field at fault by its path (``steps[2].step_action.tool_invocation.tool_name:
required``); the messages are the receiver's 400 answers, so they say what was expected and
what came.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, TypeVar, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    ValidationError,
    field_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from coordbench import semconv
from coordbench.errors import StepFormatError
from coordbench.spans import AttributeValue
from coordbench.steps.model import AgentInvocation, CallType, ResponseTrace, Step, StepAction, ToolInvocation
from coordbench.steps.timestamps import format_timestamp, parse_timestamp

__all__ = [
    "MAX_TRACE_NESTING",
    "AgentInvocationDocument",
    "ResponseTraceDocument",
    "StepActionDocument",
    "StepDocument",
    "ToolInvocationDocument",
    "response_trace_from_dict",
    "response_trace_from_metadata",
    "response_trace_to_dict",
    "step_from_dict",
    "step_to_dict",
]

MAX_TRACE_NESTING = 64
"""Most response traces nested in one another that a Step document may hold (agent chains that deep are
unheard of; the bound keeps a hostile document from exhausting the stack)."""

_ERROR = "step_format"
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_LATENCY_MS = (2**64 - 1) / 1e6  # a span's times are unsigned 64-bit nanoseconds
_CALL_TYPE_NUMBERS = {1: CallType.AGENT, 2: CallType.TOOL, 3: CallType.HOST}


def _refuse(expected: str, got: object) -> PydanticCustomError:
    """The error a field validator raises: what was expected, and ``repr`` of what came."""
    return PydanticCustomError(_ERROR, "expected {expected}, got {got}", {"expected": expected, "got": repr(got)})


# --- field types: each reads the value JSON gives, or refuses it saying what it expected --------


def _text(value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PydanticCustomError(_ERROR, "expected a string, got {got}", {"got": type(value).__name__})
    return value


def _required_text(value: object) -> str:
    text = _text(value)
    if text is None:
        raise PydanticCustomError(_ERROR, "required")
    return text


def _finite(value: object) -> float | None:
    """A finite number: a JSON number or a numeric string (NaN and infinities parse, but no cost or duration is one)."""
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    if number is None:
        raise _refuse("a number", value)
    if not math.isfinite(number):
        raise _refuse("a finite number", value)
    return number


def _bounded(minimum: float, maximum: float) -> Callable[[object], float | None]:
    def check(value: object) -> float | None:
        number = _finite(value)
        if number is not None and number < minimum:
            raise _refuse(f"a number >= {minimum:g}", value)
        if number is not None and number > maximum:
            raise _refuse(f"a number <= {maximum:g}", value)
        return number

    return check


def _count(value: object) -> int | None:
    """A 64-bit integer >= 0, exactly: a JSON number, or a decimal string as proto3 JSON writes int64."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        integer = value
    elif isinstance(value, str) and _DECIMAL.fullmatch(value):
        integer = int(value)
    else:
        number = _finite(value)
        if number is None or not number.is_integer():
            raise _refuse("an integer", value)
        integer = int(number)
    if not _INT64_MIN <= integer <= _INT64_MAX:
        raise PydanticCustomError(_ERROR, "out of the 64-bit integer range, got {got}", {"got": repr(value)})
    if integer < 0:
        raise _refuse("an integer >= 0", value)
    return integer


def _timestamp(value: object) -> int | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _refuse("an RFC 3339 string", value)
    try:
        return parse_timestamp(value)
    except StepFormatError as exc:
        raise PydanticCustomError(_ERROR, "{reason}", {"reason": exc.message}) from exc


def _call_type(value: object) -> CallType:
    if isinstance(value, int | float) and not isinstance(value, bool) and int(value) in _CALL_TYPE_NUMBERS:
        return _CALL_TYPE_NUMBERS[int(value)]
    if isinstance(value, str):
        name = value.upper().removeprefix("CALL_TYPE_ENUM_").removeprefix("CALL_TYPE_")
        if name in CallType.__members__:
            return CallType(name)
    raise _refuse("one of AGENT, TOOL, HOST", value)


def _attribute(value: object) -> AttributeValue:
    if value is None or isinstance(value, str | bool | int | float):
        return cast("AttributeValue", value)
    if isinstance(value, list | tuple):
        return tuple(_attribute(v) for v in cast("Sequence[object]", value))
    if isinstance(value, Mapping):
        return {str(k): _attribute(v) for k, v in cast("Mapping[object, object]", value).items()}
    raise PydanticCustomError(_ERROR, "unsupported value {got}", {"got": repr(value)})


def _jsonable(value: AttributeValue) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


_Text = Annotated[str | None, BeforeValidator(_text)]
_RequiredText = Annotated[str, BeforeValidator(_required_text)]
_Number = Annotated[float | None, BeforeValidator(_finite)]
_Latency = Annotated[float | None, BeforeValidator(_bounded(0, _MAX_LATENCY_MS))]
_Count = Annotated[int | None, BeforeValidator(_count)]
_Timestamp = Annotated[
    int | None, BeforeValidator(_timestamp), PlainSerializer(format_timestamp, return_type=str, when_used="unless-none")
]
_CallType = Annotated[CallType, BeforeValidator(_call_type)]
_Attribute = Annotated[Any, BeforeValidator(_attribute)]


# --- the shapes ------------------------------------------------------------------------------


class _Shape(BaseModel):
    """Common configuration: snake_case or lowerCamelCase keys, unknown keys ignored, paths in snake_case."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=False,
        loc_by_alias=False,
        extra="ignore",
        frozen=True,
    )


class ToolInvocationDocument(_Shape):
    """``step_action.tool_invocation``: the tool a TOOL step called."""

    tool_name: _RequiredText
    parameters: dict[str, Any] | None = None


class AgentInvocationDocument(_Shape):
    """``step_action.agent_invocation``: the agent an AGENT step called, and the trace it answered with."""

    agent_url: _Text = None
    agent_name: _Text = None
    requests: dict[str, Any] | None = None
    response_trace: ResponseTraceDocument | None = None


class StepActionDocument(_Shape):
    """``step_action``: one of an agent or a tool invocation (the agent's, when a document has both)."""

    agent_invocation: AgentInvocationDocument | None = None
    tool_invocation: ToolInvocationDocument | None = None


class StepDocument(_Shape):
    """One Step as the extension writes it (fields in the order :func:`step_to_dict` writes them)."""

    step_id: _RequiredText
    trace_id: _RequiredText
    call_type: _CallType
    parent_step_id: _Text = None
    name: _Text = None
    step_action: StepActionDocument | None = None
    cost: _Number = None
    total_tokens: _Count = None
    additional_attributes: dict[str, _Attribute] | None = None
    latency: _Latency = None
    start_time: _Timestamp = None
    end_time: _Timestamp = None
    error: Any = None
    """A string; any other JSON value is kept as its JSON text."""
    # the flattened shape of the extension's Python sample: the action's fields at the top level
    parameters: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None
    step_type: _Text = None

    @field_serializer("additional_attributes", when_used="unless-none")
    def _attributes_as_json(self, attributes: Mapping[str, AttributeValue]) -> dict[str, Any]:
        return {key: _jsonable(value) for key, value in attributes.items()}


class ResponseTraceDocument(_Shape):
    """A ResponseTrace: ``{"trace_id": ..., "steps": [...]}``; the trace id defaults to the first step's."""

    trace_id: _RequiredText
    steps: list[StepDocument] | None = None

    @model_validator(mode="before")
    @classmethod
    def _trace_id_from_first_step(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        document = cast("dict[str, Any]", data)
        if _field(document, "trace_id"):
            return document
        steps = _field(document, "steps")
        first = cast("list[Any]", steps)[0] if isinstance(steps, list) and steps else None
        trace_id = _field(first, "trace_id")
        if not isinstance(trace_id, str):
            return document
        return {**{k: v for k, v in document.items() if k not in ("trace_id", "traceId")}, "trace_id": trace_id}


AgentInvocationDocument.model_rebuild()


def _field(document: object, name: str) -> Any:
    """``document[name]`` under its snake_case or lowerCamelCase key, or ``None``."""
    if not isinstance(document, dict):
        return None
    mapping = cast("dict[str, Any]", document)
    value = mapping.get(name)
    return mapping.get(to_camel(name)) if value is None else value


# --- reading ---------------------------------------------------------------------------------


def _describe(error: ErrorDetails) -> str:
    kind, got = error["type"], error.get("input")
    if kind == "missing":
        return "required"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected an object, got {type(got).__name__}"
    if kind == "list_type":
        return f"expected a list, got {type(got).__name__}"
    return error["msg"]


def _refused(exc: ValidationError, path: str) -> StepFormatError:
    """One message naming every field at fault by its path under ``path``."""
    messages: list[str] = []
    for error in exc.errors(include_url=False):
        where = path + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
        messages.append(f"{where}: {_describe(error)}")
    return StepFormatError("; ".join(messages))


def _check_nesting(data: object, path: str, *, is_trace: bool) -> None:
    """Refuse response traces nested deeper than :data:`MAX_TRACE_NESTING`, without recursing."""
    pending: list[tuple[object, str, int]] = []
    if is_trace:
        pending.extend(_steps_below(data, path, 0))
    else:
        pending.append((data, path, 0))
    while pending:
        step, where, depth = pending.pop()
        invocation = _field(_field(step, "step_action"), "agent_invocation")
        trace = _field(invocation, "response_trace")
        if trace is None:
            continue
        trace_path = f"{where}.step_action.agent_invocation.response_trace"
        if depth >= MAX_TRACE_NESTING:
            raise StepFormatError(f"{trace_path}: traces nested more than {MAX_TRACE_NESTING} deep")
        pending.extend(_steps_below(trace, trace_path, depth + 1))


def _steps_below(trace: object, path: str, depth: int) -> list[tuple[object, str, int]]:
    steps = _field(trace, "steps")
    if not isinstance(steps, list):
        return []
    return [(step, f"{path}.steps[{i}]", depth) for i, step in enumerate(cast("list[object]", steps))]


_Document = TypeVar("_Document", StepDocument, ResponseTraceDocument)


def _validated(shape: type[_Document], data: object, path: str) -> _Document:
    """``data`` read as ``shape``, or one StepFormatError naming every field at fault under ``path``."""
    _check_nesting(data, path, is_trace=shape is ResponseTraceDocument)
    try:
        return shape.model_validate(data)
    except ValidationError as exc:
        raise _refused(exc, path) from exc


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
        StepFormatError: If a field is missing or has the wrong type; the message names every such field.
    """
    return _step_of(_validated(StepDocument, data, path))


def response_trace_from_dict(data: object, *, path: str = "response_trace") -> ResponseTrace:
    """Read a ResponseTrace (``{"trace_id": ..., "steps": [...]}``) from extension JSON.

    Raises:
        StepFormatError: If the object or one of its steps is malformed.
    """
    return _trace_of(_validated(ResponseTraceDocument, data, path))


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


def _step_of(document: StepDocument) -> Step:
    call_type, name = document.call_type, document.name or ""
    action: StepAction | None = None
    if document.step_action is not None:
        agent, tool = document.step_action.agent_invocation, document.step_action.tool_invocation
        if agent is not None:
            action = AgentInvocation(
                agent_url=agent.agent_url,
                agent_name=agent.agent_name,
                requests=agent.requests,
                response_trace=None if agent.response_trace is None else _trace_of(agent.response_trace),
            )
        elif tool is not None:
            action = ToolInvocation(tool_name=tool.tool_name, parameters=tool.parameters)
    elif call_type is CallType.TOOL and name:
        action = ToolInvocation(tool_name=name, parameters=document.parameters)
    elif call_type is CallType.AGENT and (name or document.requests is not None):
        action = AgentInvocation(agent_name=name or None, requests=document.requests)
    additional: dict[str, AttributeValue] = dict(document.additional_attributes or {})
    if document.step_type is not None:
        additional.setdefault("step_type", document.step_type)
    error = document.error
    if error is not None and not isinstance(error, str):
        error = json.dumps(error, sort_keys=True)
    return Step(
        step_id=document.step_id,
        trace_id=document.trace_id,
        call_type=call_type,
        parent_step_id=document.parent_step_id,
        name=name,
        start_time_unix_nano=document.start_time,
        end_time_unix_nano=document.end_time,
        latency=document.latency,
        error=error or None,
        cost=document.cost,
        total_tokens=document.total_tokens,
        step_action=action,
        additional_attributes=additional,
    )


def _trace_of(document: ResponseTraceDocument) -> ResponseTrace:
    return ResponseTrace(trace_id=document.trace_id, steps=tuple(_step_of(s) for s in document.steps or ()))


# --- writing ---------------------------------------------------------------------------------


def step_to_dict(step: Step) -> dict[str, Any]:
    """The Step as extension JSON (a plain dict, ready for ``json.dumps`` or message metadata).

    Fields that are ``None`` are left out; the root step has no ``parent_step_id``. What is
    written is what :class:`StepDocument` serialises (the tests hold the two equal); it is
    built by hand because instrumented agents write a ResponseTrace on every traced answer,
    and building the documents to dump them costs four times as much.
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


def response_trace_to_dict(trace: ResponseTrace) -> dict[str, Any]:
    """The ResponseTrace as extension JSON."""
    return {"trace_id": trace.trace_id, "steps": [step_to_dict(s) for s in trace.steps]}
