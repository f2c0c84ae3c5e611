"""One evaluation worker: a spawned process that runs :func:`~coordbench.online.job.run_job`, killed if it overruns.

A process of its own keeps evaluation off the receivers' event loop and their GIL. A trace
whose evaluation outlasts the timeout (a hostile one, built to be slow) gets its worker
killed: the next evaluation starts a fresh one. A worker that dies is replaced the same way.
It runs at a lower CPU priority than the receiver (``nice``): on a machine short of cores the
scheduler gives them to ingest first, and evaluation takes what is left (an idle core in full).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from coordbench.errors import CoordbenchError
from coordbench.online.job import JobRequest, JobResult, SpanRow, run_job

CHUNK = 1_000
"""Spans pickled at a time: one pickle of a 100k-span trace would hold the GIL, and the receivers' loop, for long."""

__all__ = ["WorkerDiedError", "WorkerProcess", "WorkerTimeoutError"]

logger = logging.getLogger(__name__)


class WorkerTimeoutError(CoordbenchError):
    """The evaluation took longer than its timeout; the worker was killed."""

    default_message = "the evaluation took longer than its timeout"


class WorkerDiedError(CoordbenchError):
    """The worker process ended while evaluating (killed, out of memory...)."""

    default_message = "the evaluation worker died"


def _serve(conn: Connection, nice: int = 0) -> None:  # pragma: no cover - runs in the worker process
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError as exc:  # a sandbox that forbids it: evaluation still runs, at the receiver's priority
            logger.warning("the evaluation worker could not lower its CPU priority: %s", exc)
    from coordbench.evals.replay import Replays

    with Replays() as replays:  # one event loop and thread pool for every job of this process
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            rows: list[SpanRow] = []
            while len(rows) < request.span_count:
                rows.extend(conn.recv())
            try:
                conn.send(("ok", run_job(dataclasses.replace(request.job, rows=rows), replays)))
            except Exception as exc:  # the parent counts it as failed and logs it
                conn.send(("error", f"{type(exc).__name__}: {exc}"))


@dataclasses.dataclass(frozen=True)
class _Header:
    job: JobRequest
    span_count: int


class WorkerProcess:
    """A worker process, started on first use. Calls come from one thread at a time.

    Args:
        nice: How much lower the process's CPU priority is than this one's (a Unix nice increment).
    """

    def __init__(self, *, nice: int = 0) -> None:
        """Create the worker (no process yet)."""
        self.nice = nice
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        """The running process's id, if one runs."""
        process = self._process
        return process.pid if process is not None and process.is_alive() else None

    def _start(self) -> Connection:
        # spawned: the receiver runs threads (the store's writer, gRPC), which a fork would copy half-way
        context = get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self.nice), name="coordbench-evaluation", daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        return parent

    def call(self, request: JobRequest, rows: Sequence[SpanRow], timeout: float) -> JobResult:
        """Evaluate ``request`` on ``rows`` in the worker (blocking: run it on a thread).

        The spans go over in chunks of :data:`CHUNK`, so no single pickle holds the GIL long.

        Raises:
            WorkerTimeoutError: No answer within ``timeout`` seconds (the worker is killed).
            WorkerDiedError: The worker ended before answering.
            RuntimeError: The evaluation raised (the message says what).
        """
        conn = self._conn
        if conn is None or self._process is None or not self._process.is_alive():
            self.stop()
            conn = self._start()
        try:
            conn.send(_Header(request, len(rows)))
            for start in range(0, len(rows), CHUNK):
                conn.send(list(rows[start : start + CHUNK]))
            if not conn.poll(timeout):
                self.stop()
                raise WorkerTimeoutError(f"no answer in {timeout:g} s")
            kind, value = conn.recv()
        except (EOFError, OSError, BrokenPipeError) as exc:
            self.stop()
            raise WorkerDiedError(str(exc) or type(exc).__name__) from exc
        if kind == "error":
            raise RuntimeError(value)
        return value

    def stop(self) -> None:
        """End the worker process (killed: it may be mid-evaluation)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None:
            if process.is_alive():
                process.kill()
            process.join(timeout=30)
            process.close()
