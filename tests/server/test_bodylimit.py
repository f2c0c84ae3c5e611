"""No request can exhaust a server's memory: every route of every app we serve caps its body.

Hostile clients send 400 MB bodies, chunked (no ``Content-Length``) or declared, to the receiver,
the green assessor and an A2A agent built with ``create_a2a_app``, each a real process on
loopback. Each gets 413 as soon as its cap is passed, and the process's peak memory (VmHWM)
grows by less than the bound each case states.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from pathlib import Path

import httpx
import pytest

from coordbench.evals.config import LLM_API_KEY_ENV
from support.processes import RELAY, AgentProcess
from test_cli import serving

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")]

MB = 1024 * 1024
HOSTILE = 400 * MB
CHUNK = b"x" * (256 * 1024)


def _kernel_buffers() -> int:
    """The most bytes the kernel can hold between a client's send and a server's read on loopback.

    The client's send buffer and the server's receive buffer, each at its autotuning maximum
    (``tcp_wmem``/``tcp_rmem``): what a client has *sent* when the server answers is the cap, plus
    what these held, and how full they are depends on how busy the machine is. A server that kept
    reading would let the whole 400 MB through.
    """
    total = 0
    for name in ("tcp_wmem", "tcp_rmem"):
        try:
            total += int(Path(f"/proc/sys/net/ipv4/{name}").read_text().split()[2])
        except (OSError, ValueError, IndexError):
            total += 32 * MB
    return total + 2 * len(CHUNK)


KERNEL = _kernel_buffers()


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def send(url: str, path: str, *, total: int, declared: bool, content_type: str = "application/json",
         headers: str = "") -> tuple[int, int]:  # fmt: skip
    """POST ``total`` bytes to ``path``; stop as soon as an answer arrives. Returns (status, bytes sent)."""
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    length = f"Content-Length: {total}\r\n" if declared else "Transfer-Encoding: chunked\r\n"
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n{headers}{length}\r\n"
    sock.sendall(head.encode())
    sent = 0
    sock.setblocking(False)
    answer = b""
    try:
        while sent < total:
            with contextlib.suppress(BlockingIOError):
                answer += sock.recv(65536)
            if answer:
                break
            piece = CHUNK if declared else b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"
            try:
                sock.setblocking(True)
                sock.sendall(piece)
            except OSError:
                break  # the server closed the connection after answering
            finally:
                sock.setblocking(False)
            sent += len(CHUNK)
        sock.setblocking(True)
        sock.settimeout(30)
        while b"\r\n" not in answer:
            more = sock.recv(65536)
            if not more:
                break
            answer += more
    finally:
        sock.close()
    status_line = answer.split(b"\r\n", 1)[0].decode()
    assert status_line.startswith("HTTP/1.1 "), (status_line, sent)
    return int(status_line.split()[1]), sent


def hostile(url: str, path: str, cap: int, pid: int, bound: int, *, content_type: str = "application/json",
            headers: str = "") -> None:  # fmt: skip
    """Declared and chunked 400 MB bodies, one and then three at once: 413 early, peak memory within ``bound``."""
    before = peak_rss(pid)
    status, sent = send(url, path, total=HOSTILE, declared=True, content_type=content_type, headers=headers)
    assert status == 413 and sent <= cap + KERNEL, (path, status, sent)
    status, sent = send(url, path, total=HOSTILE, declared=False, content_type=content_type, headers=headers)
    assert status == 413, (path, status)
    assert sent <= cap + KERNEL, f"{path}: took {sent} bytes before answering (cap {cap}, kernel buffers {KERNEL})"
    results: list[tuple[int, int]] = []

    def one() -> None:
        results.append(send(url, path, total=HOSTILE, declared=False, content_type=content_type, headers=headers))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [status for status, _ in results] == [413, 413, 413], results
    grown = peak_rss(pid) - before
    assert grown < bound, f"{path}: peak memory grew by {grown / MB:.0f} MB (bound {bound / MB:.0f} MB)"


def test_the_green_caps_every_route(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV}
    with serving("green", "--output-dir", str(tmp_path), env=env) as (url, green):
        httpx.get(f"{url}/.well-known/agent-card.json").raise_for_status()
        # A2A (4 MiB cap) and the registry: three 400 MB bodies at once cost less than 48 MB of peak memory
        hostile(url, "/", 4 * MB, green.pid, 48 * MB)
        hostile(url, "/register", 4 * MB, green.pid, 48 * MB)
        # trace ingestion keeps its larger cap (64 MiB, COORDBENCH_MAX_BODY_BYTES): at most one cap per request
        hostile(url, "/traces", 64 * MB, green.pid, 4 * 64 * MB + 64 * MB)
        hostile(url, "/v1/traces", 64 * MB, green.pid, 4 * 64 * MB + 64 * MB, content_type="application/x-protobuf")
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}  # still serving


def test_the_receiver_and_an_agent_cap_their_bodies(subprocess_env: dict[str, str], tmp_path: Path) -> None:
    env = {**subprocess_env, "COORDBENCH_MAX_BODY_BYTES": str(8 * MB), "COORDBENCH_MAX_REQUEST_BYTES": str(MB)}
    agent = AgentProcess([sys.executable, RELAY, "--name", "capped"], dict(subprocess_env))
    try:
        with serving("receiver", "--no-grpc", env=env) as (url, receiver):
            # the cap is a setting: 8 MiB for exports here, 1 MiB for any other route
            hostile(url, "/v1/traces", 8 * MB, receiver.pid, 64 * MB, content_type="application/x-protobuf")
            # a route that does not read bodies answers without reading this one
            status, sent = send(url, "/v1/metrics", total=HOSTILE, declared=False)
            assert status == 404 and sent <= KERNEL
            # an agent from create_a2a_app: 4 MiB by default, on the JSON-RPC and REST routes alike
            agent_url = agent.url.rstrip("/")
            hostile(agent_url, "/", 4 * MB, agent.proc.pid, 48 * MB)
            hostile(agent_url, "/rest/message:send", 4 * MB, agent.proc.pid, 48 * MB, headers="A2A-Version: 1.0\r\n")
            # a normal request still works
            card = httpx.get(f"{agent_url}/.well-known/agent-card.json").json()
            assert card["name"] == "capped"
    finally:
        agent.stop()


def test_a_body_just_under_the_cap_is_served(subprocess_env: dict[str, str]) -> None:
    agent = AgentProcess([sys.executable, RELAY, "--name", "fits"], dict(subprocess_env))
    try:
        text = "y" * (3 * MB)
        message = {"role": "user", "messageId": "m1", "parts": [{"kind": "text", "text": text}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
        response = httpx.post(agent.url, json=body, timeout=60)
        assert response.status_code == 200, response.text[:200]
        assert "result" in response.json(), response.text[:200]
    finally:
        agent.stop()
