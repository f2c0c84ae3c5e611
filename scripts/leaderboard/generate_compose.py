"""Turn an AgentBeats ``scenario.toml`` into a runnable ``docker-compose.yml`` (the v1 leaderboard flow).

Each agent's ``agentbeats_id`` is resolved to its image through the AgentBeats API
(``GET {api}/api/agents/{id}`` -> ``docker_image``); ``image = "..."`` may stand in for it in local
tests. Writes ``docker-compose.yml`` (the green as ``green-agent``, one service per participant
named by its role, all on port 9009 with a card health check, and the AgentBeats client),
``a2a-scenario.toml`` (what the client sends) and ``.env.example`` (the ``${VARS}`` to fill in).

Exit codes: 0 written, 2 the scenario is invalid, an id is unknown or the API cannot be reached.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

API = "https://agentbeats.dev"
CLIENT_IMAGE = "ghcr.io/agentbeats/agentbeats-client:v1.0.0"
PORT = 9009
_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


class ScenarioError(Exception):
    """The scenario cannot be turned into a compose file; the message says why."""


def resolve(api: str, agentbeats_id: str, timeout: float = 15.0) -> str:
    """The Docker image the AgentBeats API lists for an agent id."""
    url = f"{api.rstrip('/')}/api/agents/{agentbeats_id}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - an https API URL we build
            document = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise ScenarioError(f"unknown agentbeats_id {agentbeats_id!r}: {url} answered 404") from exc
        raise ScenarioError(f"the AgentBeats API answered {exc.code} for {agentbeats_id!r} ({url})") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ScenarioError(f"cannot reach the AgentBeats API at {api}: {reason}") from exc
    except ValueError as exc:
        raise ScenarioError(f"the AgentBeats API did not answer JSON for {agentbeats_id!r}: {exc}") from exc
    image = document.get("docker_image") if isinstance(document, dict) else None
    if not isinstance(image, str) or not image:
        raise ScenarioError(f"the AgentBeats API lists no docker_image for {agentbeats_id!r}")
    return image


def _image(agent: dict[str, Any], where: str, api: str) -> str:
    has_id, has_image = "agentbeats_id" in agent, "image" in agent
    if has_id == has_image:
        raise ScenarioError(f"{where}: give agentbeats_id or image (one of them)")
    return str(agent["image"]) if has_image else resolve(api, str(agent["agentbeats_id"]))


def _service(image: str, name: str, env: dict[str, str]) -> dict[str, Any]:
    return {
        "image": image,
        "platform": "linux/amd64",
        "container_name": name,
        "command": ["--host", "0.0.0.0", "--port", str(PORT), "--card-url", f"http://{name}:{PORT}"],  # noqa: S104
        "environment": {"PYTHONUNBUFFERED": "1", **env},
        "healthcheck": {
            "test": ["CMD", "curl", "-f", f"http://localhost:{PORT}/.well-known/agent-card.json"],
            "interval": "5s",
            "timeout": "3s",
            "retries": 10,
            "start_period": "30s",
        },
    }


def generate(scenario: dict[str, Any], api: str) -> tuple[dict[str, Any], str, str]:
    """The compose document, the a2a-scenario.toml text and the .env.example text."""
    green = scenario.get("green_agent")
    participants = scenario.get("participants")
    if not isinstance(green, dict):
        raise ScenarioError("the scenario has no [green_agent] table")
    if not isinstance(participants, list) or not participants:
        raise ScenarioError("the scenario has no [[participants]]")
    names = [str(p.get("name", "")) for p in participants if isinstance(p, dict)]
    if len(names) != len(participants) or not all(re.fullmatch(r"[a-z][a-z0-9_-]*", n) for n in names):
        raise ScenarioError("every participant needs a name (lower case letters, digits, - and _): its role")
    if len(set(names)) != len(names) or "green-agent" in names:
        raise ScenarioError("participant names must be unique and not 'green-agent'")
    services: dict[str, Any] = {"green-agent": _service(_image(green, "[green_agent]", api), "green-agent",
                                                         dict(green.get("env", {})))}  # fmt: skip
    for participant in participants:
        name = participant["name"]
        services[name] = _service(
            _image(participant, f"participant {name!r}", api), name, dict(participant.get("env", {}))
        )
    services["green-agent"]["depends_on"] = {n: {"condition": "service_healthy"} for n in names}
    services["agentbeats-client"] = {
        "image": CLIENT_IMAGE,
        "platform": "linux/amd64",
        "container_name": "agentbeats-client",
        "volumes": ["./a2a-scenario.toml:/app/scenario.toml", "./output:/app/output"],
        "command": ["scenario.toml", "output/results.json"],
        "depends_on": {n: {"condition": "service_healthy"} for n in ["green-agent", *names]},
    }
    compose = {"services": services, "networks": {"default": {"name": "agent-network"}}}
    lines = ["[green_agent]", f'endpoint = "http://green-agent:{PORT}"', ""]
    for participant in participants:
        lines += ["[[participants]]", f'role = "{participant["name"]}"',
                  f'endpoint = "http://{participant["name"]}:{PORT}"']  # fmt: skip
        if "agentbeats_id" in participant:
            lines.append(f'agentbeats_id = "{participant["agentbeats_id"]}"')
        lines.append("")
    lines += ["[config]", *[f"{k} = {json.dumps(v)}" for k, v in sorted(scenario.get("config", {}).items())]]
    secrets = sorted({m for agent in [green, *participants] for v in agent.get("env", {}).values()
                      for m in _VAR.findall(str(v))})  # fmt: skip
    env_example = "".join(f"{name}=\n" for name in secrets)
    return compose, "\n".join(lines) + "\n", env_example


def main(argv: list[str] | None = None) -> int:
    """Generate; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", type=Path, default=Path("scenario.toml"))
    parser.add_argument("--api", default=API, help="the AgentBeats API base URL")
    parser.add_argument("--output-dir", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    try:
        scenario = tomllib.loads(args.scenario.read_text(encoding="utf-8"))
        compose, a2a_scenario, env_example = generate(scenario, args.api)
    except (OSError, tomllib.TOMLDecodeError, ScenarioError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.output_dir.mkdir(parents=True, exist_ok=True)
    (args.output_dir / "docker-compose.yml").write_text(json.dumps(compose, indent=2) + "\n", encoding="utf-8")
    (args.output_dir / "a2a-scenario.toml").write_text(a2a_scenario, encoding="utf-8")
    (args.output_dir / ".env.example").write_text(env_example, encoding="utf-8")
    print(f"wrote {args.output_dir / 'docker-compose.yml'} with {len(compose['services'])} services")
    return 0


if __name__ == "__main__":
    sys.exit(main())
