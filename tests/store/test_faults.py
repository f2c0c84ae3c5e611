"""The durable store under real faults from the operating system, interleaved with SIGKILL.

A receiver process keeps spans in ``--data-dir``; the tests make its writes fail the ways disks
fail: a small file system that fills up (tmpfs, 3 MB), a file size limit (``RLIMIT_FSIZE``, set
on the running process), a file system remounted read-only mid-run. Throughout, a batch is
either acknowledged (200) or refused with 503 and ``Retry-After``; after any number of faults
and kills, a restart succeeds and the stored spans are exactly the acknowledged ones: none
lost, none of a refused batch kept.

The tmpfs tests need to mount file systems (root, as in this project's CI); elsewhere they are
skipped and the ``RLIMIT_FSIZE`` test still runs. ``COORDBENCH_FAULT_EXAMPLES`` sets how many
random fault sequences the property test tries (default 4).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from coordbench.otlp import export_request
from support.commands import STARTUP_LIMIT
from support.serving import free_port
from support.spans import sid, span

pytestmark = pytest.mark.slow

TRACES = [f"{i:032x}" for i in range(1, 5)]
SPANS_PER_BATCH = 40
PAD = "p" * 1500  # each span carries this much: a 3 MB disk fills after a few dozen batches


class Receiver:
    """A ``coordbench receiver --data-dir`` process, and the spans it acknowledged."""

    def __init__(self, data_dir: Path, *, fsize: int | None = None) -> None:
        self.data_dir = data_dir
        self.fsize = fsize
        self.acked: dict[str, set[str]] = {trace: set() for trace in TRACES}
        self.refused: set[str] = set()
        self.batches = 0
        self.pending: tuple[str, list[str], bytes] | None = None
        self.proc: subprocess.Popen[str] | None = None
        self.log = tempfile.NamedTemporaryFile("w", prefix="coordbench-receiver-", suffix=".log")  # noqa: SIM115
        self.url = ""
        self.start()

    def start(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        limit = self.fsize

        def limit_files() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coordbench.cli", "receiver", "--port", str(port), "--no-grpc", "--data-dir",
             str(self.data_dir)],
            stdout=subprocess.DEVNULL, stderr=self.log, text=True, preexec_fn=limit_files,
        )  # fmt: skip
        with httpx.Client(timeout=5) as client:
            import time

            started = time.monotonic()
            while time.monotonic() - started < STARTUP_LIMIT:
                if self.proc.poll() is not None:
                    raise AssertionError(f"the receiver did not restart: {self.log_text()}")
                try:
                    if client.get(f"{self.url}/healthz").status_code == 200:
                        return
                except httpx.TransportError:
                    time.sleep(0.05)
        raise AssertionError("the receiver did not serve")

    def post(self) -> int:
        """Send the batch an exporter would: the last refused one again, else a new one; its status.

        Every batch comes from a service of its own, so each brings a resource the store has not
        seen (a new envelope row): a refused write must forget it, or the batch's retry reuses a
        row that was never committed. Spans count as acknowledged on 200.
        """
        if self.pending is None:
            self.batches += 1
            trace = TRACES[self.batches % len(TRACES)]
            ids = [sid(self.batches * 1000 + i) for i in range(SPANS_PER_BATCH)]
            spans = [
                span(f"s{self.batches}-{i}", span_id=i_d, trace_id=trace, service=f"svc-{self.batches}", pad=PAD)
                for i, i_d in enumerate(ids)
            ]
            self.pending = (trace, ids, export_request(spans).SerializeToString())
        trace, ids, body = self.pending
        response = httpx.post(
            f"{self.url}/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"}, timeout=60
        )
        if response.status_code == 200:
            self.acked[trace].update(ids)
            self.refused.difference_update(ids)
            self.pending = None
        else:
            assert response.status_code == 503, response.text
            assert int(response.headers["Retry-After"]) >= 1
            self.refused.update(ids)
        return response.status_code

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)

    def stop(self) -> str:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        text = self.log_text()
        self.log.close()  # a temporary file: removed as it closes
        return text

    def log_text(self) -> str:
        """What the receiver processes wrote to standard error (a file: a pipe could fill and block them)."""
        if self.log.closed:
            return ""
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")

    def stored(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for trace in TRACES:
            response = httpx.get(f"{self.url}/v1/traces/{trace}", timeout=60)
            found[trace] = {s["span_id"] for s in response.json()["spans"]} if response.status_code == 200 else set()
        return found

    def check(self) -> None:
        """Restart from SIGKILL and compare what is stored with what was acknowledged."""
        self.kill()
        self.start()
        stored = self.stored()
        assert stored == self.acked
        assert not (set().union(*stored.values()) & self.refused)  # a refused batch left nothing behind


def _can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    probe = Path(f"/tmp/coordbench-mount-probe-{uuid.uuid4().hex}")
    probe.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True)
        if mounted.returncode != 0:
            return False
        subprocess.run(["umount", str(probe)], check=True)
        return True
    finally:
        probe.rmdir()


MOUNTS = _can_mount()
needs_mount = pytest.mark.skipif(not MOUNTS, reason="mounting a small tmpfs needs root (CI has it)")


@contextlib.contextmanager
def small_disk(size: str = "3m") -> Iterator[Path]:
    """A fresh tmpfs of ``size``, unmounted afterwards."""
    folder = Path(f"/tmp/coordbench-disk-{uuid.uuid4().hex}")
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def fill(disk: Path) -> None:
    """Take every free byte of ``disk`` with a filler file."""
    with (disk / "filler").open("wb") as out, contextlib.suppress(OSError):
        block = b"\0" * 65536
        while True:
            out.write(block)
            out.flush()


def free(disk: Path) -> None:
    (disk / "filler").unlink(missing_ok=True)


def remount(disk: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(disk)], check=True)


@needs_mount
def test_a_full_disk_refuses_batches_and_loses_none_it_acknowledged() -> None:
    with small_disk() as disk:
        receiver = Receiver(disk / "data")
        try:
            statuses = [receiver.post() for _ in range(60)]
            assert 200 in statuses and 503 in statuses, statuses  # it filled up, and said so
            receiver.check()  # SIGKILLed while full: restarts on a full disk, with every acknowledged span
            fill(disk)
            assert receiver.post() == 503
            free(disk)
            receiver.check()
        finally:
            receiver.stop()


@needs_mount
def test_space_freed_after_a_full_disk_takes_batches_again() -> None:
    with small_disk() as disk:
        receiver = Receiver(disk / "data")
        try:
            for _ in range(3):
                assert receiver.post() == 200
            fill(disk)
            assert [receiver.post() for _ in range(5)] == [503] * 5
            free(disk)
            assert [receiver.post() for _ in range(3)] == [200] * 3
            receiver.check()
            assert sum(map(len, receiver.acked.values())) == 6 * SPANS_PER_BATCH
        finally:
            receiver.stop()


@needs_mount
def test_a_read_only_file_system_at_restart_serves_what_it_holds_then_takes_writes_when_writable() -> None:
    """The kernel remounts a failing file system read-only; a receiver restarted on it must still start.

    (A file system cannot be remounted read-only under a process that holds files open for
    writing, so the remount happens between a SIGKILL and the restart; the file size limit
    test below makes writes fail under a running process.)
    """
    with small_disk("64m") as disk:
        receiver = Receiver(disk / "data")
        try:
            assert [receiver.post() for _ in range(3)] == [200] * 3
            receiver.kill()
            remount(disk, "ro")
            receiver.start()
            assert receiver.stored() == receiver.acked  # it starts, and every acknowledged span is readable
            assert [receiver.post() for _ in range(2)] == [503] * 2
            remount(disk, "rw")
            assert receiver.post() == 200
            receiver.check()
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):
                remount(disk, "rw")
            receiver.stop()


def test_a_file_size_limit_refuses_batches_and_raising_it_lets_them_in(tmp_path: Path) -> None:
    receiver = Receiver(tmp_path / "data", fsize=400_000)
    try:
        statuses = [receiver.post() for _ in range(20)]
        assert 200 in statuses and 503 in statuses, statuses
        assert receiver.proc is not None
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.prlimit(receiver.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
        assert receiver.post() == 200
        receiver.fsize = None  # restarted without the limit
        receiver.check()
    finally:
        receiver.stop()


OPERATIONS = st.sampled_from(["post", "post", "post", "fill", "free", "kill", "kill-readonly", "readwrite"])


@needs_mount
@settings(
    max_examples=int(os.environ.get("COORDBENCH_FAULT_EXAMPLES", "4")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure reports its whole sequence; no slow shrinking
    database=None,
)
@given(st.lists(OPERATIONS, min_size=4, max_size=14))
def test_random_fault_sequences_keep_exactly_the_acknowledged_spans(operations: list[str]) -> None:
    with small_disk() as disk:
        receiver = Receiver(disk / "data")
        writable = True
        try:
            for operation in operations:
                if operation == "post":
                    receiver.post()
                elif operation == "fill" and writable:
                    fill(disk)
                elif operation == "free" and writable:
                    free(disk)
                elif operation == "kill":
                    receiver.check()
                elif operation == "kill-readonly":  # restarted on a file system turned read-only
                    receiver.kill()
                    remount(disk, "ro")
                    writable = False
                    receiver.start()
                    assert receiver.stored() == receiver.acked
                elif operation == "readwrite":
                    remount(disk, "rw")
                    writable = True
            remount(disk, "rw")
            receiver.check()
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):
                remount(disk, "rw")
            receiver.stop()
