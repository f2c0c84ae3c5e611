"""tau2's user simulator, scripted: a local OpenAI-compatible server (real HTTP) that plays the user.

tau2's ``user_simulator`` calls it through litellm (``--user-llm openai/scripted-user
--user-llm-args '{"api_base": URL, "api_key": "x"}'``). It reads the task's instructions from
the system prompt, asks for the last thing they say (``Create a new task called 'Important
Meeting' for user_1.``), and ends the conversation (``###STOP###``) once the agent has answered
that request, or after ``patience`` agent messages.

A request that offers tools comes from tau2's ``llm_agent`` (``--agent-llm openai/scripted-agent``):
then it plays a rule-based agent instead, answering with OpenAI tool calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from support.chat_server import ChatServer

_INSTRUCTIONS = re.compile(r"Instructions:\s*(.*?)\s*</scenario>", re.DOTALL)


class ScriptedUser(ChatServer):
    """Serves ``/v1/chat/completions`` as the user of a tau2 conversation (or as a rule-based agent)."""

    model = "scripted-user"

    def __init__(self, patience: int = 4) -> None:
        super().__init__()
        self.patience = patience
        self.agent_requests = 0

    def llm_args(self) -> str:
        return f'{{"api_base": "{self.base_url}", "api_key": "local"}}'

    def _say(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        found = _INSTRUCTIONS.search(system)
        sentences = re.split(r"(?<=\.)\s+", found.group(1).strip()) if found else ["Hello."]
        request = sentences[-1]
        # the simulator flips roles: the agent's messages arrive as "user" messages
        agent_said = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        if len(agent_said) > self.patience or any(
            word in said for said in agent_said[1:] for word in ("Done.", "did not work", "stopped")
        ):
            return "###STOP###"
        return request

    def _act(self, body: dict[str, Any]) -> dict[str, Any]:
        from agents.tau2_mock import request_call  # imports tau2: only when playing the agent

        messages = body.get("messages", [])
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return {"role": "assistant", "content": f"Done. The result: {last.get('content')}"}
        call = request_call(str(last.get("content") or ""))
        if call is None:
            return {"role": "assistant", "content": "How can I help you with your tasks?"}
        arguments = json.dumps(call.arguments)
        tool_call = {
            "id": f"call_{len(self.requests)}",
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [tool_call]}

    async def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("tools"):
            self.agent_requests += 1
            return self._act(body)
        return {"role": "assistant", "content": self._say(body)}
