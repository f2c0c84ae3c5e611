"""tau2 messages ⇄ A2A parts: every turn and every reply survives the trip, as protobuf parts and as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.types import Message, Role
from google.protobuf.json_format import MessageToDict, MessageToJson, Parse
from hypothesis import given, settings
from hypothesis import strategies as st
from tau2.data_model.message import AssistantMessage, MultiToolMessage, ToolCall, ToolMessage, UserMessage
from tau2.registry import registry

from coordbench.tau2.translate import (
    decode_request,
    encode_request,
    instructions_text,
    parse_instructions,
    parse_reply,
    reply_parts,
)

TOOLS = {"create_task", "get_users", "update_task_status", "transfer_to_human_agents"}


def wire(parts: list[Any]) -> list[Any]:
    """The parts as they cross the network: a message serialised to JSON and parsed back."""
    message = Message(role=Role.ROLE_USER, parts=parts, message_id="m")
    return list(Parse(MessageToJson(message), Message()).parts)


def reply_of(parts: list[Any]) -> tuple[str, list[Any]]:
    """What the messenger reads from a reply: its text parts joined, its data parts as JSON."""
    texts = [p.text for p in parts if p.WhichOneof("content") == "text"]
    data = [MessageToDict(p.data) for p in parts if p.WhichOneof("content") == "data"]
    return "\n".join(texts), data


def untimed(value: Any) -> Any:
    """A dumped message without its timestamps, which tau2 stamps where a message is made."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def mock_tools() -> list[Any]:
    return registry.get_env_constructor("mock")().get_tools()


def test_the_first_turn_carries_policy_tools_history_and_the_users_message() -> None:
    tools = mock_tools()
    history = [
        UserMessage(role="user", content="I need help", cost=0.0),
        AssistantMessage(
            role="assistant",
            tool_calls=[ToolCall(id="c1", name="get_users", arguments={}, requestor="assistant")],
            cost=0.0,
        ),
        ToolMessage(id="c1", role="tool", content='["user_1"]', requestor="assistant"),
    ]
    user = UserMessage(role="user", content="Create a task called 'Plan' for user_1.", cost=0.0)
    text = instructions_text("1. Be kind\n2. Be <brief>", tools)
    request = decode_request(wire(encode_request(user, instructions=text, history=history)))
    assert request.policy == "1. Be kind\n2. Be <brief>"
    assert request.tools == [t.openai_schema for t in tools]  # descriptions only: JSON text, nothing to run
    assert [untimed(m.model_dump()) for m in request.history] == [untimed(m.model_dump()) for m in history]
    assert request.message is not None and request.message.content == user.content
    assert parse_instructions("just a question") is None


def test_tool_results_travel_as_data_parts_with_their_tool_names() -> None:
    one = ToolMessage(id="c1", role="tool", content='{"task_id": "task_2"}', requestor="assistant")
    two = ToolMessage(id="c2", role="tool", content="Error: no such user", requestor="assistant", error=True)
    for message in (one, MultiToolMessage(role="tool", tool_messages=[one, two])):
        parts = wire(encode_request(message, tool_names={"c1": "create_task", "c2": "get_users"}))
        assert MessageToDict(parts[0].data)["tool_result"]["name"] == "create_task"
        decoded = decode_request(parts).message
        assert decoded is not None
        assert untimed(decoded.model_dump()) == untimed(message.model_dump())


def test_a_part_of_another_kind_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unexpected data part in a tau2 turn: \{'other': 1"):
        decode_request(wire(encode_request(UserMessage(role="user", content="x", cost=0.0)))[:0] + _data({"other": 1}))


def _data(value: dict[str, Any]) -> list[Any]:
    from a2a.helpers import new_data_part

    return wire([new_data_part(value)])


json_scalars = st.none() | st.booleans() | st.text(max_size=20) | st.integers(-(2**53), 2**53)
json_scalars |= st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    content=st.none() | st.text(min_size=1, max_size=200).filter(lambda t: "{" not in t and t.strip() == t and t),
    calls=st.lists(
        st.tuples(st.sampled_from(sorted(TOOLS)), st.dictionaries(st.text(max_size=12), json_values, max_size=5)),
        max_size=3,
    ),
)
def test_any_reply_round_trips_through_a2a_parts(content: str | None, calls: list[tuple[str, dict[str, Any]]]) -> None:
    if content is None and not calls:
        content = "hello"
    message = AssistantMessage(
        role="assistant",
        content=content,
        tool_calls=[ToolCall(id=f"id{i}", name=n, arguments=a, requestor="assistant") for i, (n, a) in enumerate(calls)]
        or None,
        cost=0.0,
    )
    text, data = reply_of(wire(reply_parts(message)))
    parsed = parse_reply(text, data, tools=TOOLS, turn=0)
    assert parsed.problems == []
    assert parsed.content == message.content
    assert [c.model_dump() for c in parsed.tool_calls] == [c.model_dump() for c in message.tool_calls or []]
    # and the same JSON inside text, as a model without data parts would write it
    embedded = [{"tool_call": {"id": c.id, "name": c.name, "arguments": c.arguments}} for c in message.tool_calls or []]
    as_text = "\n".join([message.content or "", *(f"```json\n{json.dumps(e)}\n```" for e in embedded)])
    in_text = parse_reply(as_text, [], tools=TOOLS, turn=0)
    assert (in_text.content, in_text.tool_calls) == (parsed.content, parsed.tool_calls)


@pytest.mark.parametrize(
    ("text", "data", "kinds", "names"),
    [
        ('{"name": "get_users", "arguments": "{}"}', [], [], ["get_users"]),  # OpenAI style, arguments as a string
        ("", [{"tool_calls": [{"name": "get_users"}, {"name": "get_users", "arguments": {}}]}], [], ["get_users"] * 2),
        ("", [{"tool_call": {"name": "delete_task", "arguments": {}}}], ["unknown_tool"], []),
        ('{"tool_call": {"name": "create_task", "arguments": "user_1"}}', [], ["invalid_arguments"], []),
        ('{"tool_call": {"name": "create_task", "arguments": [1]}}', [], ["invalid_arguments"], []),
        ('{"tool_call": {"arguments": {}}}', [], ["invalid_arguments"], []),
        ('The data: {"user": 1} and a {broken', [], [], []),  # JSON that is not a tool call stays text
    ],
)
def test_tool_calls_are_read_from_data_or_text_and_bad_ones_are_named(
    text: str, data: list[Any], kinds: list[str], names: list[str]
) -> None:
    parsed = parse_reply(text, data, tools=TOOLS, turn=3)
    assert [p.kind for p in parsed.problems] == kinds
    assert [c.name for c in parsed.tool_calls] == names
    assert all(c.id.startswith("a2a-3-") for c in parsed.tool_calls)
    if not names and not kinds:
        assert parsed.content == text


def test_an_unknown_tool_is_answered_with_the_tools_that_exist() -> None:
    (problem,) = parse_reply('{"name": "delete_task", "arguments": {}}', [], tools=TOOLS, turn=0).problems
    assert problem.detail == (
        "there is no tool 'delete_task'; the tools are: create_task, get_users, transfer_to_human_agents, "
        "update_task_status"
    )
