"""The OTLP export of every signal, from the standard ``OTEL_*`` environment variables, read in one place.

:func:`otlp_endpoint`, :func:`otlp_protocol` and :func:`otlp_exporter` read the variables of a
signal (traces, metrics, logs) as the OpenTelemetry specification says: the signal's own variable
(``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``) before the generic one (``OTEL_EXPORTER_OTLP_ENDPOINT``).
Agents' tracing, the backend's metrics, online evaluation's events, the assessor's own spans, the
purple team and the tau2 bridge all go through them.

``configure_tracing("my-agent")`` is all an agent needs to export its spans over OTLP:
sending to Jaeger (or to coordbench's receiver, or a collector) is then only
``OTEL_EXPORTER_OTLP_ENDPOINT=http://host:4318``.

Honoured variables: ``OTEL_SDK_DISABLED``, ``OTEL_SERVICE_NAME`` (wins over the
``service_name`` argument, so operators can rename a service), ``OTEL_RESOURCE_ATTRIBUTES``
(likewise),
``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, ``none``; comma-separated),
``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`` (``http/protobuf``, the default, or ``grpc``), and
whatever the OTLP exporters and the batch processor read themselves
(``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``..._HEADERS``, ``..._COMPRESSION``,
``..._TIMEOUT``, ``OTEL_BSP_*``).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Literal, overload

from opentelemetry import trace
from opentelemetry.environment_variables import OTEL_TRACES_EXPORTER
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_RESOURCE_ATTRIBUTES,
    OTEL_SDK_DISABLED,
    OTEL_SERVICE_NAME,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from coordbench import semconv
from coordbench.errors import ConfigurationError

if TYPE_CHECKING:
    from opentelemetry.sdk._logs.export import LogRecordExporter
    from opentelemetry.sdk.metrics.export import MetricExporter

__all__ = ["Signal", "configure_tracing", "otlp_endpoint", "otlp_exporter", "otlp_protocol", "requested_exporters"]

Signal = Literal["traces", "metrics", "logs"]
"""The OpenTelemetry signals coordbench exports."""

logger = logging.getLogger(__name__)

_PROTOCOLS = ("http/protobuf", "grpc")


def otlp_endpoint(signal: Signal, *, own_only: bool = False) -> str | None:
    """Where the environment sends the signal over OTLP: its own endpoint variable, else the generic one.

    Args:
        signal: ``traces``, ``metrics`` or ``logs``.
        own_only: Only the signal's own variable counts (``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``): for
            a signal a process exports only when asked by name (the backend's metrics and events).
    """
    names = [f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"] + ([] if own_only else [OTEL_EXPORTER_OTLP_ENDPOINT])
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def otlp_protocol(signal: Signal) -> str:
    """The signal's OTLP protocol: its own variable, else the generic one, else ``http/protobuf``.

    Raises:
        ConfigurationError: Naming the variable, when its value is neither ``http/protobuf`` nor ``grpc``.
    """
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", OTEL_EXPORTER_OTLP_PROTOCOL):
        protocol = os.environ.get(name, "").strip().lower()
        if protocol:
            if protocol not in _PROTOCOLS:
                raise ConfigurationError(f"{name}={protocol!r} is not supported; use one of {', '.join(_PROTOCOLS)}")
            return protocol
    return "http/protobuf"


@overload
def otlp_exporter(signal: Literal["traces"]) -> SpanExporter: ...
@overload
def otlp_exporter(signal: Literal["metrics"]) -> MetricExporter: ...
@overload
def otlp_exporter(signal: Literal["logs"]) -> LogRecordExporter: ...
def otlp_exporter(signal: Signal) -> SpanExporter | MetricExporter | LogRecordExporter:
    """The OTLP exporter of the signal, in the protocol the environment names (:func:`otlp_protocol`).

    The exporter reads its endpoint, headers, compression and timeout from the environment itself.

    Raises:
        ConfigurationError: If the protocol variable has a value we cannot honour.
    """
    grpc = otlp_protocol(signal) == "grpc"
    if signal == "traces":
        if grpc:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans

            return GrpcSpans()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpans

        return HttpSpans()
    if signal == "metrics":
        if grpc:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetrics

            return GrpcMetrics()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetrics

        return HttpMetrics()
    if grpc:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogs

        return GrpcLogs()
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogs

    return HttpLogs()


def _exporters() -> list[SpanExporter]:
    names = [n.strip().lower() for n in os.environ.get(OTEL_TRACES_EXPORTER, "otlp").split(",") if n.strip()]
    exporters: list[SpanExporter] = []
    for name in names:
        if name == "otlp":
            exporters.append(otlp_exporter("traces"))
        elif name == "console":
            exporters.append(ConsoleSpanExporter())
        elif name != "none":
            raise ConfigurationError(f"OTEL_TRACES_EXPORTER contains {name!r}; supported: otlp, console, none")
    return exporters


_EXPORT_VARIABLES = (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)


def requested_exporters() -> list[SpanExporter]:
    """The exporters the environment explicitly asks for (none by default).

    None unless one of ``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (and ``OTEL_SDK_DISABLED`` is not ``true``).

    For a process that keeps its spans itself (the assessor) and exports them elsewhere
    (Jaeger, a collector) only when told to.

    Raises:
        ConfigurationError: If a variable has a value we cannot honour.
    """
    if os.environ.get(OTEL_SDK_DISABLED, "").strip().lower() == "true":
        return []
    if not any(os.environ.get(v, "").strip() for v in _EXPORT_VARIABLES):
        return []
    return _exporters()


def _service_name_in_env() -> bool:
    if os.environ.get(OTEL_SERVICE_NAME, "").strip():
        return True
    pairs = os.environ.get(OTEL_RESOURCE_ATTRIBUTES, "").split(",")
    return any(pair.split("=", 1)[0].strip() == semconv.SERVICE_NAME for pair in pairs)


def configure_tracing(
    service_name: str | None = None,
    *,
    exporters: list[SpanExporter] | None = None,
    set_global: bool = True,
) -> TracerProvider:
    """Create a tracer provider that batches spans to the exporters the environment asks for.

    Args:
        service_name: ``service.name`` of this process, used unless ``OTEL_SERVICE_NAME`` (or
            ``service.name`` in ``OTEL_RESOURCE_ATTRIBUTES``) is set.
        exporters: Exporters to use instead of those named by ``OTEL_TRACES_EXPORTER``.
        set_global: Install the provider as the global one (``opentelemetry.trace``). When a
            global SDK provider is already installed, that one is returned unchanged.

    Returns:
        The provider; call ``shutdown()`` (or let the interpreter exit) to flush spans.

    Raises:
        ConfigurationError: If an ``OTEL_*`` variable has a value we cannot honour; the
            message names the variable.
    """
    if set_global:
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            logger.info("a global tracer provider is already installed; configure_tracing() reuses it")
            return current
    attributes: dict[str, str] = {}
    if service_name and not _service_name_in_env():
        attributes[semconv.SERVICE_NAME] = service_name
    disabled = os.environ.get(OTEL_SDK_DISABLED, "").strip().lower() == "true"
    provider = TracerProvider(resource=Resource.create(attributes))
    if not disabled:
        for exporter in _exporters() if exporters is None else exporters:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    if set_global:
        trace.set_tracer_provider(provider)
    return provider
