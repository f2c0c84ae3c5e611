"""A local OpenAI-compatible chat-completions server (real HTTP on loopback), the base of the tests' model stand-ins.

It records every request (body and headers) and wraps each reply in the chat-completion
envelope; a subclass decides the reply (:meth:`ChatServer.reply`).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from coordbench.testing import LoopbackServer


class ChatServer:
    """Serves ``/v1/chat/completions``; use as a context manager, or ``start()`` and ``stop()``."""

    model = "local"
    """The model named in replies when the request names none."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""
        self._server = LoopbackServer(
            lambda _url: Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])
        )

    def start(self) -> str:
        """Serve on a free loopback port; returns the OpenAI base URL (ending in ``/v1``)."""
        self.base_url = self._server.start() + "v1"
        return self.base_url

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def reply(self, body: dict[str, Any]) -> dict[str, Any] | JSONResponse:
        """The assistant message answering ``body`` (or a whole response, for an HTTP error)."""
        raise NotImplementedError

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        message = await self.reply(body)
        if isinstance(message, JSONResponse):
            return message
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", self.model),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )
