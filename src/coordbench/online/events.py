"""Online evaluations as OpenTelemetry ``gen_ai.evaluation.result`` events, on the evaluated trace.

The GenAI semantic conventions define the event: a log record named
``gen_ai.evaluation.result`` with ``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label`` and ``gen_ai.evaluation.explanation``, parented to the span it
evaluates. Each evaluation emits, per scenario, ``coordbench.score`` (label ``pass``/``fail``),
``coordbench.coordination`` and ``coordbench.answer`` (labels ``good`` >= 0.75, ``fair`` >= 0.5,
``poor``), and for a scenario that failed ``coordbench.attribution`` (score: the confidence; label:
the agent named responsible, ``none`` when none could be; explanation: the finding), with the
trace's root span as parent, so a tracing UI that shows these events shows
our scores on the trace with no integration work. They are exported over OTLP (logs) when
``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from coordbench.online.job import EvaluationEvent
from coordbench.telemetry import otlp_endpoint, otlp_exporter

if TYPE_CHECKING:
    from opentelemetry.sdk._logs.export import LogRecordExporter

__all__ = ["EVENT_NAME", "EvaluationEvents"]

EVENT_NAME = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
SCENARIO = "coordbench.scenario.id"


class EvaluationEvents:
    """Emits ``gen_ai.evaluation.result`` events through the OpenTelemetry logs SDK.

    Args:
        exporter: Where the events go (default: OTLP when ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``
            is set, else nowhere, and :attr:`enabled` is false).
        service_name: ``service.name`` of the events' resource.
    """

    def __init__(self, exporter: LogRecordExporter | None = None, *, service_name: str = "coordbench-receiver") -> None:
        """Create the logger provider when there is somewhere to send the events."""
        if exporter is None and otlp_endpoint("logs", own_only=True) is not None:
            exporter = otlp_exporter("logs")
        self.enabled = exporter is not None
        self._provider: Any = None
        self._logger: Any = None
        if exporter is not None:
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
            from opentelemetry.sdk.resources import Resource

            self._provider = LoggerProvider(resource=Resource.create({"service.name": service_name}))
            self._provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
            self._logger = self._provider.get_logger("coordbench.online")

    def emit(self, trace_id: str, span_id: str | None, events: Sequence[EvaluationEvent]) -> None:
        """Emit ``events`` as children of span ``span_id`` of trace ``trace_id`` (hex ids)."""
        if self._logger is None or not events:
            return
        from opentelemetry._logs import LogRecord
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

        parent = SpanContext(
            int(trace_id, 16), int(span_id or "0" * 16, 16), is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
        )
        context = set_span_in_context(NonRecordingSpan(parent))
        for event in events:
            self._logger.emit(
                LogRecord(
                    context=context,
                    event_name=EVENT_NAME,
                    body=event.explanation,
                    attributes={
                        EVALUATION_NAME: event.name,
                        SCORE_VALUE: event.score,
                        SCORE_LABEL: event.label,
                        EXPLANATION: event.explanation,
                        SCENARIO: event.scenario,
                    },
                )
            )

    def flush(self) -> None:
        """Send what is buffered now."""
        if self._provider is not None:
            self._provider.force_flush()

    def shutdown(self) -> None:
        """Flush and stop."""
        if self._provider is not None:
            self._provider.shutdown()
