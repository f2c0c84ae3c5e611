"""One ASGI middleware that bounds every request body, counting bytes as they stream.

A route that reads its whole body before looking at it (a2a-sdk's JSON-RPC handler, a JSON
endpoint) would hold a 400 MB chunked upload in memory before it could answer. This
middleware answers 413 as soon as the cap is passed: at once for a declared
``Content-Length`` over the cap, and for a chunked body as soon as the bytes received pass it,
without reading further. The route sees :class:`BodyTooLargeError` from its ``receive``; if it
answers anyway (some handlers catch every exception and reply 200 with an error of their own),
its answer is replaced by the 413, unless it is already a 413 (a route with its own protocol's
413 body, such as OTLP's). Every app coordbench serves (receiver, green, purple agents) is
wrapped in it; the caps come from :class:`~coordbench.settings.Settings`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from coordbench.errors import CoordbenchError

__all__ = ["BodyLimitMiddleware", "BodyTooLargeError"]

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]


class BodyTooLargeError(CoordbenchError):
    """The request body passed its cap; the client gets 413."""

    default_message = "request body too large"

    def __init__(self, limit: int) -> None:
        """Create the error for a cap of ``limit`` bytes."""
        super().__init__(f"request body larger than {limit} bytes")
        self.limit = limit


def _answer(limit: int) -> tuple[Message, Message]:
    body = json.dumps({"detail": f"request body larger than {limit} bytes"}).encode()
    start: Message = {
        "type": "http.response.start",
        "status": 413,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ],
    }
    return start, {"type": "http.response.body", "body": body, "more_body": False}


class BodyLimitMiddleware:
    """Answers 413 to any HTTP request whose body passes its cap.

    Args:
        app: The ASGI app.
        limit: The cap in bytes, for every path ``limit_for`` does not name.
        limit_for: A path's own cap (``None``: use ``limit``), e.g. a larger one for OTLP exports.
    """

    def __init__(self, app: ASGIApp, *, limit: int, limit_for: Callable[[str], int | None] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.limit_for = limit_for

    def _cap(self, path: str) -> int:
        specific = self.limit_for(path) if self.limit_for is not None else None
        return self.limit if specific is None else specific

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, cutting its body off at the cap."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        limit = self._cap(str(scope.get("path", "")))
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                start, body = _answer(limit)
                await send(start)
                await send(body)
                return
        received = 0
        tripped = False
        started = False
        replaced = False

        async def limited_receive() -> Message:
            nonlocal received, tripped
            if tripped:
                raise BodyTooLargeError(limit)
            message: Message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    tripped = True
                    raise BodyTooLargeError(limit)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started, replaced
            if message.get("type") == "http.response.start":
                started = True
                if tripped and message.get("status") != 413:
                    replaced = True
                    start, body = _answer(limit)
                    await send(start)
                    await send(body)
                    return
            elif replaced:
                return  # the app's own answer to a body it never fully got: dropped for the 413
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLargeError:
            if not started:
                start, body = _answer(limit)
                await send(start)
                await send(body)
