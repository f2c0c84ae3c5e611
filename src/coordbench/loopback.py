"""Serving an ASGI app (an A2A agent, an embedded assessor) on a loopback port, on a thread of this process.

Runtime code (``coordbench assess`` runs its embedded green with it); :mod:`coordbench.testing` re-exports
it for tests.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

__all__ = ["LoopbackServer", "bind_loopback"]


def bind_loopback(port: int = 0) -> socket.socket:
    """A TCP socket bound to ``port`` (default: a free one) on 127.0.0.1 (not yet listening).

    The socket is created with ``proto=IPPROTO_TCP`` on purpose: asyncio enables
    ``TCP_NODELAY`` only on sockets whose protocol says TCP, and without it every response
    on a kept-alive connection waits ~40 ms for a delayed ACK (Nagle's algorithm).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()
        raise
    return sock


class LoopbackServer:
    """Runs uvicorn in a background thread on a port chosen before the app is built.

    The app factory receives the base URL (``http://127.0.0.1:<port>/``), so an agent card
    can name its own address::

        with LoopbackServer(lambda url: create_a2a_app(build_agent_card("A", url, ...), ex)) as url:
            ...

    Args:
        app_factory: Builds the ASGI app from the server's base URL.
        startup_timeout: Seconds to wait for the server to accept connections.
        port: The port (default: a free one).

    Raises:
        OSError: If ``port`` cannot be bound.
    """

    def __init__(self, app_factory: Callable[[str], Any], *, startup_timeout: float = 10.0, port: int = 0) -> None:
        """Bind the port and build the app; the server starts on ``__enter__``."""
        self._sock = bind_loopback(port)
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.app = app_factory(self.url)
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name=f"uvicorn:{self.port}", daemon=True)
        self._startup_timeout = startup_timeout

    def _run(self) -> None:
        self._server.run(sockets=[self._sock])

    def start(self) -> str:
        """Start serving; returns the base URL.

        Raises:
            RuntimeError: If the server does not start in time.
        """
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.005)
        return self.url

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> str:
        """Start; returns the base URL."""
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Stop."""
        self.stop()
