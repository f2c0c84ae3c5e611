"""OTLP/gRPC receiver with the OTel SDK's gRPC exporter: same decoder, same store."""

from __future__ import annotations

import grpc
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import coordbench.server.otlp_grpc
from conftest import Backend, StartBackend
from coordbench.otlp import export_request
from coordbench.otlp.model import DecodeResult
from support.decoding import note_decode_threads
from support.spans import span


def test_sdk_grpc_exporter_with_gzip(backend: Backend) -> None:
    exporter = OTLPSpanExporter(
        endpoint=f"127.0.0.1:{backend.grpc_port}", insecure=True, compression=grpc.Compression.Gzip
    )
    provider = TracerProvider(resource=Resource.create({"service.name": "grpc-client"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("over-grpc") as current:
        pass
    provider.shutdown()
    trace_id = format(current.get_span_context().trace_id, "032x")
    stats = backend.stats()
    assert (stats["stored"], stats["rejected"]) == (1, 0)
    stored = httpx.get(f"{backend.url}/v1/traces/{trace_id}").json()
    assert [s["name"] for s in stored["spans"]] == ["over-grpc"]


def export(port: int, request: object, metadata: tuple[tuple[str, str], ...] = ()) -> object:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        return TraceServiceStub(channel).Export(request, metadata=metadata, timeout=10)


def test_partial_success_and_bad_ids(backend: Backend) -> None:
    request = export_request([span("ok")])
    request.resource_spans[0].scope_spans[0].spans.add(trace_id=b"\x01" * 3, span_id=b"\x02" * 8)
    response = export(backend.grpc_port, request)
    assert response.partial_success.rejected_spans == 1  # type: ignore[attr-defined]
    assert backend.stats()["received"] == 2


def test_token_and_backpressure(start_backend: StartBackend) -> None:
    backend = start_backend(token="t0k", max_spans=1, evict_after=3600)
    request = export_request([span("first")])
    with pytest.raises(grpc.RpcError) as denied:
        export(backend.grpc_port, request)
    assert denied.value.code() is grpc.StatusCode.UNAUTHENTICATED  # type: ignore[attr-defined]
    auth = (("authorization", "Bearer t0k"),)
    export(backend.grpc_port, request, auth)
    with pytest.raises(grpc.RpcError) as full:
        export(backend.grpc_port, export_request([span("second")]), auth)
    assert full.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert "trace store is full" in full.value.details()  # type: ignore[attr-defined]


def test_undecodable_request_is_invalid_argument(backend: Backend) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{backend.grpc_port}") as channel:
        export_raw = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as bad:
            export_raw(b"\x0a\xff\xff", timeout=10)
    assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert "cannot decode ExportTraceServiceRequest" in bad.value.details()  # type: ignore[attr-defined]
    assert backend.stats()["received"] == 0


@pytest.mark.parametrize("threshold", [0, 1 << 30], ids=["off-the-loop", "on-the-loop"])
def test_large_requests_are_decoded_off_the_event_loop(
    start_backend: StartBackend, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    backend = start_backend(decode_in_thread_bytes=threshold)
    threads = note_decode_threads(monkeypatch, coordbench.server.otlp_grpc)
    export(backend.grpc_port, export_request([span("big")]))
    with grpc.insecure_channel(f"127.0.0.1:{backend.grpc_port}") as channel:
        export_raw = channel.unary_unary("/opentelemetry.proto.collector.trace.v1.TraceService/Export")
        with pytest.raises(grpc.RpcError) as bad:
            export_raw(b"\x0a\xff\xff", timeout=10)
    assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    loop_thread = f"uvicorn:{backend.server.port}"  # LoopbackServer's event-loop thread
    assert len(threads) == 2
    assert all((name != loop_thread) == (threshold == 0) for name in threads), threads
    assert (backend.stats()["stored"], backend.stats()["received"]) == (1, 1)


@pytest.mark.parametrize("compression", [grpc.Compression.NoCompression, grpc.Compression.Gzip], ids=["plain", "gzip"])
def test_requests_over_the_size_cap_are_refused(start_backend: StartBackend, compression: grpc.Compression) -> None:
    """The cap holds after decompression too: a small gzip body that inflates past it is refused."""
    backend = start_backend(max_body_bytes=4096)
    big = export_request([span("big", padding="x" * 20_000)])  # ~20 kB, compresses to a few hundred bytes
    with grpc.insecure_channel(f"127.0.0.1:{backend.grpc_port}", compression=compression) as channel:
        with pytest.raises(grpc.RpcError) as refused:
            TraceServiceStub(channel).Export(big, timeout=10)
        small = TraceServiceStub(channel).Export(export_request([span("small")]), timeout=10)
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
    assert small is not None
    stats = backend.stats()
    assert (stats["received"], stats["stored"]) == (1, 1)


def test_a_decoder_bug_is_internal_and_stores_nothing(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(body: bytes) -> DecodeResult:
        raise RuntimeError("decoder bug")

    monkeypatch.setattr(coordbench.server.otlp_grpc, "decode_protobuf", broken)
    with pytest.raises(grpc.RpcError) as failed:
        export(backend.grpc_port, export_request([span("x")]))
    assert failed.value.code() is grpc.StatusCode.INTERNAL  # type: ignore[attr-defined]
    assert failed.value.details() == "the receiver failed to decode this export (see its log)"  # type: ignore[attr-defined]
    assert backend.stats()["received"] == 0


def test_a_batch_larger_than_the_whole_store_is_resource_exhausted(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=1)
    with pytest.raises(grpc.RpcError) as refused:
        export(backend.grpc_port, export_request([span("a"), span("b")]))
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED  # type: ignore[attr-defined]
    assert "is larger than the whole trace store" in refused.value.details()  # type: ignore[attr-defined]


async def test_grpc_and_http_share_the_bound_on_exports_being_decoded(start_backend: StartBackend) -> None:
    import asyncio

    from support.inflight import decoding_slot_held

    backend = start_backend(max_inflight=1)
    async with httpx.AsyncClient() as client:
        async with decoding_slot_held(client, backend.url) as first:
            # the HTTP export holds the only slot: an export over gRPC is refused, retryably
            with pytest.raises(grpc.RpcError) as busy:
                await asyncio.to_thread(export, backend.grpc_port, export_request([span("waits")]))
        await first
    assert busy.value.code() is grpc.StatusCode.UNAVAILABLE  # type: ignore[attr-defined]
    assert "1 exports are being decoded; retry later" in busy.value.details()  # type: ignore[attr-defined]
    export(backend.grpc_port, export_request([span("now")]))  # the slot is free again
