"""Durable mode: accepted spans survive the process, even SIGKILL right after the 200."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from coordbench.errors import ConfigurationError
from coordbench.otlp import (
    CODECS,
    OTLP_PROTOBUF,
    decode_json,
    decode_protobuf,
    export_request,
    export_request_json,
    native,
)
from coordbench.spans import SpanLink
from coordbench.store import SqlitePersistence, TraceStore
from support.serving import free_port
from support.spans import TRACE, call, serve, sid, span


async def test_spans_come_back_after_reopening(tmp_path: Path) -> None:
    spans = [
        span("root", span_id=sid(1), service="host", blob=b"\x00\x01"),
        call("host", "B", parent=sid(1), span_id=sid(2)),
    ]
    link = SpanLink("ab" * 16, sid(99), {"reason": "follow-up"}, "k=v")
    served = serve("B", parent=sid(2), span_id=sid(3))._replace(links=(link,))
    json_spans = decode_json(json.dumps(export_request_json([served])).encode()).spans
    # the native scanner keeps a JSON span's text, and the store writes that text as it is
    assert json_spans[0].codec.name == ("otlp/json-text" if native.JSON_AVAILABLE else "otlp/json")
    store = TraceStore(persistence=SqlitePersistence(tmp_path, codecs=CODECS))
    await store.open()
    await store.add(decode_protobuf(export_request(spans).SerializeToString()).spans)
    await store.add(json_spans)
    before = store.get(TRACE)
    await store.close()

    reopened = TraceStore(persistence=SqlitePersistence(tmp_path, codecs=CODECS))
    await reopened.open()
    after = reopened.get(TRACE)
    assert before is not None and after is not None
    assert after.spans == before.spans
    assert after.spans[0].attributes["blob"] == b"\x00\x01"
    assert [s.links for s in after.spans if s.span_id == sid(3)] == [(link,)]  # JSON-ingested, kept whole
    # evicting a trace deletes it from disk too
    assert await reopened.delete(TRACE)
    await reopened.close()
    empty = TraceStore(persistence=SqlitePersistence(tmp_path, codecs=CODECS))
    await empty.open()
    assert empty.stats.spans == 0
    await empty.close()


async def test_a_span_stored_in_an_encoding_no_codec_reads_is_named_on_open(tmp_path: Path) -> None:
    store = TraceStore(persistence=SqlitePersistence(tmp_path, codecs=CODECS))
    await store.open()
    await store.add(decode_protobuf(export_request([span("root", span_id=sid(1))]).SerializeToString()).spans)
    await store.close()
    json_only = {name: codec for name, codec in CODECS.items() if codec is not OTLP_PROTOBUF}
    reopened = TraceStore(persistence=SqlitePersistence(tmp_path, codecs=json_only))
    expected = r"holds a span stored as 'otlp/protobuf'.*\(it reads otlp/json, otlp/json-text\)"
    with pytest.raises(ConfigurationError, match=expected):
        await reopened.open()


def _start(port: int, data_dir: Path) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-m",
        "coordbench.cli",
        "receiver",
        "--port",
        str(port),
        "--no-grpc",
        "--data-dir",
        str(data_dir),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
        if proc.poll() is not None:
            raise RuntimeError(proc.communicate()[1])
    proc.kill()
    proc.communicate()
    raise RuntimeError("receiver did not start")


@pytest.mark.slow
def test_sigkill_after_200_loses_nothing(tmp_path: Path) -> None:
    port = free_port()
    proc = _start(port, tmp_path)
    sent = 0
    try:
        for batch in range(20):
            spans = [span(f"s{batch}-{i}", span_id=sid(batch * 100 + i + 1)) for i in range(50)]
            response = httpx.post(
                f"http://127.0.0.1:{port}/v1/traces",
                content=export_request(spans).SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"},
            )
            assert response.status_code == 200
            sent += len(spans)
        os.kill(proc.pid, signal.SIGKILL)  # no shutdown, no checkpoint: only what was committed
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    proc = _start(port, tmp_path)
    try:
        stored = httpx.get(f"http://127.0.0.1:{port}/v1/traces/{TRACE}", timeout=10).json()
        assert len(stored["spans"]) == sent == 1000
        assert httpx.get(f"http://127.0.0.1:{port}/v1/stats").json()["spans"] == 1000
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
