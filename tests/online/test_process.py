"""``coordbench receiver --evaluate`` as a process: events and metrics over OTLP, evaluations kept on restart."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

from online.traces import FAILING, SERIAL, evaluation, post, stats, team_trace, trace_id, until
from support.commands import ServerProcess


class SignalSink:
    """Collects OTLP/HTTP logs and metrics exports (protobuf bodies, decoded)."""

    def __init__(self) -> None:
        self.logs: list[ExportLogsServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with sink.lock:
                    if self.path == "/v1/logs":
                        sink.logs.append(ExportLogsServiceRequest.FromString(body))
                    elif self.path == "/v1/metrics":
                        sink.metrics.append(ExportMetricsServiceRequest.FromString(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[tuple[bytes, bytes, str, dict[str, object]]]:
        """Every log record: trace id, span id, event name, attributes."""
        out: list[tuple[bytes, bytes, str, dict[str, object]]] = []
        with self.lock:
            for request in self.logs:
                for resource in request.resource_logs:
                    for scope in resource.scope_logs:
                        for record in scope.log_records:
                            attributes = {
                                kv.key: getattr(kv.value, kv.value.WhichOneof("value") or "string_value")
                                for kv in record.attributes
                            }
                            out.append((record.trace_id, record.span_id, record.event_name, attributes))
        return out

    def metric_names(self) -> set[str]:
        with self.lock:
            return {
                metric.name
                for request in self.metrics
                for resource in request.resource_metrics
                for scope in resource.scope_metrics
                for metric in scope.metrics
            }


def test_receiver_process_emits_events_and_metrics_and_keeps_evaluations(tmp_path: Path) -> None:
    sink = SignalSink()
    env = {
        **os.environ,
        "COORDBENCH_EVALUATE_QUIET": "0.2",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"{sink.url}/v1/logs",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{sink.url}/v1/metrics",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        "OTEL_BLRP_SCHEDULE_DELAY": "100",
    }
    data = tmp_path / "data"
    spans = team_trace(1, SERIAL, namespace="travel")
    root = next(s for s in spans if s.parent_span_id is None)
    failing = team_trace(2, FAILING, namespace="travel")
    with ServerProcess("receiver", "--evaluate", "--no-grpc", "--data-dir", str(data), env=env) as receiver:
        post(receiver.url, spans)
        record = evaluation(receiver.url, trace_id(1))
        first = httpx.get(f"{receiver.url}/v1/traces/{trace_id(1)}/evaluation", timeout=30).text
        until(lambda: len(sink.events()) >= 2, "the evaluation's events were exported")
        post(receiver.url, failing)
        failed = evaluation(receiver.url, trace_id(2))
        until(lambda: any(e[0].hex() == trace_id(2) for e in sink.events()), "the failed trace's events were exported")
        until(lambda: "coordbench.evaluation.score" in sink.metric_names(), "the evaluation's metrics were exported")
        until(lambda: "coordbench.attributions" in sink.metric_names(), "the attribution was counted")

    # the failed trace: its attribution is an event too (score: the confidence; label: the agent)
    blamed = failed["evaluation"]["evaluations"][0]["attribution"]
    assert not failed["scenarios"][0]["passed"] and blamed["agent"]
    attributed = [e[3] for e in sink.events() if e[0].hex() == trace_id(2)
                  and e[3]["gen_ai.evaluation.name"] == "coordbench.attribution"]  # fmt: skip
    assert len(attributed) == 1, attributed
    assert attributed[0]["gen_ai.evaluation.score.label"] == blamed["agent"]
    assert attributed[0]["gen_ai.evaluation.score.value"] == pytest.approx(blamed["confidence"], abs=1e-9)
    assert attributed[0]["gen_ai.evaluation.explanation"] == blamed["reason"][:1000]
    events = [e for e in sink.events() if e[0].hex() == trace_id(1)]
    assert {e[2] for e in events} == {"gen_ai.evaluation.result"}
    assert {(e[0].hex(), e[1].hex()) for e in events} == {(trace_id(1), root.span_id)}  # on the trace's root
    by_name = {e[3]["gen_ai.evaluation.name"]: e[3] for e in events}
    assert set(by_name) == {"coordbench.score", "coordbench.coordination"}  # no answer without an outcome
    scenario = record["scenarios"][0]
    assert by_name["coordbench.score"]["gen_ai.evaluation.score.value"] == scenario["score"]
    assert by_name["coordbench.score"]["gen_ai.evaluation.score.label"] == ("pass" if scenario["passed"] else "fail")
    coordination = by_name["coordbench.coordination"]
    assert coordination["gen_ai.evaluation.score.value"] == scenario["coordination_quality"]
    assert coordination["gen_ai.evaluation.score.label"] in {"good", "fair", "poor"}
    assert "serial" in str(coordination["gen_ai.evaluation.explanation"]).lower()
    assert {"coordbench.spans.received", "coordbench.evidence", "coordbench.traces.evaluated"} <= sink.metric_names()

    # restarted on the same data: the evaluation is still there, byte for byte, and not redone
    with ServerProcess("receiver", "--evaluate", "--no-grpc", "--data-dir", str(data), env=env) as receiver:
        again = httpx.get(f"{receiver.url}/v1/traces/{trace_id(1)}/evaluation", timeout=30)
        assert again.text == first
        counters = stats(receiver.url)
        assert (counters["evaluated"], counters["pending"], counters["kept"]) == (0, 0, 2)
