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
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from coordbench.testing import LoopbackServer

_INSTRUCTIONS = re.compile(r"Instructions:\s*(.*?)\s*</scenario>", re.DOTALL)


class ScriptedUser:
    """Serves ``/v1/chat/completions`` as the user of a tau2 conversation."""

    def __init__(self, patience: int = 4) -> None:
        self.patience = patience
        self.requests = 0
        self.agent_requests = 0
        self._server = LoopbackServer(
            lambda _url: Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        )
        self.base_url = ""

    def start(self) -> str:
        self.base_url = self._server.start() + "v1"
        return self.base_url

    def stop(self) -> None:
        self._server.stop()

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
        from agents.tau2_mock import _request_call

        messages = body.get("messages", [])
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return {"role": "assistant", "content": f"Done. The result: {last.get('content')}"}
        call = _request_call(str(last.get("content") or ""))
        if call is None:
            return {"role": "assistant", "content": "How can I help you with your tasks?"}
        arguments = json.dumps(call.arguments)
        tool_call = {
            "id": f"call_{self.requests}",
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [tool_call]}

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests += 1
        if body.get("tools"):
            self.agent_requests += 1
            message = self._act(body)
        else:
            message = {"role": "assistant", "content": self._say(body)}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return JSONResponse(
            {
                "id": f"chatcmpl-{self.requests}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "scripted-user"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )
