"""Starting teams: one OS process per member, and stopping every one of them, whatever happens.

A :class:`Fleet` runs ``python -m coordbench.purple.fleet`` (:mod:`coordbench.purple.fleet`),
which imports the purple agent once and forks one process per member of every team it is given:
each member serves on its own free loopback port, as its own service, and announces
``READY``. Once a team's members are all up, their URLs go into that team's peers file, which
every member reads when it needs a peer it has not heard of.

The wait for the members follows what they do, not a clock (:func:`coordbench.processes.wait_until`):
it goes on while the fleet is alive and making progress, however busy the machine; a member
that exits before it is ready is named, with the last lines of its log. Leaving a
:class:`Fleet` (normally, on an error, on Ctrl-C or SIGTERM) stops every member; so does the
death of the process that started it (Linux).

:class:`TeamProcesses` is a fleet of one team: what ``coordbench team up`` runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from coordbench.errors import CoordbenchError
from coordbench.processes import Child, ChildStartError, wait_until
from coordbench.purple.team import Team

__all__ = ["Fleet", "MemberProcess", "TeamProcesses", "TeamStartError"]

logger = logging.getLogger(__name__)


class TeamStartError(CoordbenchError):
    """A member did not start; the message says which, why, and what it wrote last."""

    default_message = "a team member did not start"


@dataclass
class MemberProcess:
    """One member's process.

    Attributes:
        team: The team's label.
        name: The member's name.
        url: Where it serves.
        pid: Its process id.
        log: Its standard output and error.
        exit_status: How it ended (``None`` while it runs; negative: killed by that signal).
    """

    team: str
    name: str
    url: str
    pid: int
    log: Path
    exit_status: int | None = None

    @property
    def alive(self) -> bool:
        """It has not exited."""
        return self.exit_status is None

    def kill(self, signum: int = signal.SIGKILL) -> None:
        """Send it a signal (SIGKILL by default: a member that crashes)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signum)

    def tail(self, lines: int = 20) -> str:
        """The last lines it wrote."""
        try:
            return "\n".join(self.log.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""


class Fleet:
    """Start several teams, one OS process per member, from one forked image; a context manager.

    Args:
        teams: ``(label, team)`` pairs; labels are unique.
        endpoint: Where members export OTLP (``OTEL_EXPORTER_OTLP_ENDPOINT``); ``None``: the
            environment's.
        registry: An assessor every member registers with.
        pace: Seconds per unit of simulated work.
        env: The environment for the members (default: this process's).
        host: Interface the members bind.
        log_dir: Where each member's log goes (default: a temporary folder, removed on stop).
    """

    def __init__(
        self,
        teams: Sequence[tuple[str, Team]],
        *,
        endpoint: str | None = None,
        registry: str | None = None,
        pace: float | None = None,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        log_dir: Path | None = None,
    ) -> None:
        labels = [label for label, _ in teams]
        if len(set(labels)) != len(labels):
            raise ValueError(f"team labels must be unique: {labels}")
        self.teams = dict(teams)
        self.endpoint = endpoint
        self.registry = registry
        self.pace = pace
        self.env = dict(os.environ if env is None else env)
        self.host = host
        self._dir = tempfile.TemporaryDirectory(prefix="coordbench-fleet-")
        self.log_dir = log_dir or Path(self._dir.name) / "logs"
        self.members: dict[tuple[str, str], MemberProcess] = {}
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._reader: threading.Thread | None = None

    def peers_file(self, label: str) -> Path:
        """The peers file of team ``label`` (its members' URLs, once all are up)."""
        return Path(self._dir.name) / f"{label}.peers.json"

    def urls(self, label: str) -> dict[str, str]:
        """Member URLs of team ``label`` by name, in the team's order (the participants of an assessment)."""
        with self._lock:
            found = {name: m.url for (team, name), m in self.members.items() if team == label and m.url}
        return {m.name: found[m.name] for m in self.teams[label].members if m.name in found}

    def exited(self) -> list[MemberProcess]:
        """Members whose process has ended, in the order they ended."""
        with self._lock:
            return [m for m in self.members.values() if not m.alive]

    def _env(self) -> dict[str, str]:
        env = dict(self.env)
        env.pop("OTEL_SERVICE_NAME", None)  # each member is its own service
        env |= {"OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_BSP_SCHEDULE_DELAY": "100"}
        if self.endpoint is not None:
            env |= {
                "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint.rstrip("/"),
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            }
        return env

    def start(self) -> dict[str, dict[str, str]]:
        """Start every member of every team; their URLs by team label, then name.

        Raises:
            TeamStartError: A member (or the fleet) did not start: which, why, and its last lines.
                Whatever started is stopped again.
        """
        from coordbench.purple.fleet import FleetSpec, FleetTeam

        spec = FleetSpec(
            teams=[
                FleetTeam(label=label, team=team, peers_file=self.peers_file(label))
                for label, team in self.teams.items()
            ],
            log_dir=self.log_dir,
            host=self.host,
            pace=self.pace,
            registry=self.registry,
        )
        spec_file = Path(self._dir.name) / "fleet.json"
        spec_file.write_text(spec.model_dump_json(), encoding="utf-8")
        expected = sum(len(team.members) for team in self.teams.values())
        try:
            self._child = Child(
                "the purple fleet",
                [sys.executable, "-m", "coordbench.purple.fleet", str(spec_file)],
                self.log_dir / "fleet.log",
                env=self._env(),
                stdout_pipe=True,
            )
            self._reader = threading.Thread(target=self._read, name="fleet-events", daemon=True)
            self._reader.start()
            try:
                wait_until(
                    lambda: self._ready_count() >= expected or bool(self.exited()),
                    self._child,
                    what="all members were ready",
                    progress=self._ready_count,
                )
            except ChildStartError as exc:
                raise TeamStartError(str(exc)) from exc
            failed = self.exited()
            if failed:
                member = failed[0]
                raise TeamStartError(
                    f"member {member.name!r} of team {member.team!r} exited with status {member.exit_status} "
                    f"before it was ready; it wrote:\n{member.tail() or '(nothing)'}"
                )
        except BaseException:
            self.stop()
            raise
        for label in self.teams:
            temporary = self.peers_file(label).with_suffix(".tmp")
            temporary.write_text(_json(self.urls(label)), encoding="utf-8")
            temporary.replace(self.peers_file(label))
        return {label: self.urls(label) for label in self.teams}

    def _ready_count(self) -> int:
        with self._lock:
            return len(self.members)

    def _read(self) -> None:
        child = self._child
        if child is None or child.process.stdout is None:
            return
        for raw in child.process.stdout:
            words = raw.decode(errors="replace").split()
            with self._lock:
                if len(words) == 5 and words[0] == "READY":
                    _, label, name, url, pid = words
                    self.members[(label, name)] = MemberProcess(
                        label, name, url, int(pid), self.log_dir / f"{label}.{name}.log"
                    )
                elif len(words) == 4 and words[0] == "EXITED":
                    _, label, name, status = words
                    member = self.members.get((label, name))
                    if member is None:  # it died before it was ready
                        member = self.members[(label, name)] = MemberProcess(
                            label, name, "", 0, self.log_dir / f"{label}.{name}.log"
                        )
                    member.exit_status = int(status)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop every member (they flush their spans), the fleet with them; idempotent."""
        if self._child is not None:
            self._child.stop(timeout)
        if self._reader is not None:
            self._reader.join(timeout)
        self._dir.cleanup()

    def __enter__(self) -> Fleet:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _json(urls: dict[str, str]) -> str:
    import json

    return json.dumps(urls, sort_keys=True)


class TeamProcesses(Fleet):
    """Start ``team`` as one process per member; a context manager that stops them all.

    Args:
        team: The team.
        endpoint: Where members export OTLP; ``None``: the environment's.
        registry: An assessor to register with.
        pace: Seconds per unit of simulated work.
        env: The environment for the members (default: this process's).
        host: Interface the members bind.
        log_dir: Where the members' logs go (default: a temporary folder).
    """

    def __init__(
        self,
        team: Team,
        *,
        endpoint: str | None = None,
        registry: str | None = None,
        pace: float | None = None,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        log_dir: Path | None = None,
    ) -> None:
        super().__init__(
            [(team.name, team)], endpoint=endpoint, registry=registry, pace=pace, env=env, host=host, log_dir=log_dir
        )
        self.team = team

    @property
    def team_urls(self) -> dict[str, str]:
        """Member URLs by name."""
        return self.urls(self.team.name)
