"""Child processes whose lives are tied to ours, and waits that follow what they do rather than a clock.

Every process coordbench starts (the demo's green and teams, a team's members, the rotel
collector) is a :class:`Child`: its output goes to a log file (never a pipe nobody reads, which
would block it once full), it is stopped with SIGTERM then SIGKILL, and on Linux it is also
asked to receive SIGTERM if we die first (``PR_SET_PDEATHSIG``), so nothing is orphaned even
when we are SIGKILLed.

:func:`wait_until` waits for a condition (a port answering, a line printed) for as long as the
child is alive and making progress, where progress is CPU time spent or output written. A busy
machine makes a child start slowly; it does not make it stop spending CPU, so the wait goes on.
A child that neither runs nor writes for :data:`STALL` seconds is stuck, and the error says
which child, why, and the last lines it wrote.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from coordbench.errors import CoordbenchError

__all__ = ["STALL", "Child", "ChildStartError", "wait_until"]

logger = logging.getLogger(__name__)

STALL = 120.0
"""Seconds a starting child may go without CPU time or output before it counts as stuck."""
_TAIL = 20


class ChildStartError(CoordbenchError):
    """A child did not get ready: it exited, or stopped making progress; the message says which and why."""

    default_message = "a process did not start"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask the kernel to send us SIGTERM when the process that started us dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Child:
    """A child process, its standard output and error in ``log``; a context manager that stops it.

    Args:
        name: What to call it in messages (``green``, ``team star``...).
        command: The command.
        env: Its environment (default: ours).
        log: Where its standard error (and output, unless ``stdout_pipe``) goes.
        stdout_pipe: Read its standard output through :attr:`stdout` (for a child that
            announces itself there); standard error still goes to ``log``.
    """

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        log: Path,
        *,
        env: Mapping[str, str] | None = None,
        stdout_pipe: bool = False,
    ) -> None:
        self.name = name
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._sink = log.open("wb")
        self.process = subprocess.Popen(  # noqa: S603 - our own commands, no shell
            list(command),
            env=dict(os.environ if env is None else env),
            stdout=subprocess.PIPE if stdout_pipe else self._sink,
            stderr=self._sink,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )

    @property
    def pid(self) -> int:
        """Its process id."""
        return self.process.pid

    @property
    def alive(self) -> bool:
        """It has not exited."""
        return self.process.poll() is None

    def progress(self) -> tuple[float, int]:
        """What it has done so far: CPU seconds (where the system tells) and bytes of output written."""
        return _cpu_seconds(self.process.pid), self.log.stat().st_size if self.log.exists() else 0

    def tail(self, lines: int = _TAIL) -> str:
        """The last lines it wrote."""
        if not self._sink.closed:
            self._sink.flush()
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; idempotent."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop within %.0f s of SIGTERM: killed", self.name, timeout)
                self.process.kill()
                self.process.wait(30)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._sink.close()

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _cpu_seconds(pid: int) -> float:
    """CPU seconds ``pid`` and its threads used (utime + stime, Linux ``/proc``); 0 where not known."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    return (int(fields[11]) + int(fields[12])) / ticks


def wait_until(
    ready: Callable[[], bool],
    child: Child,
    *,
    what: str,
    stall: float = STALL,
    poll: float = 0.05,
    progress: Callable[[], object] | None = None,
) -> None:
    """Wait until ``ready()`` is true, while ``child`` lives and makes progress.

    Args:
        ready: The condition (checked every ``poll`` seconds; it may block briefly itself).
        child: The child that should make it true.
        what: What is awaited, for the error message ("to answer /healthz").
        stall: Seconds without progress (CPU time, output, or ``progress()`` changing) after
            which the child counts as stuck.
        poll: Seconds between checks.
        progress: Another sign of progress (a count of members ready, say).

    Raises:
        ChildStartError: The child exited, or made no progress for ``stall`` seconds; the
            message names it, says why, and quotes the last lines it wrote.
    """
    last = (child.progress(), progress() if progress is not None else None)
    quiet_since = time.monotonic()
    while True:
        if ready():
            return
        if not child.alive:
            raise ChildStartError(
                f"{child.name} exited with status {child.process.returncode} before {what}; it wrote:\n"
                f"{child.tail() or '(nothing)'}"
            )
        now = (child.progress(), progress() if progress is not None else None)
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since > stall:
            child.stop()
            raise ChildStartError(
                f"{child.name} made no progress for {stall:g} s (no CPU time, no output) before {what}: "
                f"stopped; it wrote:\n{child.tail() or '(nothing)'}"
            )
        time.sleep(poll)
