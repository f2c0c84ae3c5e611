"""OTLP/gRPC trace receiver (``TraceService/Export``), sharing the decoder and the store.

The method is registered with no request deserializer, so the servicer gets the request's
bytes and decodes them with the same function as the HTTP receiver (each span keeps its own
bytes, sliced out of the request rather than re-serialised), and an undecodable request is
answered ``INVALID_ARGUMENT`` with the decoder's message. Requests weighing more than
``decode_in_thread_bytes`` (:func:`~coordbench.otlp.weight.decode_weight`) are decoded on a
worker thread, as over HTTP, so one large export does not stall the event loop both receivers share.
Both transports share the bound on exports being decoded and the path into the store
(:mod:`coordbench.otlp.ingest`): past ``max_inflight`` an export is answered ``UNAVAILABLE``
(retryable), as OTLP/HTTP answers 429.
"""

from __future__ import annotations

import logging

import anyio.to_thread
import grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from coordbench.otlp.decode import decode_protobuf
from coordbench.otlp.ingest import Inflight, ingest
from coordbench.otlp.model import OtlpDecodeError
from coordbench.otlp.weight import decode_weight
from coordbench.server.auth import bearer_ok
from coordbench.store import SpanStore

__all__ = ["GrpcReceiver"]

logger = logging.getLogger(__name__)


_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
_Context = grpc.aio.ServicerContext[bytes, ExportTraceServiceResponse]


class _TraceService:
    def __init__(self, store: SpanStore, token: str | None, decode_in_thread_bytes: int, inflight: Inflight) -> None:
        self.store = store
        self.token = token
        self.decode_in_thread_bytes = decode_in_thread_bytes
        self.inflight = inflight

    async def Export(self, request: bytes, context: _Context) -> ExportTraceServiceResponse:
        metadata = dict(context.invocation_metadata() or ())
        authorization = metadata.get("authorization")
        if not bearer_ok(authorization if isinstance(authorization, str) else None, self.token):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        with self.inflight.slot() as taken:  # the same bound on decoding work as OTLP/HTTP's (abort frees it)
            if not taken:  # UNAVAILABLE is retryable for OTLP/gRPC clients (HTTP answers 429)
                await context.abort(grpc.StatusCode.UNAVAILABLE, self.inflight.busy_message())
            try:
                if decode_weight(len(request)) > self.decode_in_thread_bytes:  # grpcio hands over inflated bytes
                    result = await anyio.to_thread.run_sync(decode_protobuf, request)
                else:
                    result = decode_protobuf(request)
            except OtlpDecodeError as exc:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
            except Exception:  # a decoder bug: INTERNAL with a pointer to the log, as over HTTP
                logger.exception("OTLP/gRPC export: decoding failed unexpectedly")
                await context.abort(grpc.StatusCode.INTERNAL, "the receiver failed to decode this export (see its log)")
        refused = await ingest(self.store, result, transport="OTLP/gRPC")
        if refused is not None:
            # UNAVAILABLE is retryable; RESOURCE_EXHAUSTED without RetryInfo is not: a retry could never fit
            code = grpc.StatusCode.UNAVAILABLE if refused.kind == "unavailable" else grpc.StatusCode.RESOURCE_EXHAUSTED
            await context.abort(code, refused.message)
        response = ExportTraceServiceResponse()
        if result.rejected:
            response.partial_success.rejected_spans = result.rejected_count
            response.partial_success.error_message = result.rejection_message()
        return response


class GrpcReceiver:
    """A ``grpc.aio`` server on the running event loop.

    Args:
        store: Where spans go.
        host: Interface to bind.
        port: Port (0: any free port; see :attr:`port` after :meth:`start`).
        max_message_bytes: Largest request accepted (gRPC's default is 4 MiB; OTLP recommends more).
        token: Bearer token to require, if any.
        decode_in_thread_bytes: Larger requests are decoded on a worker thread, off the event loop.
        inflight: The bound on exports being decoded, shared with OTLP/HTTP (the receiver's
            ``max_inflight``; alone: 64).
    """

    def __init__(
        self,
        store: SpanStore,
        *,
        host: str,
        port: int,
        max_message_bytes: int,
        token: str | None,
        decode_in_thread_bytes: int = 1024 * 1024,
        inflight: Inflight | None = None,
    ) -> None:
        """Prepare the server (it starts in :meth:`start`)."""
        self._store = store
        self._inflight = inflight or Inflight(64)
        self._decode_in_thread_bytes = decode_in_thread_bytes
        self._host = host
        self._requested_port = port
        self._max = max_message_bytes
        self._token = token
        self._server: grpc.aio.Server | None = None
        self.port: int | None = None

    async def start(self) -> int:
        """Bind and start serving; returns the bound port."""
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", self._max), ("grpc.so_reuseport", 0)])
        handler: grpc.RpcMethodHandler[bytes, ExportTraceServiceResponse] = (
            grpc.unary_unary_rpc_method_handler(  # no request_deserializer: Export gets the bytes
                _TraceService(self._store, self._token, self._decode_in_thread_bytes, self._inflight).Export,
                response_serializer=ExportTraceServiceResponse.SerializeToString,
            )
        )
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, {"Export": handler}),))
        self.port = server.add_insecure_port(f"{self._host}:{self._requested_port}")
        if self.port == 0:
            raise OSError(f"cannot bind OTLP/gRPC to {self._host}:{self._requested_port}")
        await server.start()
        self._server = server
        logger.info("OTLP/gRPC receiver on %s:%d", self._host, self.port)
        return self.port

    async def stop(self, grace: float = 2.0) -> None:
        """Stop serving (finishing in-flight calls for up to ``grace`` seconds)."""
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
