"""The trace backend as one FastAPI app: OTLP/HTTP and OTLP/gRPC receivers plus the read API."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from coordbench import __version__
from coordbench.errors import StepFormatError
from coordbench.gcpolicy import tune_gc as tune_gc_for_ingest
from coordbench.meters import BackendMeters, meters_of
from coordbench.meters import router as metrics_router
from coordbench.otlp import CODECS, encoded_span, native
from coordbench.otlp.ingest import Inflight
from coordbench.server.auth import bearer_ok
from coordbench.server.bodylimit import BodyLimitMiddleware, BodyTooLargeError
from coordbench.server.evaluations_api import router as online_router
from coordbench.server.jsonguard import JsonGuardMiddleware
from coordbench.server.otlp_grpc import GrpcReceiver
from coordbench.server.otlp_http import router as otlp_router
from coordbench.server.state import BackendState, attach, backend_of
from coordbench.server.steps_http import router as steps_router
from coordbench.server.traces_api import router as read_router
from coordbench.server.ui import COOKIE, login_page, ui_allows
from coordbench.server.ui import router as ui_router
from coordbench.settings import Settings, load_settings
from coordbench.store import BatchTooLargeError, SpanStore, SqlitePersistence, StoreUnavailableError, TraceStore

if TYPE_CHECKING:
    from coordbench.clickhouse.traces import EvaluationsSink
    from coordbench.online.evaluator import OnlineEvaluator, OnlineSettings

__all__ = [
    "BearerAuthMiddleware",
    "backend_app",
    "build_store",
    "create_app",
    "limit_bodies",
    "mount_backend",
    "serve_store",
    "tune_gc_for_ingest",
]

logger = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/healthz"})


def build_store(settings: Settings) -> SpanStore:
    """The store the settings describe: ClickHouse with ``store``, durable with ``data_dir``, else memory."""
    if settings.store is not None:
        from coordbench.clickhouse import ClickHouseStore

        # the index table is watched over long enough for a trace to settle (then it is evaluated as it is)
        window = max(60.0, 2 * (settings.evaluate_settle + settings.evaluate_quiet))
        store = ClickHouseStore(
            settings.store, encode=encoded_span, window=window, evaluator_name=evaluator_name(settings)
        )
        store.check()  # a ClickHouse that cannot be used stops the server before it serves, saying why
        return store
    persistence = (
        SqlitePersistence(settings.data_dir, codecs=CODECS, fsync=settings.fsync) if settings.data_dir else None
    )
    return TraceStore(
        max_spans=settings.max_spans,
        max_traces=settings.max_traces,
        max_bytes=settings.max_bytes,
        evict_after=settings.evict_after,
        persistence=persistence,
        grouper=native.group if native.AVAILABLE else None,  # OTLP/protobuf batches grouped in C
    )


def evaluator_name(settings: Settings) -> str:
    """How this server signs the evaluations it writes to ClickHouse: ``host:port``."""
    return f"{socket.gethostname()}:{settings.port}"


def _not_open(_method: str, path: str) -> bool:
    return path not in OPEN_PATHS


class BearerAuthMiddleware(BaseHTTPMiddleware):
    """Answers 401 to requests for protected paths without the right ``Authorization: Bearer`` token.

    Args:
        app: The ASGI app.
        token: The token.
        protects: Whether a request (method, path) needs the token (default: every one but ``/healthz``'s).
    """

    def __init__(self, app: object, token: str, protects: Callable[[str, str], bool] | None = None) -> None:
        super().__init__(app)  # type: ignore[arg-type]
        self.token = token
        self.protects: Callable[[str, str], bool] = protects or _not_open

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        """Check the token (the live UI's session cookie stands for it under ``/ui/``), then pass the request on."""
        path = request.url.path
        if path == "/ui" or path.startswith("/ui/"):
            if ui_allows(path, request.cookies.get(COOKIE), request.headers.get("authorization"), self.token):
                return await call_next(request)
            return login_page()
        if self.protects(request.method, request.url.path) and not bearer_ok(
            request.headers.get("authorization"), self.token
        ):
            return JSONResponse(
                {"detail": "missing or wrong bearer token"}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        return await call_next(request)


@asynccontextmanager
async def serve_store(app: FastAPI, settings: Settings, store: SpanStore) -> AsyncGenerator[None]:
    """For an app's lifespan: open ``store``, serve OTLP/gRPC and evaluate online, as configured.

    Opening the store loads its durable spans; traces are evaluated online when ``settings.evaluate``.

    The bound gRPC port is put on the backend's state (``backend_of(app).grpc_port``); on exit the
    receiver stops, online evaluation stops and the store closes.
    """
    backend = backend_of(app)
    await store.open()
    evaluator = _online_evaluator(app, settings, store)
    if evaluator is not None:
        evaluator.start()
    grpc_receiver: GrpcReceiver | None = None
    if settings.grpc_port is not None:
        token = settings.token.get_secret_value() if settings.token else None
        grpc_receiver = GrpcReceiver(
            store,
            host=settings.host,
            port=settings.grpc_port,
            max_message_bytes=settings.max_body_bytes,
            token=token,
            decode_in_thread_bytes=settings.decode_in_thread_bytes,
            inflight=backend.inflight,
        )
        backend.grpc_port = await grpc_receiver.start()
    try:
        yield
    finally:
        if grpc_receiver is not None:
            await grpc_receiver.stop()
        if evaluator is not None:
            await evaluator.stop()
            evaluator.log.close()
        sink = _evaluations_sink(app)
        if sink is not None:
            await asyncio.to_thread(sink.close)
        meters = meters_of(app)
        if meters is not None:
            meters.shutdown()
        await store.close()


def _online_evaluator(app: FastAPI, settings: Settings, store: SpanStore) -> OnlineEvaluator | None:
    """The online evaluator the settings ask for (``evaluations_api.evaluator_of(app)`` finds it), or ``None``."""
    if not settings.evaluate:
        return None
    from coordbench.online.evaluator import OnlineEvaluator
    from coordbench.online.events import EvaluationEvents
    from coordbench.online.records import EvaluationLog, EvaluationWriter

    log = EvaluationLog(settings.max_evaluations, settings.data_dir)
    if isinstance(store, EvaluationWriter):  # a ClickHouse store: evaluations go to its coordbench_evaluations table
        log.also(store.write_evaluation)
    sink = _evaluations_sink(app)
    if sink is not None:  # spans kept here, evaluations also written to ClickHouse
        log.also(sink)
    meters = meters_of(app)
    assert meters is not None  # noqa: S101 - mount_backend made them
    evaluator = OnlineEvaluator(store, log, meters, online_settings(settings), events=EvaluationEvents())
    app.state.evaluator = evaluator
    backend_of(app).stats_sections["evaluations"] = evaluator.describe
    return evaluator


def online_settings(settings: Settings) -> OnlineSettings:
    """Online evaluation as the backend's settings configure it."""
    from coordbench.online.evaluator import OnlineSettings

    return OnlineSettings(
        quiet=settings.evaluate_quiet,
        settle=settings.evaluate_settle,
        queue=settings.evaluate_queue,
        workers=settings.evaluate_workers,
        nice=settings.evaluate_nice,
        timeout=settings.evaluate_timeout,
        judge_sample=settings.judge_sample,
        judge_per_minute=settings.judge_per_minute,
        team_attribute=settings.team_attribute,
    )


def _evaluations_sink(app: FastAPI) -> EvaluationsSink | None:
    """Where online evaluations are also written, when spans are kept here and evaluations in ClickHouse."""
    sink: object = getattr(app.state, "evaluations_sink", None)
    if sink is None:
        return None
    from coordbench.clickhouse.traces import EvaluationsSink

    return sink if isinstance(sink, EvaluationsSink) else None


OTLP_PATHS = frozenset({"/v1/traces", "/traces"})
"""Trace ingestion routes (OTLP exports, Step reports): bounded by ``max_body_bytes``, not ``max_request_bytes``."""

_UNGUARDED = OTLP_PATHS | {"/v1/metrics", "/v1/logs"}
"""Routes whose bodies the JSON guard leaves alone: OTLP reads JSON its own way; other signals are never read."""


def limit_bodies(app: FastAPI, settings: Settings) -> None:
    """Bound every request body of ``app``: ``max_body_bytes`` for OTLP exports, ``max_request_bytes`` elsewhere."""

    def limit_for(path: str) -> int | None:
        return settings.max_body_bytes if path in OTLP_PATHS else None

    app.add_middleware(BodyLimitMiddleware, limit=settings.max_request_bytes, limit_for=limit_for)

    async def too_large(_request: Request, exc: Exception) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=413, headers={"Connection": "close"})

    app.add_exception_handler(BodyTooLargeError, too_large)


def add_error_handlers(app: FastAPI) -> None:
    """Answer the domain's errors with their HTTP status and ``{"detail": message}``.

    A malformed Step is 400; a batch larger than the whole store 413 (a retry could never fit);
    a full store 503 with ``Retry-After``. The OTLP route answers its own, in OTLP's encoding.
    """

    async def malformed(_request: Request, exc: Exception) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    async def too_big(_request: Request, exc: Exception) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=413)

    async def unavailable(_request: Request, exc: Exception) -> Response:
        retry = max(1, round(exc.retry_after)) if isinstance(exc, StoreUnavailableError) else 1
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": f"{retry}"})

    app.add_exception_handler(StepFormatError, malformed)
    app.add_exception_handler(BatchTooLargeError, too_big)
    app.add_exception_handler(StoreUnavailableError, unavailable)


def mount_backend(app: FastAPI, settings: Settings, store: SpanStore) -> None:
    """Add the receiver, the read API and ``GET /`` to an existing app (the green assessor's, for one).

    The caller's lifespan must open and close ``store`` (and may start a :class:`GrpcReceiver`).
    """
    backend = BackendState(settings, store, Inflight(settings.max_inflight))
    attach(app, backend)
    app.state.meters = BackendMeters(store, backend.inflight)
    app.state.evaluator = None
    store_section: Callable[[], dict[str, object]] | None = getattr(store, "describe", None)
    if store_section is not None:  # a ClickHouse store: where, and how its watch of the index table goes
        backend.stats_sections["clickhouse"] = store_section
    app.state.evaluations_sink = None
    if settings.evaluate and settings.evaluations_store is not None:
        from coordbench.clickhouse import EvaluationsSink

        sink = EvaluationsSink(settings.evaluations_store, evaluator_name(settings))
        sink.check()  # a ClickHouse that cannot take them stops the server before it serves, saying why
        app.state.evaluations_sink = sink
    app.include_router(otlp_router, tags=["otlp"])
    app.include_router(steps_router, tags=["steps"])
    app.include_router(read_router, tags=["traces"])
    app.include_router(metrics_router, tags=["metrics"])
    app.include_router(online_router, tags=["evaluations"])
    app.include_router(ui_router)
    add_error_handlers(app)

    @app.get("/", tags=["about"], summary="What this server is and where to go")
    async def about(request: Request) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]
        return describe(request.app)


