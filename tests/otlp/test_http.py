"""OTLP/HTTP receiver over real HTTP: the OTel SDK exporter, hand-made bodies, every error answer."""

from __future__ import annotations

import gzip
import json
import logging
import socket
import time
import zlib

import httpx
import pytest
import zstandard
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link

import coordbench.server.otlp_http
from conftest import Backend, StartBackend
from coordbench.otlp import export_request, export_request_json, native
from coordbench.otlp.weight import decode_weight
from support.decoding import note_decode_threads
from support.inflight import decoding_slot_held
from support.spans import TRACE, call, serve, sid, span

PROTO = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def trace(backend: Backend, trace_id: str) -> dict[str, object]:
    response = httpx.get(f"{backend.url}/v1/traces/{trace_id}", headers=backend.headers, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip], ids=["plain", "gzip"])
def test_sdk_exporter_spans_are_stored(backend: Backend, compression: Compression) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{backend.url}/v1/traces", compression=compression)
    provider = TracerProvider(resource=Resource.create({"service.name": "sdk-client"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("elsewhere") as elsewhere:
        pass
    link = Link(elsewhere.get_span_context(), {"reason": "follow-up"})
    with tracer.start_as_current_span("parent") as parent, tracer.start_as_current_span("child", links=[link]):
        pass
    provider.shutdown()
    trace_id = format(parent.get_span_context().trace_id, "032x")
    stored = trace(backend, trace_id)
    names = {s["name"]: s for s in stored["spans"]}  # type: ignore[union-attr]
    assert set(names) == {"parent", "child"}
    assert names["child"]["links"] == [
        {
            "trace_id": format(elsewhere.get_span_context().trace_id, "032x"),
            "span_id": format(elsewhere.get_span_context().span_id, "016x"),
            "trace_state": "",
            "attributes": {"reason": "follow-up"},
        }
    ]
    assert names["child"]["parent_span_id"] == names["parent"]["span_id"]
    assert names["child"]["resource"]["service.name"] == "sdk-client"
    assert stored["completeness"]["complete"] is True  # type: ignore[index]


def spans_body() -> list:
    root = span("root", span_id=sid(1), service="host")
    client = call("host", "B", parent=sid(1), span_id=sid(2))
    return [root, client, serve("B", parent=sid(2), span_id=sid(3))]


def _zstd_streamed(data: bytes) -> bytes:
    """zstd as a streaming encoder writes it (the Collector's): no content size in the header, two frames."""
    half = len(data) // 2
    out = b""
    for piece in (data[:half], data[half:]):
        compressor = zstandard.ZstdCompressor(write_checksum=True).compressobj()
        out += compressor.compress(piece) + compressor.flush()
    return out


@pytest.mark.parametrize("encoding", ["identity", "gzip", "deflate", "raw-deflate", "zstd", "zstd-streamed"])
def test_json_with_every_encoding(backend: Backend, encoding: str) -> None:
    raw = json.dumps(export_request_json(spans_body())).encode()
    body = {
        "identity": raw,
        "gzip": gzip.compress(raw),
        "deflate": zlib.compress(raw),
        "raw-deflate": _raw_deflate(raw),
        "zstd": zstandard.ZstdCompressor().compress(raw),
        "zstd-streamed": _zstd_streamed(raw),
    }[encoding]
    headers = {**JSON, "Content-Encoding": encoding.replace("raw-", "").replace("-streamed", "")}
    response = httpx.post(f"{backend.url}/v1/traces", content=body, headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {}  # partial_success left unset on full success
    assert len(trace(backend, TRACE)["spans"]) == 3  # type: ignore[arg-type]


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(data) + compressor.flush()


def test_partial_success_in_both_encodings(backend: Backend) -> None:
    good = spans_body()
    doc = export_request_json(good)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append({"traceId": "abcd", "spanId": sid(9)})
    response = httpx.post(f"{backend.url}/v1/traces", content=json.dumps(doc), headers=JSON)
    assert response.status_code == 200
    assert response.json() == {
        "partialSuccess": {
            "rejectedSpans": "1",
            "errorMessage": "1 spans rejected: invalid trace_id (must be 16 bytes) (1)",
        }
    }
    request = export_request(good)
    request.resource_spans[0].scope_spans[0].spans.add(trace_id=b"\x01" * 16, span_id=b"\x00" * 8)
    response = httpx.post(f"{backend.url}/v1/traces", content=request.SerializeToString(), headers=PROTO)
    assert response.status_code == 200
    parsed = ExportTraceServiceResponse.FromString(response.content)
    assert parsed.partial_success.rejected_spans == 1
    assert "invalid span_id" in parsed.partial_success.error_message
    stats = backend.stats()
    assert stats["received"] == 8 and stats["rejected"] == 2 and stats["stored"] == 6 and stats["duplicates"] == 3


def status_of(response: httpx.Response) -> status_pb2.Status:
    if response.headers["content-type"] == "application/json":
        data = response.json()
        return status_pb2.Status(code=data["code"], message=data["message"])
    return status_pb2.Status.FromString(response.content)


def _corrupt_zstd_block() -> bytes:
    """A zstd frame whose compressed block is garbage (the framing is intact)."""
    frame = bytearray(zstandard.ZstdCompressor().compress(b"abcd" * 4096))
    frame[-4:] = b"\xff\xff\xff\xff"
    return bytes(frame)


@pytest.mark.parametrize(
    ("headers", "body", "code", "message"),
    [
        (PROTO, b"\xff\x00garbage", 400, "cannot decode ExportTraceServiceRequest (protobuf)"),
        (JSON, b"{nope", 400, "cannot decode ExportTraceServiceRequest (JSON)"),
        (JSON, b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
        ({**PROTO, "Content-Encoding": "gzip"}, b"not gzip at all", 400, "cannot decompress gzip body"),
        (
            {**PROTO, "Content-Encoding": "gzip"},
            gzip.compress(b"x" * 100, mtime=0)[:-8],
            400,
            "cannot decompress gzip body",
        ),
        ({**PROTO, "Content-Encoding": "zstd"}, b"not zstd at all", 400, "cannot decompress zstd body"),
        (  # truncated: zstd's own stream reader would return what it could and say nothing
            {**PROTO, "Content-Encoding": "zstd"},
            zstandard.ZstdCompressor().compress(bytes(range(256)) * 64)[:-3],
            400,
            "cannot decompress zstd body: truncated zstd",
        ),
        (  # well framed, corrupt inside
            {**PROTO, "Content-Encoding": "zstd"},
            _corrupt_zstd_block(),
            400,
            "cannot decompress zstd body: cannot decode zstd body",
        ),
        ({"Content-Type": "text/plain"}, b"hi", 415, "unsupported Content-Type 'text/plain'"),
        ({}, b"hi", 415, "unsupported Content-Type '(none)'"),
        ({**PROTO, "Content-Encoding": "br"}, b"hi", 415, "unsupported Content-Encoding 'br'"),
    ],
)
def test_bad_requests_get_a_status_and_store_nothing(
    backend: Backend, headers: dict[str, str], body: bytes, code: int, message: str
) -> None:
    response = httpx.post(f"{backend.url}/v1/traces", content=body, headers=headers)
    assert response.status_code == code
    assert message in status_of(response).message
    assert backend.stats()["received"] == 0


def test_without_a_content_type_the_415_is_json(backend: Backend) -> None:
    """A client that did not say it speaks protobuf cannot read a protobuf error: it gets JSON."""
    response = httpx.post(f"{backend.url}/v1/traces", content=b"hi")
    assert response.status_code == 415 and response.headers["content-type"] == "application/json"
    assert response.json()["message"].startswith("unsupported Content-Type '(none)'")


@pytest.mark.parametrize("signal", ["metrics", "logs"])
@pytest.mark.parametrize("content_type", ["application/x-protobuf", "application/json"])
def test_metrics_and_logs_are_refused_plainly(backend: Backend, signal: str, content_type: str) -> None:
    """opentelemetry-instrument exports metrics and logs by default: say plainly that only traces go here."""
    response = httpx.post(f"{backend.url}/v1/{signal}", content=b"\x0a\x00", headers={"Content-Type": content_type})
    assert response.status_code == 404
    assert response.headers["content-type"] == content_type
    message = status_of(response).message
    assert message.startswith(f"coordbench accepts traces only (POST /v1/traces); {signal} are not accepted here")
    assert f"OTEL_{signal.upper()}_EXPORTER=none" in message
    assert backend.stats()["received"] == 0


def test_the_root_says_what_the_server_is(backend: Backend) -> None:
    about = httpx.get(f"{backend.url}/").json()
    assert about["name"] == "coordbench trace backend" and "Traces only" in about["description"]
    routes = {(e["path"], e["method"]) for e in about["endpoints"]}
    assert {
        ("/v1/traces", "POST"),
        ("/v1/traces", "GET"),
        ("/v1/traces/{trace_id}", "GET"),
        ("/healthz", "GET"),
    } <= routes


def test_empty_body_succeeds(backend: Backend) -> None:
    response = httpx.post(f"{backend.url}/v1/traces", content=b"", headers=PROTO)
    assert response.status_code == 200
    assert ExportTraceServiceResponse.FromString(response.content) == ExportTraceServiceResponse()


def test_size_cap_before_and_after_decompression(start_backend: StartBackend) -> None:
    backend = start_backend(max_body_bytes=64 * 1024)
    big = b"\x0a" * (100 * 1024)  # larger than the cap as sent
    response = httpx.post(f"{backend.url}/v1/traces", content=big, headers=PROTO)
    assert response.status_code == 413
    bomb = gzip.compress(b"\x00" * (50 * 1024 * 1024))  # ~50 KB that inflates to 50 MiB
    assert len(bomb) < 64 * 1024
    response = httpx.post(f"{backend.url}/v1/traces", content=bomb, headers={**PROTO, "Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert "after decompression" in status_of(response).message
    # zstd: a frame declaring its 50 MiB, and a streamed one that does not say
    for zstd_bomb in (
        zstandard.ZstdCompressor().compress(b"\x00" * (50 * 1024 * 1024)),
        _zstd_streamed(b"\x00" * (50 * 1024 * 1024)),
    ):
        assert len(zstd_bomb) < 64 * 1024
        headers = {**PROTO, "Content-Encoding": "zstd"}
        response = httpx.post(f"{backend.url}/v1/traces", content=zstd_bomb, headers=headers)
        assert response.status_code == 413
        assert "after decompression" in status_of(response).message
    assert backend.stats()["received"] == 0


def test_full_store_answers_503_with_retry_after_and_loses_nothing(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=3, evict_after=3600)
    body = export_request(spans_body()).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTO).status_code == 200
    more = export_request([span("other", trace_id="ab" * 16, span_id=sid(50))]).SerializeToString()
    response = httpx.post(f"{backend.url}/v1/traces", content=more, headers=PROTO)
    assert response.status_code == 503
    assert int(response.headers["Retry-After"]) >= 1
    assert "trace store is full" in status_of(response).message
    # the re-sent first batch is still accepted (duplicates, nothing new needed)
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTO).status_code == 200
    stats = backend.stats()
    assert stats == {**stats, "received": 7, "stored": 6, "rejected": 1, "duplicates": 3, "spans": 3, "evicted": 0}
    assert stats["received"] == stats["stored"] + stats["rejected"]


def test_finished_traces_are_evicted_to_make_room(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=3, evict_after=0)
    first = export_request(spans_body()).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=first, headers=PROTO).status_code == 200
    second = export_request([span("next", trace_id="ab" * 16, span_id=sid(60))]).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=second, headers=PROTO).status_code == 200
    stats = backend.stats()
    assert (stats["evicted"], stats["spans"], stats["traces"]) == (3, 1, 1)
    assert httpx.get(f"{backend.url}/v1/traces/{TRACE}").status_code == 404


async def test_too_many_exports_at_once_get_429(start_backend: StartBackend) -> None:
    backend = start_backend(max_inflight=1)
    async with httpx.AsyncClient() as client:
        async with decoding_slot_held(client, backend.url) as first:  # the first export holds the only slot
            second = await client.post(f"{backend.url}/v1/traces", content=b"", headers=PROTO)
        assert second.status_code == 429
        assert second.headers["Retry-After"] == "2"
        assert (await first).status_code == 400  # b"\x0a" alone is a truncated message


def test_bearer_token(start_backend: StartBackend) -> None:
    backend = start_backend(token="s3cret")
    body = export_request(spans_body()).SerializeToString()
    url = f"{backend.url}/v1/traces"
    assert httpx.post(url, content=body, headers=PROTO).status_code == 401
    wrong = httpx.post(url, content=body, headers={**PROTO, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"] == "Bearer"
    assert httpx.post(url, content=body, headers={**PROTO, **backend.headers}).status_code == 200
    assert httpx.get(f"{backend.url}/v1/stats").status_code == 401
    assert httpx.get(f"{backend.url}/metrics").status_code == 401
    assert httpx.get(f"{backend.url}/metrics", headers=backend.headers).status_code == 200
    assert httpx.get(f"{backend.url}/healthz").status_code == 200
    assert backend.stats()["stored"] == 3


def test_a_malformed_attribute_rejects_its_span_not_the_export(backend: Backend) -> None:
    sent = spans_body()
    doc = export_request_json(sent)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        {"key": "tags", "value": {"arrayValue": {"values": 5}}}
    ]
    response = httpx.post(f"{backend.url}/v1/traces", content=json.dumps(doc), headers=JSON)
    assert response.status_code == 200
    assert response.json()["partialSuccess"] == {
        "rejectedSpans": "1",
        "errorMessage": "1 spans rejected: invalid arrayValue (values is not a list) (1)",
    }
    stats = backend.stats()
    assert (stats["received"], stats["rejected"], stats["stored"]) == (len(sent), 1, len(sent) - 1)


def test_lone_surrogates_in_json_become_replacement_characters(backend: Backend) -> None:
    """JSON may escape half an emoji (a JS exporter truncating a value): the span is kept, the half is U+FFFD."""
    doc = export_request_json(spans_body())
    doc["resourceSpans"][0]["resource"]["attributes"] = [{"key": "service.name", "value": {"stringValue": "svc@"}}]
    first = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    first["name"] = "cut @"
    first["attributes"] = [{"key": "note@", "value": {"stringValue": "half @ and whole \U0001f600"}}]
    body = json.dumps(doc).replace("@", "\\ud83d").encode()  # the escape json.dumps would never write
    assert b"\\ud83d" in body and b"\\ude00" in body
    response = httpx.post(f"{backend.url}/v1/traces", content=body, headers=JSON)
    assert (response.status_code, response.json()) == (200, {})
    stored = {s["span_id"]: s for s in trace(backend, TRACE)["spans"]}  # type: ignore[union-attr]
    kept = stored[first["spanId"]]
    assert kept["name"] == "cut \ufffd"
    assert kept["resource"]["service.name"] == "svc\ufffd"
    assert kept["attributes"] == {"note\ufffd": "half \ufffd and whole \U0001f600"}
    assert backend.stats()["stored"] == len(stored)


def test_a_decoder_bug_is_a_500_with_a_status_and_stores_nothing(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(body: bytes) -> object:
        raise RuntimeError("decoder bug")

    monkeypatch.setattr(coordbench.server.otlp_http, "decode_json", broken)
    response = httpx.post(
        f"{backend.url}/v1/traces", content=json.dumps(export_request_json(spans_body())), headers=JSON
    )
    assert response.status_code == 500
    assert status_of(response) == status_pb2.Status(
        code=13, message="the receiver failed to decode this export (see its log)"
    )
    assert backend.stats()["received"] == 0


@pytest.mark.parametrize("threshold", [0, 1 << 30], ids=["off-the-loop", "on-the-loop"])
def test_large_bodies_are_decoded_off_the_event_loop(
    start_backend: StartBackend, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    backend = start_backend(decode_in_thread_bytes=threshold)
    threads = note_decode_threads(monkeypatch, coordbench.server.otlp_http)
    good = httpx.post(
        f"{backend.url}/v1/traces", content=export_request(spans_body()).SerializeToString(), headers=PROTO
    )
    bad = httpx.post(f"{backend.url}/v1/traces", content=b"\x0a\xff\xff", headers=PROTO)
    assert (good.status_code, bad.status_code) == (200, 400)
    loop_thread = f"uvicorn:{backend.server.port}"  # LoopbackServer's event-loop thread
    assert len(threads) == 2
    assert all((name != loop_thread) == (threshold == 0) for name in threads), threads


def test_a_stalled_body_gets_408_and_frees_its_slot(start_backend: StartBackend) -> None:
    backend = start_backend(max_inflight=1, body_timeout=0.5)
    port = int(backend.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as stalled:
        head = (
            "POST /v1/traces HTTP/1.1\r\nHost: x\r\n"
            f"Content-Type: {PROTO['Content-Type']}\r\nContent-Length: 1000\r\n\r\n"
        )
        stalled.sendall(head.encode() + b"\x0a\x02")  # 2 of the 1,000 bytes promised, then nothing
        started = time.monotonic()
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = stalled.recv(4096)
            if not chunk:
                break
            answer += chunk
        waited = time.monotonic() - started
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line == b"HTTP/1.1 408 Request Timeout"
    assert b"connection: close" in rest.lower()
    assert waited >= 0.4  # it waited out the body timeout (a hang would end in the socket's 10 s timeout)
    # the slot is free again: a normal export goes through (max_inflight=1)
    body = export_request(spans_body()).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTO).status_code == 200
    assert backend.stats()["received"] == 3


def test_a_client_gone_mid_body_stores_nothing_and_frees_its_slot(
    start_backend: StartBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="coordbench.server.otlp_http")
    backend = start_backend(max_inflight=1)
    port = int(backend.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as gone:
        head = (
            "POST /v1/traces HTTP/1.1\r\nHost: x\r\n"
            f"Content-Type: {PROTO['Content-Type']}\r\nContent-Length: 1000\r\n\r\n"
        )
        gone.sendall(head.encode() + b"\x0a" * 10)
        deadline = time.monotonic() + 10
        while "coordbench_exports_inflight 1" not in httpx.get(f"{backend.url}/metrics").text:
            assert time.monotonic() < deadline, "the export never started"
            time.sleep(0.01)
    body = export_request(spans_body()).SerializeToString()
    deadline = time.monotonic() + 10
    while (answer := httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTO)).status_code == 429:
        assert time.monotonic() < deadline, "the slot was never freed"
        time.sleep(0.05)
    assert answer.status_code == 200
    assert backend.stats()["received"] == 3
    assert "the client went away before sending the whole body" in caplog.text
    assert "decoding failed unexpectedly" not in caplog.text


def test_decode_weight_counts_what_each_kind_of_byte_costs_to_decode() -> None:
    assert decode_weight(1000, native_scan=False) == 1000
    assert decode_weight(1000, compressed=True, native_scan=False) == 4000
    # a JSON byte: four in Python, a third through the native JSON scanner (the protobuf scanner is not asked)
    assert decode_weight(1000, json_body=True, native_json=False, native_scan=True) == 4000
    assert decode_weight(1000, compressed=True, json_body=True, native_json=False) == 16000
    assert decode_weight(1000, json_body=True, native_json=True, native_scan=False) == 334
    assert decode_weight(1000, compressed=True, json_body=True, native_json=True) == 1334
    assert decode_weight(1000, json_body=True) == (334 if native.JSON_AVAILABLE else 4000)
    assert decode_weight(1000, native_scan=True) == 250
    assert decode_weight(1000, compressed=True, native_scan=True) == 1000
    assert decode_weight(1000) == (250 if native.AVAILABLE else 1000)


def test_a_batch_larger_than_the_whole_store_gets_413_not_an_endless_503(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=2)
    response = httpx.post(
        f"{backend.url}/v1/traces", content=export_request(spans_body()).SerializeToString(), headers=PROTO
    )
    assert response.status_code == 413  # OTLP clients do not retry it: no retry could ever fit
    assert "Retry-After" not in response.headers
    status = status_of(response)
    assert status.code == 8  # RESOURCE_EXHAUSTED
    assert status.message.startswith("the batch (spans 3, new traces 1, ~")
    assert status.message.endswith(
        "is larger than the whole trace store (max_spans 2, max_traces 100000, max_bytes 1073741824)"
    )
    stats = backend.stats()
    assert (stats["received"], stats["rejected"], stats["spans"]) == (3, 3, 0)
