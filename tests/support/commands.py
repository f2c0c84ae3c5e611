"""``coordbench`` server commands run as processes, waited for by what they do rather than by a clock."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from support.serving import free_port

COMMAND = [sys.executable, "-m", "coordbench.cli"]
STARTUP_LIMIT = 600.0
"""Seconds a live process may take to answer /healthz: only a guard against a hung start, never reached
when the process serves (a busy machine slows the start; the wait goes on while the process lives)."""


class ServerProcess:
    """``coordbench ARGS --port P`` on a free loopback port, ready once ``/healthz`` answers.

    Args:
        args: The command's arguments (``"green", "--output-dir", ...``).
        env: The environment (default: this one).
        token: The bearer token it was given, for :meth:`headers`.
        stderr: Where its standard error goes (default: a pipe read by :meth:`stop`).
    """

    def __init__(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        token: str | None = None,
        stderr: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self._temporary = stderr is None
        self._log_path = (
            stderr if stderr is not None else Path(tempfile.mkstemp(prefix="coordbench-", suffix=".log")[1])
        )
        self._log = self._log_path.open("w")
        self.proc = subprocess.Popen(
            [*COMMAND, *args, "--port", str(self.port)],
            env=dict(env if env is not None else os.environ),
            stdout=subprocess.DEVNULL,
            stderr=self._log,  # a file, never a pipe: a process that logs more than a pipe holds would block
            text=True,
        )
        self._wait_ready()

    @property
    def headers(self) -> dict[str, str]:
        """The ``Authorization`` header its token needs (empty without a token)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _wait_ready(self) -> None:
        started = time.monotonic()
        while time.monotonic() - started < STARTUP_LIMIT:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.proc.args} exited with {self.proc.returncode}: {self.stop()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError(f"{self.proc.args} did not serve /healthz: {self.stop()}")

    def stop(self) -> str:
        """Terminate it (if running) and return what it wrote to standard error."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        if not self._log_path.exists():
            return ""
        text = self._log_path.read_text(errors="replace")
        if self._temporary:
            self._log_path.unlink()
        return text

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class HealthProbe:
    """Asks ``GET /healthz`` over and over on a thread; :attr:`worst` is the slowest answer's seconds.

    A probe that gets no answer within ``limit`` seconds records ``limit`` (and the error).
    """

    def __init__(self, url: str, *, limit: float = 30.0) -> None:
        self.url = url
        self.limit = limit
        self.worst = 0.0
        self.answers = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(timeout=self.limit) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    client.get(f"{self.url}/healthz").raise_for_status()
                    self.answers += 1
                except httpx.HTTPError as exc:
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                self.worst = max(self.worst, time.monotonic() - started)
                self._stop.wait(0.05)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def send_assessment(green_url: str, request: Mapping[str, Any], *, timeout: float = 600.0) -> dict[str, Any]:
    """Send an assessment request to a green as one non-streaming A2A ``SendMessage``; the JSON-RPC answer."""
    import json

    message = {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": "SendMessage",
        "params": {
            "message": {
                "role": "ROLE_USER",
                "messageId": str(uuid.uuid4()),
                "parts": [{"text": json.dumps(request)}],
            }
        },
    }
    response = httpx.post(f"{green_url}/", json=message, headers={"A2A-Version": "1.0"}, timeout=timeout)
    response.raise_for_status()
    return response.json()


def stream_assessment(green_url: str, request: Mapping[str, Any], marker: str, seen: threading.Event) -> None:
    """Send an assessment as ``SendStreamingMessage`` and set ``seen`` once an event's text holds ``marker``.

    Returns when the stream ends (or breaks: the green may be stopped on purpose meanwhile).
    """
    import json

    message = {
        "jsonrpc": "2.0",
        "id": str(uuid.uuid4()),
        "method": "SendStreamingMessage",
        "params": {
            "message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()), "parts": [{"text": json.dumps(request)}]}
        },
    }
    try:
        with httpx.stream(
            "POST",
            f"{green_url}/",
            json=message,
            headers={"A2A-Version": "1.0"},
            timeout=None,  # noqa: S113 - an assessment may run for minutes
        ) as answer:
            for line in answer.iter_lines():
                if marker in line:
                    seen.set()
    except httpx.HTTPError:
        return
