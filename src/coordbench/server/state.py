"""What the trace backend's routes read of their app, typed: one :class:`BackendState` per app.

:func:`~coordbench.server.app.mount_backend` puts it on the app (:func:`attach`); a route reads it
with :func:`backend_of` instead of digging untyped attributes out of ``app.state``. The metrics
and the online evaluator are read the same way by the modules that own them
(:func:`coordbench.meters.meters_of`, :func:`coordbench.server.evaluations_api.evaluator_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.applications import Starlette

from coordbench.otlp.ingest import Inflight
from coordbench.settings import Settings
from coordbench.store.base import SpanStore

__all__ = ["BackendState", "attach", "backend_of"]


@dataclass
class BackendState:
    """The trace backend of one app.

    Attributes:
        settings: Its settings.
        store: Where its spans are.
        inflight: The exports being decoded now (shared by OTLP/HTTP and OTLP/gRPC).
        stats_sections: Parts of ``GET /v1/stats`` other components add, by name.
        grpc_port: The OTLP/gRPC port bound, once serving (``None``: not served).
    """

    settings: Settings
    store: SpanStore
    inflight: Inflight
    stats_sections: dict[str, Callable[[], dict[str, object]]] = field(
        default_factory=dict[str, Callable[[], dict[str, object]]]
    )
    grpc_port: int | None = None


def attach(app: Starlette, state: BackendState) -> None:
    """Make ``state`` the backend of ``app``."""
    app.state.backend = state


def backend_of(app: Starlette) -> BackendState:
    """The backend of ``app``.

    Raises:
        RuntimeError: If no backend was mounted on it.
    """
    state: object = getattr(app.state, "backend", None)
    if not isinstance(state, BackendState):
        raise RuntimeError("no trace backend is mounted on this app")
    return state
