"""Agents as separate OS processes that export their spans over OTLP."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

RELAY = str(Path(__file__).parent.parent / "agents" / "relay.py")


class AgentProcess:
    """A process that prints ``READY <url>`` once it serves."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=10)
            raise RuntimeError(f"agent did not start: {line!r}\n{err}")
        self.url = line.split()[1]

    def stop(self) -> str:
        self.proc.terminate()  # uvicorn shuts down gracefully; the SDK flushes at exit
        _, err = self.proc.communicate(timeout=20)
        return err


@pytest.fixture
def processes() -> Iterator[list[AgentProcess]]:
    """Processes started by the test, killed at the end if still running."""
    started: list[AgentProcess] = []
    yield started
    for p in started:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.communicate()


def exporting_env(base: dict[str, str], endpoint: str, service: str) -> dict[str, str]:
    """``base`` plus the OTEL_* variables that make a process export its spans to ``endpoint`` quickly."""
    return {
        **base,
        "OTEL_SERVICE_NAME": service,
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint.rstrip("/"),
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }


def uv_command() -> list[str]:
    """How to run uv here (on PATH, else as a module)."""
    found = shutil.which("uv")
    if found:
        return [found]
    python = shutil.which("python3") or sys.executable
    return [python, "-m", "uv"]


@pytest.fixture(scope="session")
def v03_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with a2a-sdk 0.3.26 (the last 0.3 release, what AgentBeats runs) installed, from PyPI."""
    venv = tmp_path_factory.mktemp("a2a-sdk-0.3.26")
    subprocess.run([*uv_command(), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            *uv_command(),
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            "a2a-sdk[http-server]==0.3.26",
            "uvicorn",
        ],
        check=True,
    )
    return python


EXAMPLE_PLUGIN = Path(__file__).parent.parent / "plugins" / "coordbench_example_metric"


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the example third-party plugin package installed (prepend it to ``sys.path``)."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [*uv_command(), "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(EXAMPLE_PLUGIN)],
        check=True,
        timeout=300,
    )
    return target
