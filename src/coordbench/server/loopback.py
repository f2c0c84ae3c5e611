"""Serving an ASGI app (an A2A agent, an embedded assessor) on a loopback port, on a thread of this process.

Runtime code (``coordbench assess`` runs its embedded green with it); :mod:`coordbench.testing` re-exports
it for tests.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

__all__ = ["AnnouncingServer", "LoopbackServer", "bind_loopback"]


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


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that says when its startup is over: :attr:`ready` is set, and ``announce`` called.

    The one way coordbench learns that a server it runs serves (an embedded assessor, a purple
    member announcing ``READY``): an event, never a poll of ``started``.

    Args:
        config: uvicorn's configuration.
        announce: Called once it serves (not when the startup failed).
    """

    def __init__(self, config: uvicorn.Config, announce: Callable[[], None] | None = None) -> None:
        """Create the server (it starts in ``run``)."""
        super().__init__(config)
        self.ready = threading.Event()
        """Set once the startup is over, whether it succeeded (``started``) or not."""
        self._announce = announce

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Uvicorn's startup, then the news."""
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()
        if self.started and self._announce is not None:
            self._announce()


class LoopbackServer:
    """Runs uvicorn in a background thread on a port chosen before the app is built.

    The app factory receives the base URL (``http://127.0.0.1:<port>/``), so an agent card
    can name its own address::

        with LoopbackServer(lambda url: create_a2a_app(build_agent_card("A", url, ...), ex)) as url:
            ...

    Args:
        app_factory: Builds the ASGI app from the server's base URL.
        startup_timeout: Seconds to wait at most for the startup: a guard against a hang, not a
            pace (``start`` returns as soon as the startup is over).
        port: The port (default: a free one).

    Raises:
        OSError: If ``port`` cannot be bound.
    """

    def __init__(self, app_factory: Callable[[str], Any], *, startup_timeout: float = 120.0, port: int = 0) -> None:
        """Bind the port and build the app; the server starts on ``__enter__``."""
        self._sock = bind_loopback(port)
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.app = app_factory(self.url)
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
        self._server = AnnouncingServer(config)
        self._thread = threading.Thread(target=self._run, name=f"uvicorn:{self.port}", daemon=True)
        self._startup_timeout = startup_timeout
        self._failure: BaseException | None = None

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        except (Exception, SystemExit) as exc:  # the app's startup failed: start() says why
            self._failure = exc
        finally:
            self._server.ready.set()  # a startup that failed before uvicorn's: never leave start() waiting

    def start(self) -> str:
        """Start serving; returns the base URL.

        Raises:
            RuntimeError: If the server does not start in time.
        """
        self._thread.start()
        self._server.ready.wait(self._startup_timeout)  # set when the startup is over, however it went
        if not self._server.started:
            why = f": {type(self._failure).__name__}: {self._failure}" if self._failure is not None else ""
            raise RuntimeError(f"uvicorn did not start on {self.url}{why}") from self._failure
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
