"""A local OpenAI-compatible chat-completions server (real HTTP) standing in for a hosted LLM.

Behaviours:
    ``ok``: answers ``answer`` (a judgment dict) as JSON content.
    ``gullible``: a judge that obeys injected instructions: 10/10 if any message contains
        "ignore previous instructions", else 6/10.
    ``malformed``: content that is not JSON.
    ``out_of_range``: overall_score 42.
    ``missing``: a judgment without ``reasoning``.
    ``slow``: sleeps ``delay`` seconds first.
    ``error``: HTTP 500.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.responses import JSONResponse

from support.chat_server import ChatServer

GOOD = {
    "overall_score": 8,
    "coordination_quality": 7,
    "task_success": True,
    "reasoning": "The coordinator split the task and merged the answers.",
    "strengths": ["clear delegation"],
    "weaknesses": ["workers repeated the request"],
}


def _judgment(overall: int) -> dict[str, Any]:
    return {**GOOD, "overall_score": overall}


class FakeLLM(ChatServer):
    """Answers as the LLM judge would, or misbehaves as ``behaviour`` says; records every request."""

    def __init__(self, behaviour: str = "ok", *, answer: dict[str, Any] | None = None, delay: float = 5.0) -> None:
        super().__init__()
        self.behaviour = behaviour
        self.answer = answer or GOOD
        self.delay = delay

    async def reply(self, body: dict[str, Any]) -> dict[str, Any] | JSONResponse:
        if self.behaviour == "error":
            return JSONResponse({"error": {"message": "internal error", "type": "server_error"}}, status_code=500)
        if self.behaviour == "slow":
            await asyncio.sleep(self.delay)
        content: str
        if self.behaviour == "malformed":
            content = "Sure! Here is my judgment: overall 8/10 {not json"
        elif self.behaviour == "out_of_range":
            content = json.dumps(_judgment(42))
        elif self.behaviour == "missing":
            content = json.dumps({k: v for k, v in GOOD.items() if k != "reasoning"})
        elif self.behaviour == "gullible":
            text = " ".join(str(m.get("content", "")) for m in body.get("messages", [])).lower()
            content = json.dumps(_judgment(10 if "ignore previous instructions" in text else 6))
        else:
            content = json.dumps(self.answer)
        return {"role": "assistant", "content": content}
