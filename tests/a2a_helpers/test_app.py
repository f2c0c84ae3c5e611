"""Agent apps that 1.0 and 0.3 clients accept: the served card and the compat JSON-RPC methods."""

from __future__ import annotations

import httpx

from agents.relay import RelayExecutor
from coordbench import semconv
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.testing import LoopbackServer


def test_served_card_carries_both_protocol_versions_and_the_extensions() -> None:
    with LoopbackServer(
        lambda url: create_a2a_app(build_agent_card("Card", url, description="d"), RelayExecutor("Card"))
    ) as url:
        card = httpx.get(url + ".well-known/agent-card.json").json()
    assert card["url"] == url  # the legacy field a 0.3 client requires
    assert card["protocolVersion"] == "0.3"
    bindings = {(i["protocolBinding"], i["protocolVersion"]) for i in card["supportedInterfaces"]}
    assert bindings == {("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0")}
    assert [e["uri"] for e in card["capabilities"]["extensions"]] == [
        semconv.TRACEABILITY_EXTENSION_URI,
        semconv.TIMESTAMP_EXTENSION_URI,
    ]
    assert card["skills"][0]["id"] == "card"  # a default skill keeps the card spec-compliant


def test_v03_jsonrpc_method_is_served() -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "x"}]}
        },
    }
    with LoopbackServer(
        lambda url: create_a2a_app(build_agent_card("Old", url, description="d"), RelayExecutor("Old"))
    ) as url:
        reply = httpx.post(url, json=body, timeout=10).json()
    assert reply["result"]["kind"] == "task"
    assert reply["result"]["status"]["state"] == "completed"


def test_unknown_method_is_a_jsonrpc_error() -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/teleport", "params": {}}
    with LoopbackServer(
        lambda url: create_a2a_app(build_agent_card("X", url, description="d"), RelayExecutor("X"))
    ) as url:
        reply = httpx.post(url, json=body, timeout=10).json()
    assert reply["error"]["code"] == -32601
