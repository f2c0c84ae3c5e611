"""What an agent answers, as plain dicts: one call through a fresh a2a-sdk client."""

from __future__ import annotations

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest
from google.protobuf.json_format import MessageToDict


async def final_payloads(url: str, *, streaming: bool, text: str = "hi") -> list[dict[str, object]]:
    """Every response event of one call to ``url``, as a plain dict."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)
        request = SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER))
        events = [MessageToDict(e) async for e in client.send_message(request)]
        await client.close()
    return events
