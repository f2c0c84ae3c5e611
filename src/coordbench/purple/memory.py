"""What a purple agent has been told, per conversation (A2A context id), bounded in count and age.

Task details can arrive over several messages of one context: the task, a data part with tool
or MCP connection details, a later correction. The agent keeps every incoming message of a
context and works from all of them, never from the first request only. Contexts are isolated
from each other. Bounds: at most ``max_messages`` per context (the oldest go first), at most
``max_contexts`` contexts (the least recently used go first), and a context idle for longer
than ``max_age`` seconds is forgotten.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ContextMemory", "Remembered"]


@dataclass(frozen=True)
class Remembered:
    """One incoming message: its text and its data parts."""

    text: str
    data: tuple[dict[str, Any], ...] = ()


@dataclass
class _Context:
    messages: list[Remembered] = field(default_factory=list[Remembered])
    touched: float = 0.0


class ContextMemory:
    """Incoming messages per context id.

    Args:
        max_messages: Most messages kept per context.
        max_contexts: Most contexts kept.
        max_age: Seconds after which an idle context is forgotten.
        clock: Monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        *,
        max_messages: int = 100,
        max_contexts: int = 1_000,
        max_age: float = 3_600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_messages < 1 or max_contexts < 1 or max_age <= 0:
            raise ValueError("max_messages and max_contexts must be >= 1 and max_age > 0")
        self.max_messages = max_messages
        self.max_contexts = max_contexts
        self.max_age = max_age
        self._clock = clock
        self._contexts: OrderedDict[str, _Context] = OrderedDict()

    def add(self, context_id: str, message: Remembered) -> list[Remembered]:
        """Keep ``message`` in its context; returns every message the context holds now, oldest first."""
        now = self._clock()
        self._expire(now)
        context = self._contexts.pop(context_id, None) or _Context()
        context.messages.append(message)
        del context.messages[: -self.max_messages]
        context.touched = now
        self._contexts[context_id] = context
        while len(self._contexts) > self.max_contexts:
            self._contexts.popitem(last=False)
        return list(context.messages)

    def messages(self, context_id: str) -> list[Remembered]:
        """The messages a context holds (empty for an unknown or expired one)."""
        self._expire(self._clock())
        context = self._contexts.get(context_id)
        return list(context.messages) if context is not None else []

    def __len__(self) -> int:
        """Contexts held."""
        return len(self._contexts)

    def _expire(self, now: float) -> None:
        while self._contexts:
            oldest_id, oldest = next(iter(self._contexts.items()))
            if now - oldest.touched <= self.max_age:
                break
            del self._contexts[oldest_id]
