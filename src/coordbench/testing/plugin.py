"""The ``coordbench`` pytest plugin (entry point ``pytest11``): span fixtures for A2A agent tests.

Fixtures:
    span_exporter: A fresh :class:`~coordbench.testing.RecordingSpanExporter` per test.
    tracer_provider: A ``TracerProvider`` exporting synchronously to ``span_exporter``; it is
        passed explicitly to whatever needs it and never installed globally.
    a2a_instrumented: ``A2AInstrumentor`` instrumented with ``tracer_provider`` for the
        test and uninstrumented afterwards; yields ``span_exporter``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from coordbench import semconv
from coordbench.testing.exporter import RecordingSpanExporter


@pytest.fixture
def span_exporter() -> RecordingSpanExporter:
    """A fresh in-memory exporter for this test."""
    return RecordingSpanExporter()


@pytest.fixture
def tracer_provider(span_exporter: RecordingSpanExporter) -> Iterator[TracerProvider]:
    """A tracer provider (``service.name=pytest``) that exports every span to ``span_exporter`` at once."""
    provider = TracerProvider(resource=Resource.create({semconv.SERVICE_NAME: "pytest"}))
    provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    yield provider
    provider.shutdown()


@pytest.fixture
def a2a_instrumented(
    tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> Iterator[RecordingSpanExporter]:
    """A2A calls and requests traced into ``span_exporter`` for the length of the test."""
    from coordbench.instrument import A2AInstrumentor

    instrumentor = A2AInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        yield span_exporter
    finally:
        instrumentor.uninstrument()
