"""OTLP/HTTP trace receiver: ``POST /v1/traces`` (protobuf or JSON, gzip, deflate or zstd).

Answers follow the OTLP specification: an ``ExportTraceServiceResponse`` in the request's
encoding, ``partial_success`` for rejected spans, ``google.rpc.Status`` bodies for errors,
400 for undecodable data, 408 for a body not sent within ``body_timeout``, 413 over the size
cap (also after decompression: no gzip or zstd bombs) or for a batch larger than the whole store, 415
for unknown content types (answered in JSON) or encodings, 429 when too many exports are being
decoded and 503 when the store is full, both with ``Retry-After``. Only spans that are stored are
acknowledged. ``POST /v1/metrics`` and ``/v1/logs`` get 404 saying that only traces are accepted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request, Response
from google.rpc import code_pb2, status_pb2  # pyright: ignore[reportMissingTypeStubs] - generated, ships .pyi only
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from starlette.requests import ClientDisconnect

from coordbench.errors import CoordbenchError
from coordbench.otlp.decode import decode_protobuf
from coordbench.otlp.ingest import ingest
from coordbench.otlp.jsondecode import decode_json
from coordbench.otlp.model import DecodeResult, OtlpDecodeError
from coordbench.otlp.weight import decode_weight
from coordbench.otlp.zstd import ZstdBodyError, ZstdTooLargeError, decompress_zstd
from coordbench.server.bodylimit import BodyTooLargeError
from coordbench.server.state import backend_of

__all__ = ["CONTENT_JSON", "CONTENT_PROTOBUF", "read_body", "router", "status_response"]

logger = logging.getLogger(__name__)

CONTENT_PROTOBUF = "application/x-protobuf"
CONTENT_JSON = "application/json"

router = APIRouter()


class _TooLarge(CoordbenchError):
    default_message = "request body too large"


def status_response(http_status: int, code: int, message: str, content_type: str, **headers: str) -> Response:
    """An error answer carrying a ``google.rpc.Status`` in the request's encoding."""
    if content_type == CONTENT_JSON:
        body = json.dumps({"code": code, "message": message}).encode()
    else:
        body = status_pb2.Status(code=code, message=message).SerializeToString()
    return Response(body, status_code=http_status, media_type=content_type, headers=headers or None)


def _decompress(raw: bytes, encoding: str, limit: int) -> bytes:
    """Inflate ``raw``; refuse to produce more than ``limit`` bytes."""
    if encoding in ("", "identity"):
        return raw
    if encoding == "zstd":
        try:
            return decompress_zstd(raw, limit)
        except ZstdTooLargeError:
            raise _TooLarge from None
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    out = bytearray()
    data = raw
    while data:
        inflater = zlib.decompressobj(wbits)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error:
            if encoding == "deflate" and wbits > 0 and not out:
                wbits = -zlib.MAX_WBITS  # raw deflate without the zlib header, as some clients send
                continue
            raise
        if len(out) > limit or inflater.unconsumed_tail:
            raise _TooLarge
        if not inflater.eof:
            raise zlib.error("truncated compressed body")
        data = inflater.unused_data  # concatenated gzip members
    return bytes(out)


def _decode(raw: bytes, encoding: str, content_type: str, limit: int) -> DecodeResult:
    body = _decompress(raw, encoding, limit)
    return decode_protobuf(body) if content_type == CONTENT_PROTOBUF else decode_json(body)


def _success(result: DecodeResult, content_type: str) -> Response:
    rejected = result.rejected_count
    if content_type == CONTENT_JSON:
        payload: dict[str, Any] = {}
        if rejected:
            payload["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": result.rejection_message()}
        return Response(json.dumps(payload).encode(), media_type=CONTENT_JSON)
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = result.rejection_message()
    return Response(response.SerializeToString(), media_type=CONTENT_PROTOBUF)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, read as it streams in and refused as soon as it passes ``limit`` bytes.

    Raises:
        BodyTooLargeError: The declared or the received size is over ``limit`` (or over the
            app-wide cap of :class:`~coordbench.server.bodylimit.BodyLimitMiddleware`, which may come first).
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLargeError(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int, content_type: str) -> Response:
    return status_response(
        413, code_pb2.RESOURCE_EXHAUSTED, f"request body larger than {limit} bytes (after decompression)", content_type
    )


