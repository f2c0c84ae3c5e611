"""The compose file's commands, variables and ports, proven by running them (Docker cannot run here).

Each coordbench service of ``docker-compose.yaml`` runs as a local process with its image's
entrypoint (read from its Dockerfile), its compose command and its environment; service names map
to loopback ports, ``./output`` to a temporary folder, the OpenTelemetry Collector is stood in for
by rotel (PyPI) and Jaeger by a small OTLP sink. Then the one-shot client's command runs, and the
results it and the green wrote are checked. The AgentBeats compose generator is tested against a
local stand-in for the AgentBeats API over real HTTP.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
import yaml

from coordbench.demo import rotel_settings
from coordbench.evals.config import LLM_API_KEY_ENV
from support.otlp_sink import OtlpSink
from support.serving import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent.parent
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())


def _dockerfile(image: str) -> tuple[list[str], dict[str, str]]:
    name = {"coordbench-green:local": "Dockerfile.green", "coordbench-purple:local": "Dockerfile.purple"}[image]
    text = (ROOT / name).read_text()
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (.+)$", text, re.M).group(1))  # type: ignore[union-attr]
    env: dict[str, str] = {}
    for block in re.findall(r"^ENV (.+?)(?<!\\)$", text, re.M | re.S):
        env.update(dict(re.findall(r'([A-Z_]+)=("[^"]*"|\S+)', block.replace("\\\n", " "))))
    env.pop("PATH", None)
    return entrypoint, {k: v.strip('"') for k, v in env.items()}


@pytest.fixture
def stack(tmp_path: Path, otlp_sink: OtlpSink, subprocess_env: dict[str, str]) -> Iterator[dict[str, Any]]:
    services: dict[str, Any] = COMPOSE["services"]
    ports = {name: free_port() for name in services}
    output = tmp_path / "output"
    output.mkdir()
    rotel_http = ports["otel-collector"]

    def local(value: str) -> str:
        # compose's own interpolation: ${NAME:-default} is NAME from the environment (never a key), else the default
        def given(name: str) -> str:
            return "" if name == LLM_API_KEY_ENV else subprocess_env.get(name, "")

        value = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: given(m[1]) or m[2], value)
        value = value.replace("0.0.0.0", "127.0.0.1")  # noqa: S104 - rewriting the compose file's bind address
        for name, port in ports.items():
            host = "127.0.0.1"
            if name == "otel-collector":
                value = value.replace("http://otel-collector:4318", f"http://{host}:{rotel_http}")
            elif name == "jaeger":
                value = value.replace("http://jaeger:4318", otlp_sink.url.rstrip("/"))
            value = value.replace(f"http://{name}:9009", f"http://{host}:{port}")
        return value.replace("/app/output", str(output))

    processes: list[subprocess.Popen[bytes]] = []
    logs: list[Any] = []
    base = {k: v for k, v in subprocess_env.items() if not k.startswith(("OTEL_", "PURPLE_")) and k != LLM_API_KEY_ENV}
    import rotel  # pyright: ignore[reportMissingImports]

    agent = Path(rotel.__file__).parent / "rotel-agent"
    # the demo's rotel settings (collector/rotel.env), pointed at this stack's green
    rotel_env = {**base, **rotel_settings(http_port=rotel_http, grpc_port=free_port(),
                                          green=f"http://127.0.0.1:{ports['green']}", folder=tmp_path)}  # fmt: skip
    processes.append(subprocess.Popen([str(agent), "start"], env=rotel_env))
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for name, service in services.items():
        image = service.get("image", "")
        if not image.startswith("coordbench-") or service.get("profiles"):
            continue  # `docker compose up` starts no profile's services
        entrypoint, defaults = _dockerfile(image)
        entrypoint = service.get("entrypoint", entrypoint)
        command = [local(str(part)) for part in service.get("command", [])]
        if "--port" in command:
            command[command.index("--port") + 1] = str(ports[name])
        env = {**base, **defaults, **{k: local(str(v)) for k, v in (service.get("environment") or {}).items()}}
        env = {k: v for k, v in env.items() if v != "" or k != LLM_API_KEY_ENV}
        assert entrypoint[0] == "coordbench", entrypoint  # the image's script: run it with this interpreter
        commands[name] = ([sys.executable, "-m", "coordbench", *entrypoint[1:], *command], env)
    for name, (command, env) in commands.items():
        if COMPOSE["services"][name].get("restart") == "no":
            continue
        log = (tmp_path / f"{name}.log").open("wb")
        logs.append(log)
        processes.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 90
        for name, service in services.items():
            test = (service.get("healthcheck") or {}).get("test", [])
            urls = [local(t) for t in test if isinstance(t, str) and t.startswith("http://127.0.0.1:9009")]
            for url in urls:
                url = url.replace("127.0.0.1:9009", f"127.0.0.1:{ports[name]}")
                while True:
                    try:
                        if httpx.get(url, timeout=2).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    assert time.monotonic() < deadline, (
                        f"{name} never became healthy: {(tmp_path / f'{name}.log').read_text()}"
                    )
                    time.sleep(0.2)
        yield {"commands": commands, "output": output, "ports": ports, "tmp": tmp_path, "sink": otlp_sink}
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        for log in logs:
            log.close()


def test_the_compose_stack_runs_an_assessment_as_written(stack: dict[str, Any]) -> None:
    command, env = stack["commands"]["assess"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    output: Path = stack["output"]
    results = json.loads((output / "results.json").read_text())
    (row,) = results["results"]
    assert set(results["participants"]) == {"coordinator", "researcher", "analyst", "writer"}
    scenarios = row["detail"]["scenarios"]
    assert scenarios and all(s["trace_complete"] for s in scenarios), [s["completeness"] for s in scenarios]
    assert {s["results"]["graph"]["topology"] for s in scenarios} == {"star"}
    # the green wrote the same results and the report into ./output (the only host path)
    assert (output / "report.html").read_text().count("data-scenario=") == len(scenarios)
    assert json.loads((output / "results.json").read_text()) == results
    # the green's own spans went where its OTEL_* say (Jaeger's place: the sink)
    assert any(s.service_name == "coordbench-green" for s in stack["sink"].spans)


class _AgentBeatsAPI(http.server.BaseHTTPRequestHandler):
    images: ClassVar[dict[str, str]] = {
        "green-id": "ghcr.io/example/coordbench-green:v1",
        "purple-id": "ghcr.io/example/coordbench-purple:v1",
    }

    def do_GET(self) -> None:
        agent = self.path.removeprefix("/api/agents/")
        image = self.images.get(agent)
        body = json.dumps({"id": agent, "docker_image": image} if image else {"detail": "not found"}).encode()
        self.send_response(200 if image else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return None


def _scenario(tmp_path: Path, ids: list[str]) -> Path:
    lines = [f'[green_agent]\nagentbeats_id = "{ids[0]}"\nenv = {{ KEY = "${{SECRET_KEY}}" }}\n']
    for i, agent in enumerate(ids[1:]):
        lines.append(
            f'[[participants]]\nagentbeats_id = "{agent}"\nname = "member{i}"\nenv = {{ PURPLE_ROLE = "writer" }}\n'
        )
    lines.append("[config]\ntrace_timeout = 30\n")
    path = tmp_path / "scenario.toml"
    path.write_text("\n".join(lines))
    return path


def test_generate_compose_resolves_ids_and_says_what_is_wrong(tmp_path: Path) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AgentBeatsAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = f"http://127.0.0.1:{server.server_address[1]}"
    script = [sys.executable, str(ROOT / "scripts" / "leaderboard" / "generate_compose.py")]
    try:
        known = subprocess.run([*script, "--scenario", str(_scenario(tmp_path, ["green-id", "purple-id", "purple-id"])),
                                "--api", api, "--output-dir", str(tmp_path / "out")],
                               capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert known.returncode == 0, known.stderr
        compose = yaml.safe_load((tmp_path / "out" / "docker-compose.yml").read_text())
        assert compose["services"]["green-agent"]["image"] == "ghcr.io/example/coordbench-green:v1"
        assert compose["services"]["member1"]["image"] == "ghcr.io/example/coordbench-purple:v1"
        assert compose["services"]["agentbeats-client"]["depends_on"]["member0"] == {"condition": "service_healthy"}
        assert "--card-url" in compose["services"]["member0"]["command"]
        assert (tmp_path / "out" / ".env.example").read_text() == "SECRET_KEY=\n"
        assert 'endpoint = "http://member1:9009"' in (tmp_path / "out" / "a2a-scenario.toml").read_text()
        unknown = subprocess.run([*script, "--scenario", str(_scenario(tmp_path, ["green-id", "nobody"])), "--api", api,
                                  "--output-dir", str(tmp_path / "x")], capture_output=True, text=True, timeout=60,
                                 check=False)  # fmt: skip
        assert unknown.returncode == 2 and "unknown agentbeats_id 'nobody'" in unknown.stderr
    finally:
        server.shutdown()
        server.server_close()
    down = subprocess.run([*script, "--scenario", str(_scenario(tmp_path, ["green-id", "purple-id"])),
                           "--api", f"http://127.0.0.1:{free_port()}", "--output-dir", str(tmp_path / "y")],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert down.returncode == 2 and "cannot reach the AgentBeats API" in down.stderr
    assert not (tmp_path / "y").exists()


def test_record_provenance_without_docker_says_why(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(json.dumps({"services": {"green-agent": {"image": "ghcr.io/example/green:v1"}}}))
    env = {**os.environ, "PATH": str(tmp_path), "GITHUB_RUN_ID": "42"}  # no docker on this PATH
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "leaderboard" / "record_provenance.py"),
                             "--compose", str(compose), "--output", str(tmp_path / "p.json")], env=env,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "p.json").read_text())
    assert record["images"]["green-agent"] == {"image": "ghcr.io/example/green:v1", "digest": None,
                                               "error": "docker is not installed here"}  # fmt: skip
    assert record["github"] == {"run_id": "42"}
