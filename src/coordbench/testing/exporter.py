"""An in-memory span exporter that tests can wait on and turn into span trees."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from coordbench.spans import SpanData, span_data_from_readable
from coordbench.testing.tree import SpanTree

__all__ = ["RecordingSpanExporter"]


class RecordingSpanExporter(InMemorySpanExporter):
    """``InMemorySpanExporter`` plus waiting and conversion to :class:`~coordbench.spans.SpanData`.

    SERVER spans end after the response has been sent (and after the agent's executor has
    returned), so a test that asserts right after a call should first :meth:`wait_for` them.
    """

    def __init__(self) -> None:
        """Create an empty exporter."""
        super().__init__()
        self._arrived = threading.Condition()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Store ``spans`` and wake waiters."""
        result = super().export(spans)
        with self._arrived:
            self._arrived.notify_all()
        return result

    def spans(self) -> list[SpanData]:
        """The finished spans so far, as domain spans."""
        return [span_data_from_readable(s) for s in self.get_finished_spans()]

    def tree(self) -> SpanTree:
        """The finished spans so far, as a tree."""
        return SpanTree(self.spans())

    def wait_for(self, condition: int | Callable[[list[SpanData]], bool], *, timeout: float = 120.0) -> list[SpanData]:
        """Block until ``condition`` holds for the finished spans, then return them.

        Args:
            condition: A span count to reach, or a predicate on the spans.
            timeout: Seconds to wait at most: only a bound on a hang (it returns as soon as the
                condition holds), so generous by default: a busy machine may take seconds.

        Returns:
            The spans once the condition holds.

        Raises:
            TimeoutError: If the condition does not hold in time (the message lists the spans).
        """
        check: Callable[[list[SpanData]], bool] = (
            (lambda spans: len(spans) >= condition) if isinstance(condition, int) else condition
        )
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                spans = self.spans()
                if check(spans):
                    return spans
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    names = ", ".join(f"{s.name} [{s.kind.name}]" for s in spans) or "none"
                    raise TimeoutError(f"spans did not arrive within {timeout}s; have {len(spans)}: {names}")
                self._arrived.wait(min(remaining, 0.05))

    async def wait_for_async(
        self,
        condition: int | Callable[[list[SpanData]], bool],
        *,
        timeout: float = 120.0,  # noqa: ASYNC109 - mirrors wait_for(); polling needs a deadline of its own
    ) -> list[SpanData]:
        """:meth:`wait_for` without blocking the event loop (polls every 10 ms)."""
        import asyncio

        check: Callable[[list[SpanData]], bool] = (
            (lambda spans: len(spans) >= condition) if isinstance(condition, int) else condition
        )
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if check(spans):
                return spans
            if time.monotonic() >= deadline:
                names = ", ".join(f"{s.name} [{s.kind.name}]" for s in spans) or "none"
                raise TimeoutError(f"spans did not arrive within {timeout}s; have {len(spans)}: {names}")
            await asyncio.sleep(0.01)
