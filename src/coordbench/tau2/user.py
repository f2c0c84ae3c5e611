"""``scripted_user``: a tau2 user that needs no model, no key and no network.

tau2's own user simulator asks a hosted model what the user says next. This one says, once the
agent has greeted it, the request its task's instructions end with (the mock domain's
``Create a new task called 'Important Meeting' for user_1.``), and ends the conversation
(``###STOP###``) as soon as the agent has answered, or after :data:`PATIENCE` agent messages.
Tasks whose user must hold a conversation (most of airline and retail) need tau2's simulator;
this one is for running an agent through tau2 offline: a first check, a CI job, a demo.

``coordbench tau2 run --user scripted_user ...`` selects it; :func:`register` adds it to tau2's
registry beside ``a2a_agent``.
"""

# tau2 ships no type information: its classes and fields are untyped to pyright.
# pyright: reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false

from __future__ import annotations

import re
from typing import Any

from tau2.data_model.message import AssistantMessage, Message, UserMessage
from tau2.user.base import STOP, UserState
from tau2.user.user_simulator import UserSimulator

__all__ = ["PATIENCE", "USER_NAME", "ScriptedUser", "request_of"]

USER_NAME = "scripted_user"
"""The user's name in tau2's registry (``--user scripted_user``)."""
PATIENCE = 4
"""Agent messages after which the user stops whatever the agent said."""

_TASK = re.compile(r"Task instructions:\s*(.*)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def request_of(instructions: str) -> str:
    r"""What the user asks for: the last sentence of its task instructions (of the whole text without them).

    Example:
        >>> request_of("Domain: mock\nTask instructions:\n\tYou are user_1. Create a task called 'Pay rent'.")
        "Create a task called 'Pay rent'."
        >>> request_of("")
        'Hello.'
    """
    found = _TASK.search(instructions)
    text = " ".join((found.group(1) if found else instructions).split())
    sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
    return sentences[-1] if sentences else "Hello."


class ScriptedUser(UserSimulator):
    """A user that asks for its task's request, then stops once the agent has answered.

    Args:
        tools: The user's tools (unused: this user calls none).
        instructions: The task's user scenario, as tau2 renders it.
        llm: Ignored (tau2 passes its ``--user-llm``).
        llm_args: Ignored.
    """

    def __init__(
        self,
        tools: list[Any] | None = None,
        instructions: Any = None,
        llm: str | None = None,
        llm_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(tools=tools, instructions=instructions, llm=llm, llm_args=llm_args)  # pyright: ignore[reportUnknownMemberType]
        self.request = request_of(str(instructions or ""))

    def set_seed(self, seed: int) -> None:
        """Nothing to seed: the script is deterministic."""

    def get_init_state(self, message_history: list[Message] | None = None) -> UserState:
        """An empty conversation, or the one given."""
        history: list[Any] = list(message_history or [])
        return UserState(system_messages=[], messages=history)

    def generate_next_message(self, message: Any, state: UserState) -> tuple[UserMessage, UserState]:
        """The request after the agent's first message; ``###STOP###`` after its answer."""
        state.messages.append(message)
        spoken = sum(1 for m in state.messages if isinstance(m, AssistantMessage) and not m.is_tool_call())
        asked = any(isinstance(m, UserMessage) for m in state.messages)
        content = self.request if not asked and spoken < PATIENCE else STOP
        reply = UserMessage(role="user", content=content)
        state.messages.append(reply)
        return reply, state
