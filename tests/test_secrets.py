"""No credential reaches an output: planted secrets, then a search of everything coordbench wrote.

The secrets are planted where users put them: the LLM judge's base URL (user info and a query
value) and its key, the green's token, a model provider's error that echoes the key back. Then
every output is searched: both ``results.json`` copies, the HTML reports (files and
``GET /reports``), ``assess``'s console, the green's log, and the spans an agent records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.responses import JSONResponse

from coordbench.purple.llm import LLMBackend
from coordbench.purple.roles import Work
from coordbench.testing import RecordingSpanExporter
from support.chat_server import ChatServer
from support.commands import ServerProcess
from support.processes import RELAY, AgentProcess, exporting_env
from support.serving import free_port

PASSWORD = "SECRETPW-1c9e2"
QUERY_KEY = "SECRETQ-77ab0"
API_KEY = "SECRETKEY-3f2d1"
TOKEN = "SECRETTOKEN-e5d0"
PLANTED = (PASSWORD, QUERY_KEY, API_KEY, TOKEN)


def _leaks(text: str) -> list[str]:
    return [secret for secret in PLANTED if secret in text]


@pytest.mark.slow
def test_judge_endpoint_credentials_reach_no_output(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    closed = free_port()  # nothing listens: the judge's endpoint is unreachable, and says so
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = {
        **subprocess_env,
        "AGENTBEATS_LLM_API_KEY": API_KEY,
        "AGENTBEATS_LLM_BASE_URL": f"http://user:{PASSWORD}@127.0.0.1:{closed}/v1?key={QUERY_KEY}",
        "COORDBENCH_TOKEN_FILE": str(token_file),
    }
    output = tmp_path / "green-output"
    log = tmp_path / "green.log"
    with ServerProcess("-v", "green", "--output-dir", str(output), env=env, token=TOKEN, stderr=log) as green:
        participant = AgentProcess(
            [sys.executable, RELAY, "--name", "solo", "--configure-tracing"],
            {**exporting_env(subprocess_env, green.url, "solo"), "COORDBENCH_TOKEN": TOKEN},
        )
        try:
            config = tmp_path / "config.json"
            config.write_text(json.dumps({"scenarios": [{"id": "s1", "task": "Say hello"}], "trace_quiet": 0.2}))
            results = tmp_path / "out" / "results.json"
            assessed = subprocess.run(
                [sys.executable, "-m", "coordbench.cli", "assess", "--green", green.url, "-p",
                 f"solo={participant.url}", "--config", str(config), "--output", str(results)],
                capture_output=True, text=True, env=env, timeout=300,
            )  # fmt: skip
        finally:
            participant.stop()
        assert assessed.returncode == 0, assessed.stderr
        listed = httpx.get(f"{green.url}/reports", headers=green.headers).json()["reports"]
        served = [httpx.get(f"{green.url}{item['url']}", headers=green.headers).text for item in listed]
        assert served
    outputs: dict[str, str] = {"assess stdout": assessed.stdout, "assess stderr": assessed.stderr}
    outputs |= {f"GET /reports #{i}": page for i, page in enumerate(served)}
    for folder in (output, tmp_path / "out"):
        for path in folder.rglob("*"):
            if path.is_file():
                outputs[str(path)] = path.read_text(errors="replace")
    outputs["green log"] = log.read_text()
    results = json.loads((output / "results.json").read_text())
    fallbacks = results["results"][0]["detail"]["judge_fallbacks"]
    assert any("the endpoint is unreachable (http://REDACTED:REDACTED@127.0.0.1" in f for f in fallbacks), fallbacks
    leaked = {name: _leaks(text) for name, text in outputs.items() if _leaks(text)}
    assert leaked == {}


class _EchoingProvider(ChatServer):
    """A model provider that refuses the key and quotes it back, as some do."""

    async def reply(self, body: dict[str, Any]) -> dict[str, Any] | JSONResponse:
        return JSONResponse(
            {"error": {"message": f"Incorrect API key provided: {API_KEY}. Retry at https://u:{PASSWORD}@h/"}},
            status_code=401,
        )


async def test_a_provider_error_that_echoes_the_key_reaches_no_span_and_no_log(
    a2a_instrumented: RecordingSpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    with _EchoingProvider() as base_url:
        backend = LLMBackend(base_url, API_KEY, "small-model")
        contribution = await backend.contribute("writer", "writer", Work(task="Draft the plan", asked="Draft it"))
    assert contribution is None  # the rules answer instead
    (span,) = [s for s in a2a_instrumented.get_finished_spans() if s.name == "chat small-model"]
    recorded = json.dumps(
        {
            "attributes": dict(span.attributes or {}),
            "events": [dict(e.attributes or {}) for e in span.events],
            "status": span.status.description,
        }
    )
    assert "Incorrect API key provided" in recorded  # the error is recorded, redacted
    assert _leaks(recorded) == []
    assert "answering by the rules" in caplog.text
    assert _leaks(caplog.text) == []


def test_an_empty_token_is_refused_and_a_token_file_is_read(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "coordbench.cli", "receiver", "--port", str(free_port()), "--no-grpc"]
    empty = subprocess.run(command, env={**os.environ, "COORDBENCH_TOKEN": ""}, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert empty.returncode == 2
    assert "COORDBENCH_TOKEN: is empty: leave it unset to run without authentication" in " ".join(empty.stderr.split())
    blank = tmp_path / "blank"
    blank.write_text("\n")
    refused = subprocess.run([*command, "--token-file", str(blank)], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "is empty" in refused.stderr
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COORDBENCH_TOKEN")}
    with ServerProcess("receiver", "--no-grpc", "--token-file", str(token_file), env=env, token=TOKEN) as receiver:
        assert httpx.get(f"{receiver.url}/v1/stats").status_code == 401
        assert httpx.get(f"{receiver.url}/v1/stats", headers=receiver.headers).status_code == 200
        assert TOKEN not in " ".join(receiver.proc.args)  # type: ignore[arg-type]
    help_text = subprocess.run([*command[:4], "--help"], capture_output=True, text=True, timeout=120).stdout
    assert "--token-file" in help_text and "process list" in " ".join(help_text.split())
