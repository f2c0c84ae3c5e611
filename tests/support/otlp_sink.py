"""A deliberately small OTLP/HTTP trace receiver for tests (protobuf, optional gzip).

Where a test only needs the spans other processes exported (telemetry set-up, instrumented
agents), this keeps the test independent of the receiver's HTTP layer; decoding is shared.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from coordbench.otlp import decode_protobuf
from coordbench.spans import SpanData


def decode(body: bytes) -> list[SpanData]:
    return [encoded.decode() for encoded in decode_protobuf(body).spans]


class OtlpSink:
    """Collects spans posted to ``{url}/v1/traces``."""

    def __init__(self) -> None:
        self.spans: list[SpanData] = []
        self.requests = 0
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                spans = decode(body)
                with sink._lock:
                    sink.spans.extend(spans)
                    sink.requests += 1
                payload = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for(self, condition: Callable[[list[SpanData]], bool], timeout: float = 15.0) -> list[SpanData]:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                spans = list(self.spans)
            if condition(spans):
                return spans
            if time.monotonic() > deadline:
                names = ", ".join(f"{s.service_name}:{s.name}" for s in spans)
                raise TimeoutError(f"OTLP spans did not arrive in {timeout}s; have {len(spans)}: {names}")
            time.sleep(0.05)
