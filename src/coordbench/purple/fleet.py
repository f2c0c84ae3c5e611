"""Many purple members from one process image: import once, then one forked OS process per member.

Starting a member costs about 1.5 s of CPU, nearly all of it imports (a2a-sdk's server,
FastAPI, OpenTelemetry). The demo starts 28 members; as 28 interpreters that was 40-75 s on
two busy cores. ``python -m coordbench.purple.fleet SPEC`` imports everything once and then
forks one process per member. Each member is still its own OS process with its own port, its
own tracer provider and service name, exporting its own spans: the traces look like a real
deployment's. Only the start is shared.

The fleet's standard output speaks one line per event:

- ``READY <team> <member> <url> <pid>`` when a member serves;
- ``EXITED <team> <member> <status>`` when a member's process ends (status as ``waitpid`` says,
  negative for a signal);

and each member's standard output and error go to ``<log_dir>/<team>.<member>.log``. SIGTERM or
SIGINT to the fleet is passed on to every member; the fleet exits once they all have. Each member
also gets SIGTERM if the fleet dies (Linux), so none outlives it.

Forking needs ``os.fork`` (Linux, macOS); elsewhere run ``coordbench purple`` once per member.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Everything a member needs is imported here, before any fork: that is the point of the fleet.
from coordbench.purple.server import PurpleSettings, serve_member
from coordbench.purple.team import Team

__all__ = ["FleetSpec", "FleetTeam", "main"]


class FleetTeam(BaseModel):
    """One team the fleet serves."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str = Field(pattern=r"^[A-Za-z0-9._-]{1,64}$")
    team: Team
    peers_file: Path


class FleetSpec(BaseModel):
    """What the fleet serves (written to a file by :class:`~coordbench.purple.launcher.Fleet`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    teams: list[FleetTeam] = Field(min_length=1)
    log_dir: Path
    host: str = "127.0.0.1"
    pace: float | None = None
    registry: str | None = None


def _die_with(parent: int) -> None:
    """SIGTERM when the fleet dies (Linux); exit now if it died already."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def _member(spec: FleetSpec, entry: FleetTeam, name: str, announce_fd: int, parent: int) -> None:  # pragma: no cover
    """The forked member: its own logs, socket, tracing and server (runs in the child, never returns)."""
    status = 0
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _die_with(parent)
        random.seed()  # ids (span ids among them) must not repeat the other members'
        announce_fd = os.dup(announce_fd)  # the fleet's standard output, kept before ours goes to the log
        log = os.open(spec.log_dir / f"{entry.label}.{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        overrides: dict[str, Any] = {"host": spec.host, "port": 0, "pace": spec.pace, "registry": spec.registry}
        settings = PurpleSettings(**{k: v for k, v in overrides.items() if v is not None})
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((settings.host, 0))

        def announce(url: str) -> None:
            os.write(announce_fd, f"READY {entry.label} {name} {url} {os.getpid()}\n".encode())

        serve_member(entry.team, name, sock, settings=settings, peers_file=entry.peers_file, announce=announce)
    except BaseException as exc:  # the member's log says why; the fleet reports the exit
        print(f"member {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        status = 1
    finally:
        os._exit(status)


def serve(spec: FleetSpec) -> int:
    """Fork every member, pass signals on, report exits; returns once every member has exited."""
    if not hasattr(os, "fork"):
        print("the fleet needs os.fork: run `coordbench purple` once per member", file=sys.stderr)
        return 2
    spec.log_dir.mkdir(parents=True, exist_ok=True)
    out = sys.stdout.fileno()
    parent = os.getpid()
    children: dict[int, tuple[str, str]] = {}
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.flush()
    for entry in spec.teams:
        for member in entry.team.members:
            if stopping:
                break
            pid = os.fork()
            if pid == 0:
                _member(spec, entry, member.name, out, parent)
            children[pid] = (entry.label, member.name)
    while children:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        label, name = children.pop(pid, ("?", "?"))
        code = os.waitstatus_to_exitcode(status)
        os.write(out, f"EXITED {label} {name} {code}\n".encode())
    return 0


def main(argv: list[str] | None = None) -> None:
    """``python -m coordbench.purple.fleet SPEC_FILE``: serve the members the JSON spec file names."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m coordbench.purple.fleet SPEC_FILE", file=sys.stderr)
        sys.exit(2)
    spec = FleetSpec.model_validate(json.loads(Path(args[0]).read_text(encoding="utf-8")))
    sys.exit(serve(spec))


if __name__ == "__main__":
    main()