def describe(app: FastAPI) -> dict[str, Any]:
    """What ``GET /`` answers: the server's name and version, and each endpoint with what it does."""
    hidden = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
    endpoints: list[dict[str, Any]] = []
    paths: dict[str, dict[str, Any]] = app.openapi().get("paths", {})
    for path, operations in paths.items():
        for method, operation in operations.items():
            if path not in hidden and path != "/":
                endpoints.append({"path": path, "method": method.upper(), "what": operation.get("summary", "")})
    for route in app.routes:  # plain Starlette routes (an A2A agent's) are not in the OpenAPI document
        path = getattr(route, "path", None)
        if (
            isinstance(route, APIRoute)
            or not isinstance(path, str)
            or path in hidden
            or (path in paths and path != "/")
        ):
            continue
        for method in sorted(getattr(route, "methods", None) or ()):
            if method != "HEAD":
                endpoints.append({"path": path, "method": method, "what": getattr(route, "name", "") or ""})
    return {
        "name": app.title,
        "version": app.version,
        "description": app.description or None,
        "endpoints": sorted(endpoints, key=lambda e: (e["path"], e["method"])),
        "docs": "/docs",
        "ui": "/ui/",
    }


def create_app(settings: Settings | None = None, *, store: SpanStore | None = None) -> FastAPI:
    """The trace backend: ``POST /v1/traces``, ``POST /traces`` (Steps), ``GET /v1/traces[/{id}]``, ``GET /v1/stats``.

    The lifespan opens the store (loading durable spans) and starts the gRPC receiver when
    ``grpc_port`` is set; the bound gRPC port is on ``backend_of(app).grpc_port``.

    Args:
        settings: Settings (default: from the environment).
        store: A store to use instead of building one from the settings.
    """
    settings = settings or load_settings()
    store = store or build_store(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        async with serve_store(app, settings, store):
            yield

    return backend_app(
        settings,
        store,
        title="coordbench trace backend",
        description=(
            "OTLP receiver (POST /v1/traces: protobuf or JSON; gRPC on the gRPC port) and read API "
            "(GET /v1/traces, /v1/traces/{id}?wait=seconds, /v1/stats, /metrics). Traces only: metrics and "
            "logs are not accepted (set OTEL_METRICS_EXPORTER=none OTEL_LOGS_EXPORTER=none)."
        ),
        lifespan=lifespan,
    )


def backend_app(
    settings: Settings,
    store: SpanStore,
    *,
    title: str,
    description: str,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
    protects: Callable[[str, str], bool] | None = None,
    a2a_jsonrpc: frozenset[str] = frozenset(),
    a2a_rest: Callable[[str], bool] | None = None,
) -> FastAPI:
    """An app carrying the trace backend (:func:`mount_backend`), its token check, body limits and ``/healthz``.

    The receiver (:func:`create_app`) and the green assessor are both built on it, and add
    their own routes to what it returns. The app does not trace itself: spans about
    ingesting spans would be exported back to it, in a loop.

    Args:
        settings: The backend's settings (token, body limits, store bounds).
        store: The store the routes fill and read; ``lifespan`` opens and closes it.
        title: The app's title (``GET /``, ``/docs``).
        description: What the app serves.
        lifespan: The app's lifespan (:func:`serve_store` at least).
        protects: Whether a request (method, path) needs the token, when one is set (default: every one but
            ``/healthz``'s).
        a2a_jsonrpc: Paths of an A2A JSON-RPC binding the app serves (the green's ``/``), and
        a2a_rest: whether a path belongs to its A2A REST binding: both for
            :class:`~coordbench.server.jsonguard.JsonGuardMiddleware`, which answers bad bodies there in
            their protocol.
    """
    app = FastAPI(
        title=title,
        description=description,
        version=__version__,
        lifespan=lifespan,
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    mount_backend(app, settings, store)
    # inside the token check and the body cap; the OTLP routes read JSON their own way
    app.add_middleware(
        JsonGuardMiddleware, skip=_UNGUARDED.__contains__, jsonrpc_paths=a2a_jsonrpc, rest=a2a_rest, json_routes=True
    )
    if settings.token:
        app.add_middleware(BearerAuthMiddleware, token=settings.token.get_secret_value(), protects=protects)
    limit_bodies(app, settings)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:  # pyright: ignore[reportUnusedFunction]
        return {"status": "ok"}

    return app
