"""tau2 messages to A2A parts and back, both ways lossless.

What tau2's ``a2a_agent`` sends, in one A2A message per turn:

* on the first turn, a text part of system instructions in tagged blocks: ``<policy>`` (the
  domain policy), ``<tools>`` (the tools' OpenAI function schemas as JSON text: descriptions,
  never anything executable) and ``<reply_format>`` (how to ask for a tool); then, when the
  task starts with a conversation, a data part ``{"history": [...]}``;
* the user's message as a text part; each tool result as a data part
  ``{"tool_result": {"id", "name", "content", "error", "requestor"}}``.

What the agent answers: text for the user, and tool calls as data parts
``{"tool_call": {"name", "arguments"}}`` (or ``{"tool_calls": [...]}``), or the same JSON
inside its text. Tools always run in tau2; the agent only names them.

A data part travels as a protobuf ``Struct``, whose numbers are all doubles: integral numbers
in tool arguments come back as ints, as JSON does not tell the two apart.
"""

# tau2 ships no type information: its models' fields are untyped to pyright.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.types import Part
from google.protobuf.json_format import MessageToDict
from tau2.data_model.message import (
    AssistantMessage,
    Message,
    MultiToolMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau2.environment.tool import Tool

from coordbench.errors import CoordbenchError
from coordbench.jsontext import integral_ints

__all__ = [
    "REPLY_FORMAT",
    "AgentRequest",
    "ParsedReply",
    "ToolProblem",
    "TurnFormatError",
    "decode_request",
    "encode_request",
    "instructions_text",
    "parse_instructions",
    "parse_reply",
    "reply_parts",
]

REPLY_FORMAT = (
    "Answer the user in plain text. To use a tool, answer with a data part "
    '{"tool_call": {"name": "<tool>", "arguments": {...}}} (one per call, or '
    '{"tool_calls": [...]}), or put that JSON in your text. Tools run on the caller\'s side; '
    'each result comes back as a data part {"tool_result": {"id", "name", "content", "error"}}. '
    "Only the tools listed in <tools> exist."
)
"""The ``<reply_format>`` block of the first message."""


class TurnFormatError(CoordbenchError, ValueError):
    """A2A parts that are not a turn of this format."""

    default_message = "not a tau2 turn"


_BLOCK = re.compile(r"<(policy|tools|reply_format)>\n(.*?)\n</\1>", re.DOTALL)


def instructions_text(policy: str, tools: Sequence[Tool]) -> str:
    """The system instructions of the first turn: policy, tool schemas and reply format."""
    schemas = json.dumps([tool.openai_schema for tool in tools], indent=1, sort_keys=True)
    return (
        f"<policy>\n{policy}\n</policy>\n<tools>\n{schemas}\n</tools>\n<reply_format>\n{REPLY_FORMAT}\n</reply_format>"
    )


def parse_instructions(text: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The policy and the tool schemas of :func:`instructions_text`; ``None`` for other text."""
    blocks = {m.group(1): m.group(2) for m in _BLOCK.finditer(text)}
    if not text.startswith("<policy>\n") or "policy" not in blocks or "tools" not in blocks:
        return None
    return blocks["policy"], json.loads(blocks["tools"])


_HISTORY_FIELDS = {"role", "content", "tool_calls", "id", "requestor", "error"}


def _history_entry(message: Message) -> dict[str, Any]:
    return message.model_dump(mode="json", include=_HISTORY_FIELDS, exclude_none=True)


def _history_message(entry: dict[str, Any]) -> Message:
    role = entry.get("role")
    if role == "assistant":
        return AssistantMessage.model_validate({**entry, "cost": 0.0})
    if role == "user":
        return UserMessage.model_validate({**entry, "cost": 0.0})
    if role == "tool":
        return ToolMessage.model_validate(entry)
    raise TurnFormatError(f"a history entry has role {role!r}; expected assistant, user or tool")


def _tool_result(message: ToolMessage, names: dict[str, str]) -> dict[str, Any]:
    return {
        "tool_result": {
            "id": message.id,
            "name": names.get(message.id, ""),
            "content": message.content,
            "error": message.error,
            "requestor": message.requestor,
        }
    }


def encode_request(
    message: UserMessage | ToolMessage | MultiToolMessage,
    *,
    instructions: str | None = None,
    history: Sequence[Message] = (),
    tool_names: dict[str, str] | None = None,
) -> list[Part]:
    """The A2A parts of one turn.

    Args:
        message: What tau2 hands the agent: the user's message or the results of its tools.
        instructions: The system instructions (:func:`instructions_text`), first turn only.
        history: The conversation the task starts with, first turn only.
        tool_names: Tool call ids to tool names, so results say which tool they come from.

    Returns:
        The parts, in order.
    """
    parts: list[Part] = []
    if instructions is not None:
        parts.append(new_text_part(instructions))
    if history:
        parts.append(new_data_part({"history": [_history_entry(m) for m in history]}))
    if isinstance(message, UserMessage):
        parts.append(new_text_part(message.content or ""))
    else:
        results = message.tool_messages if isinstance(message, MultiToolMessage) else [message]
        parts.extend(new_data_part(_tool_result(result, tool_names or {})) for result in results)
    return parts


@dataclass
class AgentRequest:
    """One turn as the agent receives it (:func:`decode_request`).

    Attributes:
        policy: The domain policy (first turn).
        tools: The tools' OpenAI function schemas (first turn).
        history: The conversation the task started with (first turn).
        message: The user's message or the tool results.
    """

    policy: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    history: list[Message] = field(default_factory=list[Message])
    message: UserMessage | ToolMessage | MultiToolMessage | None = None


def _part_content(part: Part) -> tuple[str, Any]:
    kind = part.WhichOneof("content")
    if kind == "text":
        return "text", part.text
    if kind == "data":
        return "data", integral_ints(MessageToDict(part.data))
    return str(kind), None


def decode_request(parts: Iterable[Part]) -> AgentRequest:
    """The inverse of :func:`encode_request`, for agents that speak this format (and tests).

    Raises:
        TurnFormatError: The parts are not a turn of this format.
    """
    request = AgentRequest()
    results: list[ToolMessage] = []
    for part in parts:
        kind, content = _part_content(part)
        if kind == "text" and (parsed := parse_instructions(content)) is not None:
            request.policy, request.tools = parsed
        elif kind == "text":
            request.message = UserMessage(role="user", content=content, cost=0.0)
        elif kind == "data" and isinstance(content, dict) and "history" in content:
            request.history = [_history_message(entry) for entry in content["history"]]  # pyright: ignore[reportUnknownVariableType]
        elif kind == "data" and isinstance(content, dict) and "tool_result" in content:
            result: dict[str, Any] = content["tool_result"]
            results.append(
                ToolMessage(
                    id=result["id"],
                    role="tool",
                    content=result.get("content"),
                    requestor=result.get("requestor", "assistant"),
                    error=bool(result.get("error", False)),
                )
            )
        else:
            raise TurnFormatError(f"unexpected {kind} part in a tau2 turn: {content!r:.200}")
    if results:
        request.message = results[0] if len(results) == 1 else MultiToolMessage(role="tool", tool_messages=results)
    return request


@dataclass(frozen=True)
class ToolProblem:
    """A tool call of the agent that tau2 cannot run.

    Attributes:
        kind: ``unknown_tool`` or ``invalid_arguments``.
        detail: What was wrong, in words the agent can act on.
    """

    kind: str
    detail: str


@dataclass
class ParsedReply:
    """The agent's answer as tau2 needs it.

    Attributes:
        content: Text for the user (``None`` when there is none besides tool calls).
        tool_calls: The tool calls, with ids.
        problems: Tool calls that could not be used.
    """

    content: str | None
    tool_calls: list[ToolCall]
    problems: list[ToolProblem]


def _candidates(value: Any) -> list[Any] | None:
    """The tool calls a JSON value asks for, or ``None`` when it is not a tool call at all."""
    if not isinstance(value, dict):
        return None
    if "tool_call" in value:
        return [value["tool_call"]]
    if "tool_calls" in value:
        calls = value["tool_calls"]
        return list(calls) if isinstance(calls, list) else [calls]  # pyright: ignore[reportUnknownArgumentType]
    if "name" in value and "arguments" in value:
        return [value]
    return None


def _json_in_text(text: str) -> tuple[str, list[Any]]:
    """Tool-call JSON objects inside ``text`` (fenced or bare), and the text without them."""
    decoder = json.JSONDecoder()
    calls: list[Any] = []
    kept: list[str] = []
    position = 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            kept.append(text[position : start + 1])
            position = start + 1
            continue
        found = _candidates(value)
        if found is None:
            kept.append(text[position:end])
        else:
            calls.extend(found)
            kept.append(text[position:start])
        position = end
    kept.append(text[position:])
    rest = re.sub(r"```(?:json)?\s*```", "", "".join(kept)).strip()
    return rest, calls


def _tool_call(raw: Any, index: int, turn: int, tools: set[str]) -> ToolCall | ToolProblem:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return ToolProblem("invalid_arguments", f"tool call {index + 1} has no tool name: {json.dumps(raw)[:200]}")
    call: dict[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    name: str = call["name"]
    if name not in tools:
        known = ", ".join(sorted(tools)) or "none"
        return ToolProblem("unknown_tool", f"there is no tool {name!r}; the tools are: {known}")
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return ToolProblem("invalid_arguments", f"the arguments of {name!r} are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return ToolProblem(
            "invalid_arguments", f"the arguments of {name!r} must be a JSON object, not {json.dumps(arguments)[:100]}"
        )
    call_id = call.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"a2a-{turn}-{index}",
        name=name,
        arguments=integral_ints(arguments),
        requestor="assistant",
    )


def parse_reply(text: str, data: Sequence[Any], *, tools: Iterable[str], turn: int) -> ParsedReply:
    """Read the agent's answer: tool calls from data parts or JSON in text, the rest as text.

    Args:
        text: The reply's text.
        data: The reply's data parts (decoded JSON).
        tools: The names of the tools tau2 offers.
        turn: The turn, for the ids of tool calls that come without one.

    Returns:
        The text, the usable tool calls and the problems with the others.
    """
    raw_calls: list[Any] = []
    for value in data:
        found = _candidates(value)
        if found is not None:
            raw_calls.extend(found)
    content, in_text = _json_in_text(text)
    raw_calls.extend(in_text)
    names = set(tools)
    calls: list[ToolCall] = []
    problems: list[ToolProblem] = []
    for index, raw in enumerate(raw_calls):
        parsed = _tool_call(integral_ints(raw), index, turn, names)
        (problems if isinstance(parsed, ToolProblem) else calls).append(parsed)  # pyright: ignore[reportArgumentType]
    return ParsedReply(content or None, calls, problems)


def reply_parts(message: AssistantMessage) -> list[Part]:
    """The A2A parts an agent answers with to say ``message`` (the inverse of :func:`parse_reply`)."""
    parts: list[Part] = []
    if message.content:
        parts.append(new_text_part(message.content))
    for call in message.tool_calls or []:
        parts.append(new_data_part({"tool_call": {"id": call.id, "name": call.name, "arguments": call.arguments}}))
    return parts
