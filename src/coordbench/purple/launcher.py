"""Starting a team: one OS process per member, and stopping every one of them, whatever happens.

Each member runs ``python -m coordbench.purple --role NAME ...`` on a free loopback port and
prints ``READY <url>``. Once all are up, their URLs go into a peers file every member reads
when it needs a peer it has not heard of. :class:`TeamProcesses` is a context manager: leaving
it (normally, on an error, or on Ctrl-C) terminates every process it started, then kills any
that has not exited within a few seconds, so no member is left behind.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

from coordbench.errors import CoordbenchError
from coordbench.purple.team import Team

__all__ = ["MemberProcess", "TeamProcesses", "TeamStartError"]

logger = logging.getLogger(__name__)

_START_TIMEOUT = 60.0


class TeamStartError(CoordbenchError):
    """A member did not start; the message says which and what it printed."""

    default_message = "a team member did not start"


class MemberProcess:
    """One running member."""

    def __init__(self, name: str, process: subprocess.Popen[str], url: str) -> None:
        self.name = name
        self.process = process
        self.url = url
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._drain, name=f"stderr-{name}", daemon=True)
        self._reader.start()

    def close(self) -> None:
        """Release the pipes (after the process has exited)."""
        self._reader.join(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _drain(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        for line in stream:
            self.stderr.append(line)
            del self.stderr[:-200]  # the last lines are what explains a failure


class TeamProcesses:
    """Start ``team`` as one process per member; a context manager that stops them all.

    Args:
        team: The team.
        team_args: How members find the team: ``["--team", path]`` or ``["--shape", s, "--size", n]``.
        endpoint: Where members export OTLP (``OTEL_EXPORTER_OTLP_ENDPOINT``); ``None``: the
            environment's.
        registry: An assessor to register with.
        pace: Seconds per unit of simulated work.
        env: The environment for the members (default: this process's).
        host: Interface the members bind.
    """

    def __init__(
        self,
        team: Team,
        team_args: list[str],
        *,
        endpoint: str | None = None,
        registry: str | None = None,
        pace: float | None = None,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.team = team
        self.team_args = team_args
        self.endpoint = endpoint
        self.registry = registry
        self.pace = pace
        self.env = dict(os.environ if env is None else env)
        self.host = host
        self.members: list[MemberProcess] = []
        self._dir = tempfile.TemporaryDirectory(prefix=f"coordbench-team-{team.name}-")
        self.peers_file = Path(self._dir.name) / "peers.json"

    @property
    def urls(self) -> dict[str, str]:
        """Member URLs by name (the participants of an assessment)."""
        return {m.name: m.url for m in self.members}

    def start(self) -> dict[str, str]:
        """Start every member; returns their URLs by name.

        Raises:
            TeamStartError: If one did not start (those started are stopped again).
        """
        env = dict(self.env)
        env.pop("OTEL_SERVICE_NAME", None)  # each member is its own service
        env |= {"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_BSP_SCHEDULE_DELAY": "100"}
        if self.endpoint is not None:
            env |= {
                "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint.rstrip("/"),
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            }
        try:
            for member in self.team.members:
                command = [sys.executable, "-m", "coordbench.purple", "--role", member.name, *self.team_args,
                           "--host", self.host, "--port", "0", "--peers-file", str(self.peers_file)]  # fmt: skip
                if self.registry:
                    command += ["--registry", self.registry]
                if self.pace is not None:
                    command += ["--pace", str(self.pace)]
                process = subprocess.Popen(  # noqa: S603 - our own command, no shell
                    command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
                self.members.append(MemberProcess(member.name, process, ""))
            for running in self.members:
                running.url = self._ready(running)
        except BaseException:
            self.stop()
            raise
        temporary = self.peers_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.urls, sort_keys=True), encoding="utf-8")
        temporary.replace(self.peers_file)
        return self.urls

    def _ready(self, member: MemberProcess) -> str:
        assert member.process.stdout is not None  # noqa: S101 - opened with PIPE above
        result: list[str] = []
        reader = threading.Thread(target=lambda: result.append(member.process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(_START_TIMEOUT)
        line = result[0] if result else ""
        if not line.startswith("READY "):
            member.process.kill()
            member.process.wait(10)
            said = "".join(member.stderr[-20:]).strip()
            raise TeamStartError(f"member {member.name!r} did not start ({line.strip() or 'no output'}): {said}")
        return line.split()[1]

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate every member (they flush their spans), then kill any still running; remove the peers file."""
        for member in self.members:
            if member.process.poll() is None:
                member.process.terminate()
        for member in self.members:
            try:
                member.process.wait(timeout)
            except subprocess.TimeoutExpired:
                logger.warning("member %s did not stop in %.0f s: killed", member.name, timeout)
                member.process.kill()
                member.process.wait(5)
            member.close()
        self._dir.cleanup()

    def __enter__(self) -> TeamProcesses:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
