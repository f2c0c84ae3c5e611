r"""One ASGI middleware that refuses JSON request bodies nothing downstream can hold.

Three things break whatever handles a JSON body next with a 500:

- bytes that are **not UTF-8** sent to an A2A route (a2a-sdk decodes them without catching the
  error, whatever the ``Content-Type``);

- a **lone UTF-16 surrogate** (``"\ud800"``): the first serializer to meet it raises
  ``UnicodeEncodeError``, and the route answers 500 (a2a-sdk echoes a JSON-RPC ``id`` into its
  answer; FastAPI echoes a bad value into its validation error);
- **NaN or Infinity** (``NaN`` is not JSON, but Python reads it): FastAPI's 422 answer cannot
  render it either.

:class:`JsonGuardMiddleware` reads the (already size-capped) body of every JSON request, and of
every request to an A2A route whatever its ``Content-Type``, once, and answers such a body
itself with a message naming the field: a JSON-RPC parse error on the A2A JSON-RPC path, the
REST binding's ``400 INVALID_ARGUMENT`` on its routes (which answer lone surrogates and NaN
themselves), ``422`` with FastAPI's ``{"detail": [...]}`` shape elsewhere. Every other body goes
to the route unchanged, which answers as it always did.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

from starlette.routing import BaseRoute, Match

from coordbench.server.bodylimit import ASGIApp, Message, Receive, Scope, Send

__all__ = ["JsonGuardMiddleware", "json_problem"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Constant:
    """What ``NaN``, ``Infinity`` or ``-Infinity`` parse to, so the walk can say where they were."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _where(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path)) or "body"


def json_problem(data: bytes) -> tuple[list[str | int], str] | None:
    r"""The first field of a JSON body that downstream code cannot hold, and why; ``None`` if none.

    Returns ``None`` for a body that is not JSON at all (the route answers that itself). The
    document is walked without recursion, so nesting depth costs nothing but time.

    Example:
        >>> json_problem(b'{"name": "x", "tags": [1, NaN]}')
        (['tags', 1], 'NaN is not a JSON number')
        >>> json_problem(b'{"id": "\\ud800"}')
        (['id'], 'holds an unpaired UTF-16 surrogate')
        >>> json_problem(b'{"ok": "\\ud83d\\ude00"}') is None
        True
    """
    try:
        document = json.loads(data, parse_constant=_Constant)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[Any, list[str | int]]] = [(document, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Constant):
            return path, f"{node.name} is not a JSON number"
        if isinstance(node, str):
            if _LONE_SURROGATE.search(node):
                return path, "holds an unpaired UTF-16 surrogate"
        elif isinstance(node, dict):
            items = list(cast("dict[str, Any]", node).items())
            for key, value in reversed(items):
                if _LONE_SURROGATE.search(key):
                    return [*path, _LONE_SURROGATE.sub("\ufffd", key)], "the key holds an unpaired UTF-16 surrogate"
                stack.append((value, [*path, key]))
        elif isinstance(node, list):
            values = cast("list[Any]", node)
            stack.extend((value, [*path, i]) for i, value in reversed(list(enumerate(values))))
    return None


def _is_json(scope: Scope) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return b"json" in value.lower()
    return False


class JsonGuardMiddleware:
    """Answers bodies no JSON consumer downstream can hold before a route sees them.

    Args:
        app: The ASGI app.
        jsonrpc_paths: Paths served by a JSON-RPC handler (any ``Content-Type``): refused bodies
            get a JSON-RPC parse error (code -32700, HTTP 200, as a2a-sdk answers unparsable JSON).
        rest: Whether a path belongs to an A2A REST binding (any ``Content-Type``): a body that is
            not UTF-8 gets its ``400 INVALID_ARGUMENT``; the binding answers the rest itself.
        skip: Paths whose routes read JSON their own way (the OTLP receiver mends surrogates).
        json_routes: Every other route reads its body as JSON whatever the ``Content-Type`` says
            (FastAPI's do): check every body a route will read, not only those labelled JSON. A
            request no route serves (404, 405) is passed on unread, so its answer does not wait
            for, or cap, a body nobody reads.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        jsonrpc_paths: frozenset[str] = frozenset({"/"}),
        rest: Callable[[str], bool] | None = None,
        skip: Callable[[str], bool] | None = None,
        json_routes: bool = False,
    ) -> None:
        self.app = app
        self.json_routes = json_routes
        self.jsonrpc_paths = jsonrpc_paths
        self.rest = rest
        self.skip = skip

    def _kind(self, scope: Scope) -> str | None:
        """How this request's body is checked: ``jsonrpc``, ``rest``, ``json``, or not at all (``None``)."""
        path = str(scope.get("path", ""))
        if scope.get("type") != "http" or scope.get("method") not in {"POST", "PUT", "PATCH"}:
            return None
        if self.skip is not None and self.skip(path):
            return None
        if path in self.jsonrpc_paths:
            return "jsonrpc"
        if self.rest is not None and self.rest(path):
            return "rest"
        if self.json_routes:
            return "json" if _routed(scope) else None
        return "json" if _is_json(scope) else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the body, then serve the request (or answer it)."""
        kind = self._kind(scope)
        if kind is None:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message: Message = await receive()
            if message.get("type") != "http.request":
                await self.app(scope, _replay(message, receive), send)  # disconnected: let the route see it
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = _utf8_problem(body)
        if problem is None and kind != "rest":
            problem = json_problem(body)
        if problem is None:
            await self.app(scope, _replay({"type": "http.request", "body": body, "more_body": False}, receive), send)
            return
        where, why = problem
        status, answer = _answer(kind, where, why)
        encoded = json.dumps(answer).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(encoded)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": encoded, "more_body": False})


def _routed(scope: Scope) -> bool:
    """Whether a route of the Starlette app serving ``scope`` takes this request (path and method)."""
    app = scope.get("app")
    routes: list[BaseRoute] = getattr(getattr(app, "router", None), "routes", [])
    return any(route.matches(scope)[0] is Match.FULL for route in routes)


def _utf8_problem(body: bytes) -> tuple[list[str | int], str] | None:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], f"the body is not UTF-8 text (byte {exc.start})"
    return None


def _answer(kind: str, where: list[str | int], why: str) -> tuple[int, dict[str, Any]]:
    """The status and body that refuse a request, in the protocol of its route."""
    if kind == "jsonrpc":
        return 200, {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": f"Parse error: {_where(where)}: {why}"},
        }
    if kind == "rest":
        return 400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": f"{_where(where)}: {why}"}}
    return 422, {"detail": [{"type": "json_invalid", "loc": ["body", *where], "msg": why}]}


def _replay(first: Message, receive: Receive) -> Receive:
    """A ``receive`` that gives ``first`` (the body read already), then defers to the real one."""
    pending = [first]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return cast("Message", await receive())

    return replay
