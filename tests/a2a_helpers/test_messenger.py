"""The shared messenger against real agents on loopback: replies, failures, timeouts, auth, caching."""

from __future__ import annotations

import pytest
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from conftest import StartAgent
from coordbench.a2a import AgentCallError, Messenger, build_agent_card
from coordbench.testing import LoopbackServer


async def test_replies_text_and_data(start_agent: StartAgent) -> None:
    url = start_agent("Echo")
    async with Messenger(timeout=30) as messenger:
        reply = await messenger.send(url, "hi", data={"peers": {}})
        assert (reply.state, reply.text, reply.ok) == ("completed", "Echo(hi)", True)
        assert reply.task_id and reply.context_id and reply.duration_ms > 0
        assert await messenger.agent_name(url) == "Echo"
        # the conversation continues unless asked otherwise
        again = await messenger.send(url, "again")
        assert again.context_id == reply.context_id
        fresh = await messenger.send(url, "new", new_conversation=True)
        assert fresh.context_id != reply.context_id
        assert len(messenger._clients) == 1  # one cached client per URL


async def test_message_replies_and_failed_tasks(start_agent: StartAgent) -> None:
    plain = start_agent("Plain", behaviour="message")
    failing = start_agent("Failing", behaviour="fail")
    async with Messenger(timeout=30, streaming=False) as messenger:
        assert (await messenger.send(plain, "x")).state == "message"
        failed = await messenger.send(failing, "x")
        assert (failed.state, failed.text, failed.ok) == ("failed", "Failing gave up", False)


async def test_unreachable_slow_and_empty_calls(start_agent: StartAgent) -> None:
    slow = start_agent("Slow", delay=2.0)
    async with Messenger(timeout=0.5) as messenger:
        with pytest.raises(AgentCallError, match=r"did not answer within 0.5 s"):
            await messenger.send(slow, "x")
        with pytest.raises(AgentCallError, match=r"cannot read the agent card at http://127.0.0.1:9/"):
            await messenger.send("http://127.0.0.1:9/", "x")
        with pytest.raises(ValueError, match="a message needs text or data"):
            await messenger.send(slow)
        # a URL's credentials stay out of the error, which ends up in results and status messages
        with pytest.raises(AgentCallError) as caught:
            await messenger.send(slow.replace("http://", "http://bot:s3cret@", 1) + "?key=s3cret", "x")
        assert "s3cret" not in str(caught.value)
        assert "http://REDACTED:REDACTED@127.0.0.1:" in str(caught.value)


async def test_bearer_token_is_sent() -> None:
    seen: list[str | None] = []

    def app(url: str) -> Starlette:
        card = build_agent_card("Guarded", url, description="d")

        async def card_route(request: Request) -> JSONResponse:
            seen.append(request.headers.get("authorization"))
            return JSONResponse(MessageToDict(card))

        return Starlette(routes=[Route("/.well-known/agent-card.json", card_route)])

    with LoopbackServer(app) as url:
        async with Messenger(timeout=10, token="t0ken") as messenger:
            assert await messenger.agent_name(url) == "Guarded"
    assert seen == ["Bearer t0ken"]
