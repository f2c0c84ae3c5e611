"""The A2A messages of a trace as flat records: what protocol, latency, text and judge evaluators read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from coordbench import jsontext, semconv
from coordbench.sketch import K
from coordbench.spans import SpanData, StatusCode
from coordbench.spantree import SpanTree

__all__ = ["MESSAGE_TEXT_LIMIT", "Call", "calls_of", "json_strings", "message_text"]

MESSAGE_TEXT_LIMIT = 16_384
"""Most characters of a message's captured text an evaluator reads (the instrumentation records 4,096).

Spans come from the agents being judged: one may carry megabytes in an attribute. Every text
measure (similarity, repetition, dependency, the judge's prompt) reads the first this many
characters of each message, so its cost is bounded whatever a span holds.
"""


@dataclass(frozen=True, slots=True)
class Call:
    """One agent-to-agent message, seen from the caller's CLIENT span.

    Attributes:
        caller: The sending agent.
        callee: The receiving agent.
        span_id: The client span.
        start_unix_nano: When it was sent.
        latency_ms: How long the caller waited (the whole streamed response included).
        ok: The call did not fail (no error status).
        error_type: ``error.type`` when it failed.
        state: Final task state (``completed``...), if any.
        request_bytes: Size of the request.
        response_bytes: Size of the response events.
        input_tokens: Tokens sent (reported, or estimated from length).
        output_tokens: Tokens received.
        cost: Cost the callee reported, if any.
        digest: Digest of the message content (equal digests: the same message again).
        request_text: The message text, when content capture was on.
        response_text: The reply's text, when content capture was on.
        request_fingerprint: The message text's fingerprint (:mod:`coordbench.sketch`), when recorded.
        response_fingerprint: The reply text's fingerprint, when recorded.
        request_text_chars: Characters of text in the message (not the envelope), when recorded.
        response_text_chars: Characters of text in the reply, when recorded.
    """

    caller: str
    callee: str
    span_id: str
    start_unix_nano: int
    latency_ms: float
    ok: bool
    error_type: str | None
    state: str | None
    request_bytes: int
    response_bytes: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    digest: str | None
    request_text: str | None
    response_text: str | None
    request_fingerprint: tuple[int, ...] | None = None
    response_fingerprint: tuple[int, ...] | None = None
    request_text_chars: int | None = None
    response_text_chars: int | None = None


_MAX_VALUES = 10_000
"""The most JSON values read inside one tool call or result (a hostile span's nesting costs no more)."""


def message_text(value: object) -> str | None:
    """The text of a captured ``gen_ai.input.messages``/``output.messages`` attribute (parts joined).

    Text and reasoning parts give their ``content`` (a text repeated word for word is read once);
    tool calls their ``arguments`` and tool results their ``response`` (the GenAI conventions'
    ``tool_call`` and ``tool_call_response`` parts: a model step that was given an agent's
    answer as a tool result has read it), the strings inside them joined. At most
    :data:`MESSAGE_TEXT_LIMIT` characters; an attribute that is not the GenAI JSON shape is read
    as plain text.
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        messages = jsontext.loads(value)
    except ValueError:
        return value[:MESSAGE_TEXT_LIMIT]
    texts: list[str] = []
    seen: set[str] = set()
    for message in cast("list[Any]", messages) if isinstance(messages, list) else []:
        parts = cast("dict[str, Any]", message).get("parts") if isinstance(message, dict) else None
        for part in cast("list[Any]", parts) if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            fields = cast("dict[str, Any]", part)
            content = fields.get("content")
            if isinstance(content, str):
                if content and content in seen:
                    continue  # the same text twice (a reply as a message and as an artifact) says it once
                seen.add(content)
                texts.append(content[:MESSAGE_TEXT_LIMIT])
            elif fields.get("type") in ("tool_call", "tool_call_response"):
                texts.append(json_strings(fields.get("arguments", fields.get("response"))))
    return "\n".join(texts)[:MESSAGE_TEXT_LIMIT]


def json_strings(value: object) -> str:
    """The strings inside a JSON value (a tool call's arguments, a tool's result), in order, one per line.

    At most :data:`MESSAGE_TEXT_LIMIT` characters, and :data:`_MAX_VALUES` values read (a hostile
    span's nesting costs no more).
    """
    into: list[str] = []
    stack: list[object] = [value]
    total = visited = 0
    while stack and total < MESSAGE_TEXT_LIMIT and visited < _MAX_VALUES:
        item = stack.pop()
        visited += 1
        if isinstance(item, str):
            into.append(item[: MESSAGE_TEXT_LIMIT - total])
            total += len(into[-1]) + 1
        elif isinstance(item, dict):
            stack.extend(reversed(list(cast("dict[str, Any]", item).values())))
        elif isinstance(item, list):
            stack.extend(reversed(cast("list[Any]", item)))
    return "\n".join(into)[:MESSAGE_TEXT_LIMIT]


def _int(span: SpanData, key: str) -> int:
    value = span.attributes.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _count(span: SpanData, key: str) -> int | None:
    value = span.attributes.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _fingerprint(span: SpanData, key: str) -> tuple[int, ...] | None:
    """A recorded fingerprint: at most K non-negative ints, sorted and distinct (a hostile span may send anything)."""
    value = span.attributes.get(key)
    if not isinstance(value, list | tuple):
        return None
    hashes = {
        v for v in cast("tuple[Any, ...]", value)[: 4 * K] if isinstance(v, int) and not isinstance(v, bool) and v >= 0
    }
    return tuple(sorted(hashes)[:K])


def calls_of(tree: SpanTree, *, exclude_callers: Iterable[str] = ()) -> list[Call]:
    """Every A2A message in ``tree``, by start time (then span id).

    Args:
        tree: The spans.
        exclude_callers: Leave out messages sent by these agents (the hosts, say).
    """
    skip = set(exclude_callers)
    out: list[Call] = []
    for agent_call in tree.calls():
        if agent_call.caller in skip:
            continue
        span = agent_call.span
        cost = span.attributes.get(semconv.A2A_STEP_COST)
        out.append(
            Call(
                caller=agent_call.caller,
                callee=agent_call.callee,
                span_id=span.span_id,
                start_unix_nano=span.start_time_unix_nano,
                latency_ms=span.duration_ms,
                ok=span.status_code is not StatusCode.ERROR,
                error_type=span.attribute_str(semconv.ERROR_TYPE),
                state=span.attribute_str(semconv.A2A_TASK_STATE),
                request_bytes=_int(span, semconv.A2A_REQUEST_SIZE),
                response_bytes=_int(span, semconv.A2A_RESPONSE_SIZE),
                input_tokens=_int(span, semconv.GEN_AI_USAGE_INPUT_TOKENS),
                output_tokens=_int(span, semconv.GEN_AI_USAGE_OUTPUT_TOKENS),
                cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
                digest=span.attribute_str(semconv.A2A_MESSAGE_DIGEST),
                request_text=message_text(span.attributes.get(semconv.GEN_AI_INPUT_MESSAGES)),
                response_text=message_text(span.attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES)),
                request_fingerprint=_fingerprint(span, semconv.A2A_REQUEST_FINGERPRINT),
                response_fingerprint=_fingerprint(span, semconv.A2A_RESPONSE_FINGERPRINT),
                request_text_chars=_count(span, semconv.A2A_REQUEST_TEXT_CHARS),
                response_text_chars=_count(span, semconv.A2A_RESPONSE_TEXT_CHARS),
            )
        )
    out.sort(key=lambda c: (c.start_unix_nano, c.span_id))
    return out
