"""Reading A2A protobuf payloads cheaply: text size, token estimates, task states, metadata."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from a2a.types import Artifact, Message, Part, TaskState
from google.protobuf.json_format import MessageToDict

from coordbench.redaction import redact_urls_in

__all__ = [
    "CHARS_PER_TOKEN",
    "CONTENT_LIMIT",
    "FINAL_STATES",
    "TERMINAL_STATES",
    "artifacts_chars",
    "ends_stream",
    "estimate_tokens",
    "message_chars",
    "message_facts",
    "parts_chars",
    "parts_text",
    "recorded_messages",
    "task_state_name",
]

CHARS_PER_TOKEN = 4
"""The usual rule of thumb for English text with BPE tokenizers (OpenAI's guidance)."""

_TERMINAL_PREFIX = "TASK_STATE_"

TERMINAL_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""States a task never leaves."""

FINAL_STATES = TERMINAL_STATES | {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}
"""States after which a task sends no more events for the current request (terminal or interrupted)."""


def ends_stream(state: int | None, *, snapshot: bool) -> bool:
    """Whether a streamed event leaving the task in ``state`` is the stream's last.

    A status update ends it in a terminal or interrupted state. A task *snapshot* ends it only
    in a terminal state: an agent resuming a task after ``input-required`` may first send the
    task as it stood (a2a-sdk forwards a re-sent task), and the new turn's events follow it.

    Example:
        >>> ends_stream(TaskState.TASK_STATE_INPUT_REQUIRED, snapshot=False)
        True
        >>> ends_stream(TaskState.TASK_STATE_INPUT_REQUIRED, snapshot=True)
        False
    """
    return state in (TERMINAL_STATES if snapshot else FINAL_STATES)


_STATE_NAMES: dict[int, str] = {
    value: name.removeprefix(_TERMINAL_PREFIX).lower().replace("_", "-")
    for name, value in TaskState.items()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
}


def task_state_name(state: int) -> str:
    """A task state as A2A 0.3 spells it: ``completed``, ``input-required``...

    Args:
        state: A ``TaskState`` enum value.

    Returns:
        The lower-case, hyphenated name; ``unknown`` for values the SDK does not know.

    Example:
        >>> task_state_name(TaskState.TASK_STATE_INPUT_REQUIRED), task_state_name(999)
        ('input-required', 'unknown')
    """
    return _STATE_NAMES.get(state, "unknown")


def parts_chars(parts: Iterable[Part]) -> int:
    """Characters of text (and bytes of non-text parts) in message or artifact parts."""
    total = 0
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            total += len(part.text)
        elif kind is not None:
            total += part.ByteSize()
    return total


CONTENT_LIMIT = 4096
"""Most characters of message content recorded per span attribute (content capture is opt-in)."""


def parts_text(parts: Iterable[Part]) -> str:
    """The text of ``parts``: text parts as they are, data parts as compact JSON, files by name or URL."""
    texts: list[str] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            texts.append(json.dumps(MessageToDict(part.data), sort_keys=True, separators=(",", ":")))
        elif kind == "url":
            texts.append(part.url)
        elif kind == "raw":
            texts.append(f"[{len(part.raw)} bytes{' ' + part.filename if part.filename else ''}]")
    return "\n".join(texts)


def recorded_messages(role: str, texts: Iterable[str]) -> str:
    """GenAI-convention JSON for captured content, truncated to :data:`CONTENT_LIMIT` characters in all.

    URLs in the text lose their credentials and query values (:func:`coordbench.redaction.redact_url`):
    agents pass each other URLs in messages (an assessor hands a team its peers' addresses),
    and a URL may carry a token.

    Example:
        >>> recorded_messages("user", ["hi, see https://bot:key@host/?token=t"])
        '[{"parts":[{"content":"hi, see https://REDACTED:REDACTED@host/?token=REDACTED","type":"text"}],"role":"user"}]'
    """
    budget = CONTENT_LIMIT
    parts: list[dict[str, str]] = []
    for text in texts:
        if budget <= 0:
            break
        cut = len(text) > budget
        text = redact_urls_in(text, limit=budget)  # cut first: what is not kept is never read
        budget -= len(text)
        if cut:
            text += "...[truncated]"
        parts.append({"type": "text", "content": text})
    return json.dumps([{"role": role, "parts": parts}], sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def message_chars(message: Message) -> int:
    """Characters of text (and bytes of non-text parts) in a message."""
    return parts_chars(message.parts)


def artifacts_chars(artifacts: Iterable[Artifact]) -> int:
    """Characters in the parts of ``artifacts``."""
    return sum(parts_chars(a.parts) for a in artifacts)


def message_facts(message: Message) -> tuple[int, str]:
    r"""Size and digest of a message, in one pass over its parts.

    The size is :func:`message_chars`. The digest is BLAKE2b-64, in hex, of the parts (text
    as UTF-8, other parts as their encoding, each followed by ``0x1f``): it lets the backend
    spot repeated requests (same caller, callee and content) without the content itself
    ever leaving the agent.

    Example:
        >>> from a2a.helpers import new_text_message
        >>> expected = hashlib.blake2b(b"hello\x1f", digest_size=8).hexdigest()
        >>> message_facts(new_text_message("hello")) == (5, expected)
        True
    """
    chars = 0
    digest = hashlib.blake2b(digest_size=8)
    update = digest.update
    for part in message.parts:
        if part.WhichOneof("content") == "text":
            text = part.text
            chars += len(text)
            update(text.encode())
        else:
            chars += part.ByteSize()
            update(part.SerializeToString())
        update(b"\x1f")
    return chars, digest.hexdigest()


def estimate_tokens(chars: int) -> int:
    """Estimate a token count from a character count (``ceil(chars / 4)``)."""
    return -(-chars // CHARS_PER_TOKEN)


def struct_get_str(struct: Any, key: str) -> str | None:
    """A string value from a protobuf ``Struct`` (message metadata), or ``None``."""
    fields = struct.fields
    if key not in fields:
        return None
    value = fields[key]
    return value.string_value if value.WhichOneof("kind") == "string_value" else None
