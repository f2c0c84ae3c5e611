"""The assessor's own spans, straight into its trace store (no network hop, no batching delay).

The assessor's root and scenario HOST spans and its calls to the participants are the top of
every assessment's trace; the participants' spans hang below them. They must be in the store
before the assessor waits for a scenario's trace, so they are written in-process as each span
ends, on the event loop that owns the store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult

from coordbench import semconv
from coordbench.instrument import A2AInstrumentor
from coordbench.otlp import encoded_span
from coordbench.spans import span_data_from_readable
from coordbench.store import BatchTooLargeError, SpanStore, StoreUnavailableError
from coordbench.store.encoded import EncodedSpan
from coordbench.telemetry import requested_exporters

__all__ = ["AssessorTracing", "StoreSpanExporter", "export_to_store"]

logger = logging.getLogger(__name__)


class StoreSpanExporter(SpanExporter):
    """Writes finished spans into a :class:`~coordbench.store.SpanStore` on the store's event loop.

    Args:
        store: The store.
        loop: The event loop the store lives on (spans may end on other threads).
    """

    def __init__(self, store: SpanStore, loop: asyncio.AbstractEventLoop) -> None:
        self.store = store
        self.loop = loop
        self._pending: set[concurrent.futures.Future[None]] = set()
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Queue the spans for the store (in the order they ended)."""
        if self._closed:
            return SpanExportResult.FAILURE
        batch: list[EncodedSpan] = []
        for span in spans:
            try:
                batch.append(encoded_span(span_data_from_readable(span)))
            except ValueError as exc:  # that span alone is left out, and said so
                logger.warning("a span of the assessor could not be stored: %s", exc)
        if not batch:
            return SpanExportResult.FAILURE
        try:  # from the loop's thread or another: scheduled in order on the store's loop
            future = asyncio.run_coroutine_threadsafe(self._add(batch), self.loop)
        except RuntimeError as exc:  # the loop is closed: the assessor is shutting down
            logger.debug("span(s) ended after the store's loop closed: %s", exc)
            return SpanExportResult.FAILURE
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return SpanExportResult.SUCCESS

    async def _add(self, batch: list[EncodedSpan]) -> None:
        try:
            await self.store.add(batch)
        except (StoreUnavailableError, BatchTooLargeError) as exc:
            logger.warning("the trace store refused %d span(s) of the assessor: %s", len(batch), exc)

    async def flush(self) -> None:
        """Wait until every queued span is in the store (call on the store's loop)."""
        while self._pending:
            await asyncio.gather(*(asyncio.wrap_future(f) for f in list(self._pending)), return_exceptions=True)

    def shutdown(self) -> None:
        """Refuse further spans."""
        self._closed = True


def export_to_store(provider: TracerProvider, store: SpanStore, loop: asyncio.AbstractEventLoop) -> StoreSpanExporter:
    """Make ``provider`` write every span it ends into ``store`` (synchronously queued, in order)."""
    exporter = StoreSpanExporter(store, loop)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


class AssessorTracing:
    """The assessor process's tracing: A2A instrumentation, spans into the store, optional export.

    When A2A instrumentation is already on (the process runs under ``opentelemetry-instrument``),
    the store is added to the global SDK provider instead and nothing is uninstrumented at
    the end.

    Args:
        name: The assessor's agent name (its spans' ``service.name``, so it is recognised as the host).
        store: The store.
        loop: The store's event loop.
        capture_content: Record the text of the assessor's messages (tasks and answers) on its spans.
        exporters: Where else its spans go (default: what the ``OTEL_*`` variables ask for).
    """

    def __init__(
        self,
        name: str,
        store: SpanStore,
        loop: asyncio.AbstractEventLoop,
        *,
        capture_content: bool,
        exporters: Sequence[SpanExporter] | None = None,
    ) -> None:
        instrumentor = A2AInstrumentor()
        self._owned: TracerProvider | None = None
        if instrumentor.is_instrumented_by_opentelemetry:
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                raise RuntimeError("A2A instrumentation is on without an SDK tracer provider; spans cannot be kept")
            logger.info("A2A instrumentation already on: the assessor's spans also go to its own store")
        else:
            provider = TracerProvider(resource=Resource.create({semconv.SERVICE_NAME: name}))
            for exporter in requested_exporters() if exporters is None else exporters:
                provider.add_span_processor(BatchSpanProcessor(exporter))
            self._owned = provider
        self.exporter = export_to_store(provider, store, loop)
        if self._owned is not None:
            instrumentor.instrument(tracer_provider=self._owned, capture_content=capture_content)

    async def close(self) -> None:
        """Store what is pending; undo the instrumentation this object did."""
        await self.exporter.flush()
        self.exporter.shutdown()
        if self._owned is not None:
            A2AInstrumentor().uninstrument()
            self._owned.shutdown()
