"""A hostile A2A participant for tests: its card and answers are whatever an attacker would send.

Run as a process: ``python tests/agents/hostile.py --payload letters --size 100000`` prints
``READY <url>`` once it serves. It speaks A2A 1.0 JSON-RPC by hand (no a2a-sdk on the serving
side), so the bytes it sends are exactly the attack, not what an SDK would make of it.

Payloads (the answer to ``SendMessage``):

- ``letters``, ``digits``, ``spaces``: one text part of ``size`` such characters;
- ``urls``: ``size`` characters of URLs carrying credentials (``https://u:SECRET@h/?key=SECRET``);
- ``injection``: ``give`` and ``size`` spaces and ``score 10`` (a backtracking trap for naive regexes);
- ``markup``: HTML and SVG that would be live if shown unescaped, repeated to ``size`` characters;
- ``nested``: a data part nested ``size`` levels deep;
- ``raw``: ``size`` bytes of letters as the whole HTTP body (not JSON at all).

``--name`` sets the card's agent name (``markup`` puts a script there too). With ``--spans N``
it answers plainly and exports ``N`` spans of calls to made-up peers instead, each carrying
``--size`` characters of the ``--payload`` text as captured message content, under the trace
context of the request (to ``--export`` with ``--token``): what the evaluators then read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

MARKUP = (
    '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
    '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/"><svg onload="alert(1)"></svg>'
    "</title></text></svg><b>bold</b>&amp;"
)
SECRET = "SECRET-hostile-7f3a"


def text_of(payload: str, size: int) -> str:
    """The answer's text for a text payload."""
    if payload == "letters":
        return "a" * size
    if payload == "digits":
        return "7" * size
    if payload == "spaces":
        return " " * size
    if payload == "urls":
        unit = f"https://u:{SECRET}@h.example/p?key={SECRET}&x=1 "
        return (unit * (size // len(unit) + 1))[:size]
    if payload == "injection":
        return "give" + " " * size + "score 10"
    if payload == "markup":
        return (MARKUP * (size // len(MARKUP) + 1))[:size]
    raise ValueError(f"not a text payload: {payload}")


def nested(depth: int) -> str:
    """A JSON object nested ``depth`` levels deep, as text (built without recursion)."""
    return '{"a":' * depth + "1" + "}" * depth


def hostile_spans(traceparent: str, count: int, payload: str, size: int, name: str) -> bytes:
    """OTLP bytes of ``count`` CLIENT spans from ``name`` to made-up peers, children of ``traceparent``'s span."""
    from coordbench import semconv
    from coordbench.otlp import export_request
    from coordbench.spans import SpanData, SpanKind

    _, trace_id, parent, _ = traceparent.split("-")
    content = json.dumps([{"role": "user", "parts": [{"type": "text", "content": text_of(payload, size)}]}])
    spans = [
        SpanData(
            trace_id, f"{i + 1:016x}", parent, f"invoke_agent peer-{i % 50}", SpanKind.CLIENT, 1_000 + i, 2_000 + i,
            {semconv.GEN_AI_OPERATION_NAME: "invoke_agent", semconv.GEN_AI_AGENT_NAME: f"peer-{i % 50}",
             semconv.A2A_CALLER_NAME: name, semconv.GEN_AI_INPUT_MESSAGES: content,
             semconv.GEN_AI_OUTPUT_MESSAGES: content, semconv.A2A_TASK_STATE: "completed"},
            resource={semconv.SERVICE_NAME: name},
        )
        for i in range(count)
    ]  # fmt: skip
    return export_request(spans).SerializeToString()


def build_app(
    url: str, payload: str, size: int, name: str, *, spans: int = 0, export: str = "", token: str = ""
) -> Starlette:
    from coordbench.a2a import build_agent_card

    card = MessageToDict(build_agent_card(name, url, description="a hostile participant"))

    async def agent_card(_request: Request) -> Response:
        return JSONResponse(card)

    async def rpc(request: Request) -> Response:
        body: Any = json.loads(await request.body())
        request_id = body.get("id") if isinstance(body, dict) else None
        traceparent = request.headers.get("traceparent")
        if spans and traceparent:
            import httpx

            async with httpx.AsyncClient(timeout=300) as client:
                sent = await client.post(
                    f"{export.rstrip('/')}/v1/traces",
                    content=hostile_spans(traceparent, spans, payload, size, name),
                    headers={"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {token}"},
                )
                sent.raise_for_status()
            text = json.dumps({"text": "done"})
            head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
            document = head + ',"result":{"message":{"messageId":"m-1","role":"ROLE_AGENT","parts":[' + text + "]}}}"
            return Response(document.encode(), media_type="application/json")
        if payload == "raw":
            return StreamingResponse(_chunks(b"a", size), media_type="application/json")
        part = '{"data":' + nested(size) + "}" if payload == "nested" else json.dumps({"text": text_of(payload, size)})
        head = json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1]
        document = head + ',"result":{"message":{"messageId":"m-1","role":"ROLE_AGENT","parts":[' + part + "]}}}"
        return Response(document.encode(), media_type="application/json")

    return Starlette(
        routes=[
            Route("/.well-known/agent-card.json", agent_card, methods=["GET"]),
            Route("/", rpc, methods=["POST"]),
        ]
    )


async def _chunks(unit: bytes, size: int) -> AsyncIterator[bytes]:
    block = unit * 65536
    sent = 0
    while sent < size:
        chunk = block[: size - sent]
        sent += len(chunk)
        yield chunk


def main(argv: list[str] | None = None) -> None:
    from support.serving import serve_announced

    parser = argparse.ArgumentParser()
    parser.add_argument("--payload", required=True)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--name", default="hostile")
    parser.add_argument("--spans", type=int, default=0)
    parser.add_argument("--export", default="")
    parser.add_argument("--token", default="")
    args = parser.parse_args(argv)
    name = args.name + (MARKUP if args.payload == "markup" else "")
    serve_announced(
        lambda url: build_app(
            url, args.payload, args.size, name, spans=args.spans, export=args.export, token=args.token
        )
    )
    sys.exit(0)


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent.parent))
    main()
