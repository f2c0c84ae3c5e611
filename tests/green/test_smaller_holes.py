"""The smaller holes of the hardening issue, each as it was found: protected metrics, bodies that were 500s,
a traceback per bad request, and a participant's card asked for again at every scenario."""

from __future__ import annotations

import json
import logging
import os

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from coordbench.testing import LoopbackServer
from green.conftest import StartGreen
from support.commands import ServerProcess, send_assessment

pytestmark = pytest.mark.slow


def test_metrics_need_the_token_when_one_is_set(start_green: StartGreen) -> None:
    green = start_green(token="metrics-token")
    base = green.url.rstrip("/")
    assert httpx.get(f"{base}/metrics").status_code == 401
    answer = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer metrics-token"})
    assert answer.status_code == 200 and "coordbench_" in answer.text
    for path in ("/docs", "/openapi.json", "/reports", "/peers", "/v1/stats"):  # guarded by default
        assert httpx.get(f"{base}{path}").status_code == 401, path
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/.well-known/agent-card.json").status_code == 200


def test_the_token_guards_everything_but_the_a2a_routes_and_healthz(start_green: StartGreen) -> None:
    """GET / (the endpoint list and version) needs the token as docs/security.md says; POST / (A2A) does not."""
    green = start_green(token="root-token")
    base = green.url.rstrip("/")
    assert httpx.get(f"{base}/").status_code == 401
    listed = httpx.get(f"{base}/", headers={"Authorization": "Bearer root-token"})
    assert listed.status_code == 200 and "version" in listed.json()
    call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}
    answer = httpx.post(f"{base}/", json=call, headers={"A2A-Version": "1.0"})
    assert answer.status_code == 200 and "error" in answer.json()  # the agent answered, not the token check


@pytest.mark.parametrize(
    ("body", "loc", "message"),
    [
        (b'{"name": "a", "url": "http://h/", "description": NaN}', ["body", "description"], "NaN is not a JSON number"),
        (b'{"name": "a", "url": "http://h/", "tags": [Infinity]}', ["body", "tags", 0], "Infinity is not a JSON"),
        (b'{"name": "\\ud800", "url": "http://h/"}', ["body", "name"], "unpaired UTF-16 surrogate"),
        (b'{"\\udc00": 1}', ["body", "\ufffd"], "the key holds an unpaired UTF-16 surrogate"),
        (b"\xff\xfe not text", ["body"], "the body is not UTF-8 text (byte 0)"),
    ],
)
def test_register_answers_422_naming_the_field(
    start_green: StartGreen, body: bytes, loc: list[object], message: str
) -> None:
    green = start_green()
    answer = httpx.post(f"{green.url.rstrip('/')}/register", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["detail"]
    assert detail["loc"] == loc and message in detail["msg"]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "SendMessage", "params": {}}', "application/json",
         "Parse error: id: holds an unpaired UTF-16 surrogate"),
        (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "SendMessage"}', "application/x-protobuf",
         "Parse error: id: holds an unpaired UTF-16 surrogate"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"x": NaN}}', "application/json",
         "Parse error: params.x: NaN is not a JSON number"),
        (b"\xa9X\x0c\xc3", "application/grpc", "Parse error: body: the body is not UTF-8 text (byte 0)"),
    ],
)  # fmt: skip
def test_a2a_json_rpc_answers_a_parse_error_not_500(
    start_green: StartGreen, body: bytes, content_type: str, message: str
) -> None:
    green = start_green()
    answer = httpx.post(green.url, content=body, headers={"content-type": content_type, "A2A-Version": "1.0"})
    assert answer.status_code == 200
    assert answer.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}}


def test_a2a_rest_answers_400_to_a_body_that_is_not_text(start_green: StartGreen) -> None:
    green = start_green()
    answer = httpx.post(
        f"{green.url.rstrip('/')}/rest/message:send",
        content=b"\xa9X\x0c",
        headers={"content-type": "application/json", "A2A-Version": "1.0"},
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_each_rejected_request_logs_one_line_not_a_traceback(
    start_green: StartGreen, caplog: pytest.LogCaptureFixture
) -> None:
    green = start_green()
    bad = [
        b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {"parts": 7}}}',
        b'{"jsonrpc": "2.0", "id": {"no": 1}, "method": "SendMessage"}',
    ]
    with caplog.at_level(logging.WARNING):
        for _ in range(20):
            for body in bad:
                answer = httpx.post(green.url, content=body, headers={"content-type": "application/json"})
                assert answer.status_code == 200 and "error" in answer.json()
    rejected = [r for r in caplog.records if r.name.startswith("a2a.")]
    assert len(rejected) >= 40
    assert all(r.exc_info is None and r.exc_text is None for r in rejected)
    assert all("\n" not in r.getMessage() for r in rejected)
    assert "Traceback" not in caplog.text


def test_a_card_that_cannot_be_read_is_asked_for_once_per_assessment(tmp_path: object) -> None:
    """A participant whose card fails cost (1 + scenarios) x timeout; now the failure is remembered."""
    asked: list[str] = []

    async def card(request: Request) -> JSONResponse:
        asked.append(request.url.path)
        return JSONResponse({"error": "no card here"}, status_code=500)

    broken = LoopbackServer(lambda _url: Starlette(routes=[Route("/.well-known/agent-card.json", card)]))
    url = broken.start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBEATS_LLM")}
        with ServerProcess("green", "--output-dir", str(tmp_path), env=env) as green:
            scenarios = [{"id": f"s{i}", "task": "Say hello"} for i in range(4)]
            request = {"participants": {"coordinator": url}, "config": {"scenarios": scenarios, "trace_timeout": 0}}
            answer = send_assessment(green.url, request)
    finally:
        broken.stop()
    assert asked == ["/.well-known/agent-card.json"]
    task = answer["result"]["task"]
    text = json.dumps(task)
    assert text.count("cannot read the agent card") >= 4  # every scenario says why
