"""configure_tracing: OTLP export set up from the standard OTEL_* variables."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GRPCExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPExporter
from opentelemetry.sdk.trace.export import ConsoleSpanExporter

from coordbench.errors import ConfigurationError
from coordbench.telemetry import _exporters, configure_tracing, otlp_endpoint, otlp_exporter, otlp_protocol
from support.otlp_sink import OtlpSink


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OTEL_SERVICE_NAME",
        "OTEL_TRACES_EXPORTER",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_SDK_DISABLED",
        "OTEL_RESOURCE_ATTRIBUTES",
        *(f"OTEL_EXPORTER_OTLP_{s}_{what}" for s in ("TRACES", "METRICS", "LOGS") for what in ("ENDPOINT", "PROTOCOL")),
    ):
        monkeypatch.delenv(var, raising=False)


def test_endpoint_variable_is_all_it_takes(otlp_sink: OtlpSink, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_sink.url)
    provider = configure_tracing("my-agent", set_global=False)
    with provider.get_tracer("t").start_as_current_span("work"):
        pass
    provider.shutdown()  # flushes the batch
    (span,) = otlp_sink.wait_for(lambda s: len(s) >= 1)
    assert span.name == "work"
    assert span.service_name == "my-agent"


@pytest.mark.parametrize(
    ("var", "value"),
    [("OTEL_SERVICE_NAME", "renamed-by-ops"), ("OTEL_RESOURCE_ATTRIBUTES", "team=x, service.name=renamed-by-ops")],
)
def test_environment_service_name_wins(var: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(var, value)
    provider = configure_tracing("my-agent", set_global=False)
    assert provider.resource.attributes["service.name"] == "renamed-by-ops"
    provider.shutdown()


@pytest.mark.parametrize(
    ("env", "types"),
    [
        ({}, [HTTPExporter]),
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, [GRPCExporter]),
        (
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
            [HTTPExporter],
        ),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, [ConsoleSpanExporter, HTTPExporter]),
        ({"OTEL_TRACES_EXPORTER": "none"}, []),
    ],
)
def test_exporters_follow_the_variables(
    env: dict[str, str], types: list[type], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    exporters = _exporters()
    assert [type(e) for e in exporters] == types
    for exporter in exporters:
        exporter.shutdown()


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "carrier-pigeon", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='carrier-pigeon'"),
        ("OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER contains 'zipkin'"),
    ],
)
def test_bad_values_name_the_variable(var: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")) as caught:
        configure_tracing("x", set_global=False)
    assert isinstance(caught.value, ValueError)


def test_sdk_disabled_exports_nothing(otlp_sink: OtlpSink, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_sink.url)
    provider = configure_tracing("x", set_global=False)
    with provider.get_tracer("t").start_as_current_span("work"):
        pass
    provider.shutdown()
    assert otlp_sink.requests == 0


def test_global_provider_is_installed_once() -> None:
    code = (
        "from opentelemetry import trace\n"
        "from coordbench.telemetry import configure_tracing\n"
        "first = configure_tracing('a')\n"
        "assert trace.get_tracer_provider() is first\n"
        "assert configure_tracing('b') is first\n"
        "print('ok')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"OTEL_TRACES_EXPORTER": "none", "PATH": ""},
        check=False,
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_every_signal_reads_its_own_variables_before_the_generic_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """One reading for traces, metrics and logs, as the OpenTelemetry specification orders the variables."""
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://prometheus:9090/api/v1/otlp/v1/metrics")
    assert otlp_endpoint("traces") == "http://collector:4318"
    assert otlp_endpoint("metrics") == "http://prometheus:9090/api/v1/otlp/v1/metrics"
    assert otlp_endpoint("logs") == "http://collector:4318"
    assert otlp_endpoint("logs", own_only=True) is None  # the backend's events go out only when asked by name
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
    assert [otlp_protocol(s) for s in ("traces", "metrics", "logs")] == ["grpc", "http/protobuf", "grpc"]
    metrics, logs = otlp_exporter("metrics"), otlp_exporter("logs")
    assert isinstance(metrics, HttpMetrics) and isinstance(logs, GrpcLogs)
    metrics.shutdown()
    logs.shutdown()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json")
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_LOGS_PROTOCOL='http/json' is not supported"):
        otlp_exporter("logs")
