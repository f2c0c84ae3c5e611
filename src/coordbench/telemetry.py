"""Setting up tracing for an agent process from the standard ``OTEL_*`` environment variables.

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

from opentelemetry import trace
from opentelemetry.environment_variables import OTEL_TRACES_EXPORTER
from opentelemetry.sdk.environment_variables import (
    OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    OTEL_RESOURCE_ATTRIBUTES,
    OTEL_SDK_DISABLED,
    OTEL_SERVICE_NAME,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

from coordbench import semconv
from coordbench.errors import ConfigurationError

__all__ = ["configure_tracing", "requested_exporters"]

logger = logging.getLogger(__name__)

_PROTOCOLS = ("http/protobuf", "grpc")


def _otlp_exporter() -> SpanExporter:
    for var in (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL):
        protocol = os.environ.get(var, "").strip().lower()
        if protocol:
            break
    else:
        var, protocol = OTEL_EXPORTER_OTLP_PROTOCOL, "http/protobuf"
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPExporter

        return HTTPExporter()
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GRPCExporter

        return GRPCExporter()
    raise ConfigurationError(f"{var}={protocol!r} is not supported; use one of {', '.join(_PROTOCOLS)}")


def _exporters() -> list[SpanExporter]:
    names = [n.strip().lower() for n in os.environ.get(OTEL_TRACES_EXPORTER, "otlp").split(",") if n.strip()]
    exporters: list[SpanExporter] = []
    for name in names:
        if name == "otlp":
            exporters.append(_otlp_exporter())
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
