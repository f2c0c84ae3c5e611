"""The README's zero-code command, as written: agents under ``opentelemetry-instrument`` with httpx traced too.

httpx's auto-instrumentation puts an HTTP CLIENT span between the caller's A2A CLIENT span and
the callee's SERVER span. The trace must still be complete (no wait until ``trace_timeout``),
read back complete through the receiver, and score exactly as the same team instrumented in
code.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import httpx
import pytest

from coordbench.a2a import Messenger
from coordbench.evals.config import LLM_API_KEY_ENV
from green.conftest import StartGreen
from support.processes import RELAY, AgentProcess

pytestmark = pytest.mark.slow

README = Path(__file__).parent.parent.parent / "README.md"
TASK = "Review the launch plan: owners, dates and risks."


def readme_command() -> tuple[dict[str, str], list[str]]:
    """The variables and the command of the README's zero-code example."""
    match = re.search(r"<!-- example:zero-code -->\s*```bash\n(.*?)```", README.read_text(), re.S)
    assert match is not None, "README lost its zero-code example"
    words = shlex.split(match.group(1).replace("\\\n", " "))
    variables = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
    command = [w for w in words if not re.match(r"^[A-Z_]+=", w)]
    assert command[:1] == ["opentelemetry-instrument"], command
    return variables, command


def zero_code(name: str, endpoint: str, base: dict[str, str], *extra: str) -> AgentProcess:
    """A relay agent started as the README says: its variables (endpoint ours), under opentelemetry-instrument."""
    variables, command = readme_command()
    assert variables["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://localhost:4318"
    assert variables["OTEL_METRICS_EXPORTER"] == variables["OTEL_LOGS_EXPORTER"] == "none"
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    assert instrument is not None
    env = {k: v for k, v in base.items() if not k.startswith("OTEL_")}
    env.update(variables)
    env.update(
        {
            "OTEL_SERVICE_NAME": name,
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint.rstrip("/"),
            "OTEL_BSP_SCHEDULE_DELAY": "50",  # the test's only addition: export promptly
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
        }
    )
    # `python agent.py` is our relay agent; nothing else of the command changes
    assert command[1:] == ["python", "agent.py"], command
    return AgentProcess([instrument, sys.executable, RELAY, "--name", name, *extra], env)


def in_code(name: str, endpoint: str, base: dict[str, str], *extra: str) -> AgentProcess:
    """The same agent, instrumented in code (configure_tracing + A2AInstrumentor, no httpx spans)."""
    env = {k: v for k, v in base.items() if not k.startswith("OTEL_")}
    env.update(
        {
            "OTEL_SERVICE_NAME": name,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint.rstrip("/"),
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
        }
    )
    return AgentProcess([sys.executable, RELAY, "--name", name, "--configure-tracing", *extra], env)


async def assess(green_url: str, coordinator: str, workers: dict[str, str]) -> dict[str, object]:
    request = {
        "participants": {"coordinator": coordinator, **workers},
        "config": {
            "scenarios": [{"id": "review", "task": TASK, "references": ["owners, dates and the main risks"]}],
            "trace_timeout": 20,
            "trace_quiet": 0.5,
        },
    }
    async with Messenger(timeout=120) as messenger:
        reply = await messenger.send(green_url, json.dumps(request))
    assert reply.state == "completed", reply.text
    return reply.data[0]


async def test_the_readme_zero_code_command_gives_complete_traces_and_the_same_score(
    start_green: StartGreen,
    processes: list[AgentProcess],
    subprocess_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    green = start_green()
    rows = {}
    for mode, start in (("zero-code", zero_code), ("in-code", in_code)):
        # the workers take 0.3 s: the coordinator's own time cannot dominate, so no timing enters the score
        workers = {role: start(role, green.url, subprocess_env, "--delay", "0.3") for role in ("worker-a", "worker-b")}
        coordinator = start("coordinator", green.url, subprocess_env, "--behaviour", "fanout", "--parallel")
        processes.extend([*workers.values(), coordinator])
        rows[mode] = await assess(green.url, coordinator.url, {r: p.url for r, p in workers.items()})
        for process in [*workers.values(), coordinator]:
            errors = process.stop()
            assert "Traceback" not in errors and "Failed to export" not in errors, errors
    zero, code = rows["zero-code"], rows["in-code"]
    entry = zero["detail"]["scenarios"][0]  # type: ignore[index]
    assert entry["trace_complete"] is True, entry["completeness"]
    # complete before the 20 s trace_timeout, not cut off by it
    assert entry["completeness"]["timed_out"] is False and entry["completeness"]["unmatched_clients"] == []
    # httpx's HTTP client spans were there, between the A2A spans
    async with httpx.AsyncClient(base_url=green.url, timeout=30) as http:
        spans = (await http.get(f"/v1/traces/{entry['trace_id']}")).json()["spans"]
    assert any(s["kind"] == "CLIENT" and s["scope"].startswith("opentelemetry.instrumentation.httpx")
               for s in spans)  # fmt: skip
    # the same evaluation as the team instrumented in code: every part, the score, the shape
    code_entry = code["detail"]["scenarios"][0]  # type: ignore[index]
    parts = {k: v["value"] for k, v in entry["results"]["coordination"]["parts"].items()}
    assert parts == {k: v["value"] for k, v in code_entry["results"]["coordination"]["parts"].items()}
    assert parts["participation"] == parts["parallelism"] == parts["robustness"] == 1.0
    assert entry["score"] == code_entry["score"]
    assert entry["results"]["graph"]["topology"] == code_entry["results"]["graph"]["topology"] == "star"


async def test_the_receiver_sees_a_zero_code_call_chain_complete(
    start_backend: object, processes: list[AgentProcess], subprocess_env: dict[str, str]
) -> None:
    backend = start_backend()  # type: ignore[operator]
    c = zero_code("c", backend.url, subprocess_env)
    b = zero_code("b", backend.url, subprocess_env)
    a = zero_code("a", backend.url, subprocess_env, "--behaviour", "fanout")
    processes.extend([a, b, c])
    peers = {"b": b.url, "c": c.url}
    async with Messenger(timeout=60) as messenger:
        reply = await messenger.send(a.url, TASK, data={"peers": peers})
    assert reply.ok, reply.text
    for process in (a, b, c):
        assert "Traceback" not in process.stop()
    async with httpx.AsyncClient(base_url=backend.url, timeout=30) as http:
        listing = (await http.get("/v1/traces")).json()["traces"]
    chains = [t for t in listing if {"a", "b", "c"} <= set(t["services"])]
    assert len(chains) == 1, listing
    # read back as the README says, with curl: the trace once complete (the exporter's batch delay waited out)
    readme = README.read_text()
    (line,) = re.findall(r"^curl '(localhost:4318/v1/traces/<trace_id>\?wait=\d+)'", readme, re.M)
    url = line.replace("localhost:4318", backend.url.removeprefix("http://").rstrip("/"))
    url = url.replace("<trace_id>", chains[0]["trace_id"])
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    command = await asyncio.create_subprocess_exec(curl, "-s", url, stdout=asyncio.subprocess.PIPE)
    printed, _ = await asyncio.wait_for(command.communicate(), 60)
    assert command.returncode == 0
    trace = json.loads(printed)
    assert trace["completeness"]["complete"] is True, trace["completeness"]
    assert trace["completeness"]["unmatched_clients"] == []