@router.post("/v1/metrics", summary="Not accepted: this receiver takes traces only")
@router.post("/v1/logs", summary="Not accepted: this receiver takes traces only")
async def other_signals(request: Request) -> Response:
    """OTLP metrics and logs: a plain 404 saying only traces are accepted (OTLP clients do not retry it)."""
    signal = request.url.path.rsplit("/", 1)[-1]
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    message = (
        f"coordbench accepts traces only (POST /v1/traces); {signal} are not accepted here. With "
        f"opentelemetry-instrument, set OTEL_{signal.upper()}_EXPORTER=none."
    )
    return status_response(
        404, code_pb2.UNIMPLEMENTED, message, CONTENT_PROTOBUF if content_type == CONTENT_PROTOBUF else CONTENT_JSON
    )


@router.post("/v1/traces", summary="OTLP/HTTP trace export")
async def export_traces(request: Request) -> Response:
    """Receive an OTLP/HTTP ``ExportTraceServiceRequest``."""
    backend = backend_of(request.app)
    settings, store, inflight = backend.settings, backend.store, backend.inflight
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type not in (CONTENT_PROTOBUF, CONTENT_JSON):
        return status_response(  # in JSON: a client that did not say it speaks protobuf can read it
            415,
            code_pb2.INVALID_ARGUMENT,
            f"unsupported Content-Type {content_type or '(none)'!r}; use {CONTENT_PROTOBUF} or {CONTENT_JSON}",
            CONTENT_JSON,
        )
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity", "gzip", "deflate", "zstd"):
        return status_response(
            415,
            code_pb2.INVALID_ARGUMENT,
            f"unsupported Content-Encoding {encoding!r}; use gzip, deflate or zstd",
            content_type,
        )
    limit = settings.max_body_bytes
    with inflight.slot() as taken:
        if not taken:
            return status_response(
                429,
                code_pb2.RESOURCE_EXHAUSTED,
                inflight.busy_message(),
                content_type,
                **{"Retry-After": f"{settings.retry_after:g}"},
            )
        try:
            # a client that stalls mid-body would otherwise hold an inflight slot for ever
            async with asyncio.timeout(settings.body_timeout):
                raw = await read_body(request, limit)
        except BodyTooLargeError:  # OTLP's answer, in the request's encoding
            return _too_large(limit, content_type)
        except TimeoutError:
            return status_response(
                408,
                code_pb2.DEADLINE_EXCEEDED,
                f"request body not received within {settings.body_timeout:g} s",
                content_type,
                Connection="close",
            )
        except ClientDisconnect:  # nobody is left to answer; nothing was stored
            logger.info("OTLP export: the client went away before sending the whole body")
            return Response(status_code=400)
        try:
            work: Callable[[], DecodeResult] = lambda: _decode(raw, encoding, content_type, limit)  # noqa: E731
            weight = decode_weight(
                len(raw), compressed=encoding not in ("", "identity"), json_body=content_type == CONTENT_JSON
            )
            off_loop = weight > settings.decode_in_thread_bytes
            result = await anyio.to_thread.run_sync(work) if off_loop else work()
        except _TooLarge:
            return _too_large(limit, content_type)
        except (zlib.error, ZstdBodyError) as exc:
            return status_response(
                400, code_pb2.INVALID_ARGUMENT, f"cannot decompress {encoding} body: {exc}", content_type
            )
        except OtlpDecodeError as exc:
            return status_response(400, code_pb2.INVALID_ARGUMENT, exc.message, content_type)
        except Exception:  # a decoder bug: say so in OTLP's terms rather than a bare 500 page
            logger.exception("OTLP export: decoding failed unexpectedly")
            return status_response(
                500, code_pb2.INTERNAL, "the receiver failed to decode this export (see its log)", content_type
            )
    refused = await ingest(store, result, transport="OTLP/HTTP")
    if refused is None:
        return _success(result, content_type)
    if refused.kind == "unavailable":
        retry = f"{max(1, round(refused.retry_after or 1))}"
        return status_response(503, code_pb2.UNAVAILABLE, refused.message, content_type, **{"Retry-After": retry})
    # 413 is not retried by OTLP clients: a retry could never fit
    return status_response(413, code_pb2.RESOURCE_EXHAUSTED, refused.message, content_type)
