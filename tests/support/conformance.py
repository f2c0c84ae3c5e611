"""The AgentBeats templates' conformance checks (tests/test_agent.py there), over the 0.3 wire format.

``check_card`` is their card validation; ``check_hello`` sends a plain ``"Hello"`` with
``message/send`` and ``message/stream`` and checks every event as they do: each has a
``kind``, a task has an ``id`` and a ``status.state``, an artifact update has non-empty parts,
a message's role is ``agent``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

REQUIRED = (
    "name",
    "description",
    "url",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)


def check_card(url: str) -> dict[str, Any]:
    card = httpx.get(url.rstrip("/") + "/.well-known/agent-card.json", timeout=10).json()
    missing = [k for k in REQUIRED if k not in card]
    assert not missing, f"card lacks {missing}"
    assert card["url"].startswith(("http://", "https://")), card["url"]
    assert isinstance(card["capabilities"], dict)
    for key in ("defaultInputModes", "defaultOutputModes"):
        assert isinstance(card[key], list) and all(isinstance(m, str) for m in card[key]), key
    assert isinstance(card["skills"], list) and card["skills"], "no skills"
    return card


def _check_event(event: dict[str, Any]) -> None:
    assert "kind" in event, event
    if event["kind"] == "task":
        assert event.get("id") and event.get("status", {}).get("state"), event
    elif event["kind"] == "artifact-update":
        assert event["artifact"]["parts"], event
    elif event["kind"] == "message":
        assert event["role"] == "agent", event


def _message() -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": "Hello"}],
    }


def check_hello(url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Send "Hello" both ways; returns the non-streaming result and the streamed events."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": _message()}}
    result = httpx.post(url, json=body, timeout=60).json()
    assert "result" in result, result
    _check_event(result["result"])
    body = {"jsonrpc": "2.0", "id": 2, "method": "message/stream", "params": {"message": _message()}}
    events: list[dict[str, Any]] = []
    with httpx.stream("POST", url, json=body, timeout=60, headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data:"):
                payload = json.loads(line[5:])
                assert "result" in payload, payload
                events.append(payload["result"])
                _check_event(payload["result"])
    assert events
    return result["result"], events
