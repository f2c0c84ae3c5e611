"""The backend's own metrics, through the OpenTelemetry metrics SDK: ingest counters and online evaluations.

One :class:`BackendMeters` per app: its ``MeterProvider`` feeds a Prometheus reader on the
app's own registry (``GET /metrics``) and, when ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is set,
an OTLP exporter too. Nothing here writes exposition text by hand.

Names are OpenTelemetry's (dots); :data:`PROMETHEUS` gives the name each has on ``/metrics``,
which the dashboards and alert rules (:mod:`coordbench.dashboards.grafana`) are built from, so
the two cannot drift apart. Labels whose values come from the traces (team, scenario, hub)
are bounded (:class:`BoundedLabels`): past the bound a new value is reported as ``other``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, HTTPException, Request, Response
from starlette.applications import Starlette

from coordbench.otlp.native import REJECTION_REASONS
from coordbench.store.base import REJECTION_REASONS as STORE_REJECTIONS
from coordbench.telemetry import otlp_endpoint, otlp_exporter

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Observation

    from coordbench.otlp.ingest import Inflight
    from coordbench.store import SpanStore

__all__ = [
    "INSTRUMENTS",
    "OTHER",
    "PROMETHEUS",
    "BackendMeters",
    "BoundedLabels",
    "Instrument",
    "ScenarioFigures",
    "router",
]

logger = logging.getLogger(__name__)

OTHER = "other"
"""The label value a bounded label takes past its bound."""
NO_EVIDENCE = "none"
"""The ``evidence`` label of an evaluated scenario in which no evidence fired."""
KNOWN_REJECTIONS = (*REJECTION_REASONS, *STORE_REJECTIONS)
"""The rejection reasons known before any span arrives: each is a series at 0 from the start."""

SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


@dataclass(frozen=True)
class Instrument:
    """One metric: its OpenTelemetry name, kind, unit, description and labels.

    Attributes:
        name: The OpenTelemetry name.
        kind: ``counter``, ``gauge`` or ``histogram``.
        unit: UCUM unit (``s``, ``By``) or an annotation (``{span}``).
        description: What it counts.
        labels: Its attribute keys.
        buckets: A histogram's bucket bounds.
    """

    name: str
    kind: str
    unit: str
    description: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()

    @property
    def prometheus(self) -> str:
        """Its name on ``/metrics`` (a histogram's series add ``_bucket``, ``_sum``, ``_count``)."""
        base = self.name.replace(".", "_")
        suffix = {"s": "_seconds", "By": "_bytes"}.get(self.unit, "")
        if suffix and not base.endswith(suffix):
            base += suffix
        return base + "_total" if self.kind == "counter" else base


_INGEST = [
    Instrument("coordbench.spans.received", "counter", "{span}", "Spans that reached the receivers."),
    Instrument("coordbench.spans.stored", "counter", "{span}", "Spans accepted (a re-sent span is kept once)."),
    Instrument("coordbench.spans.duplicates", "counter", "{span}", "Accepted spans that were already stored."),
    Instrument("coordbench.spans.rejected", "counter", "{span}", "Spans refused: malformed, or no room."),
    Instrument("coordbench.spans.evicted", "counter", "{span}", "Stored spans dropped later to make room."),
    Instrument(
        "coordbench.spans.rejected_by_reason", "counter", "{span}", "Spans refused, by reason.", labels=("reason",)
    ),
    Instrument("coordbench.store.spans", "gauge", "{span}", "Spans held now."),
    Instrument("coordbench.store.traces", "gauge", "{trace}", "Traces held now."),
    Instrument("coordbench.store.bytes", "gauge", "By", "Approximate memory the held spans take."),
    Instrument("coordbench.store.max_spans", "gauge", "{span}", "The store's span bound."),
    Instrument("coordbench.store.max_traces", "gauge", "{trace}", "The store's trace bound."),
    Instrument("coordbench.store.max_bytes", "gauge", "By", "The store's memory bound."),
    Instrument("coordbench.exports.inflight", "gauge", "{request}", "OTLP exports being read or decoded now."),
]

_TS = ("team", "scenario")
_EVALUATION = [
    Instrument(
        "coordbench.evaluation.score", "histogram", "", "Overall score of each evaluated scenario.", _TS, SCORE_BUCKETS
    ),
    Instrument(
        "coordbench.evaluation.answer_quality",
        "histogram",
        "",
        "Answer quality of each evaluated scenario.",
        _TS,
        SCORE_BUCKETS,
    ),
    Instrument(
        "coordbench.evaluation.coordination_quality",
        "histogram",
        "",
        "Coordination quality of each evaluated scenario.",
        _TS,
        SCORE_BUCKETS,
    ),
    Instrument(
        "coordbench.graph.density",
        "histogram",
        "",
        "Density of each evaluated scenario's agent graph.",
        _TS,
        SCORE_BUCKETS,
    ),
    Instrument(
        "coordbench.graph.degree_centralisation",
        "histogram",
        "",
        "Degree centralisation of each evaluated scenario's agent graph.",
        _TS,
        SCORE_BUCKETS,
    ),
    Instrument(
        "coordbench.trace.critical_path",
        "histogram",
        "s",
        "Critical-path time of each evaluated scenario.",
        _TS,
        SECONDS_BUCKETS,
    ),
    Instrument(
        "coordbench.hub.request.duration",
        "histogram",
        "s",
        "Median time each hub took to answer a request, per evaluated scenario.",
        (*_TS, "hub"),
        SECONDS_BUCKETS,
    ),
    Instrument(
        "coordbench.evaluation.duration",
        "histogram",
        "s",
        "Time from a trace's last span to its evaluation's end.",
        ("team",),
        SECONDS_BUCKETS,
    ),
    Instrument(
        "coordbench.evaluation.run.duration",
        "histogram",
        "s",
        "Time the evaluation itself took.",
        ("team",),
        SECONDS_BUCKETS,
    ),
    Instrument(
        "coordbench.evaluations",
        "counter",
        "{scenario}",
        "Scenarios evaluated, by whether they passed.",
        (*_TS, "passed"),
    ),
    Instrument(
        "coordbench.traces.evaluated",
        "counter",
        "{trace}",
        "Traces evaluated (a re-evaluation counts again).",
        ("team", "revision"),
    ),
    Instrument(
        "coordbench.traces.skipped",
        "counter",
        "{trace}",
        "Traces not evaluated: queue full, evicted first, the evaluation failed or timed out.",
        ("reason",),
    ),
    Instrument(
        "coordbench.traces.without_agent_calls",
        "counter",
        "{trace}",
        "Complete traces with no A2A call (nothing to judge).",
    ),
    Instrument(
        "coordbench.evaluation.late_spans",
        "counter",
        "{span}",
        "Spans that arrived after their trace was evaluated.",
        ("team",),
    ),
    Instrument(
        "coordbench.evidence",
        "counter",
        "{scenario}",
        "Evaluated scenarios in which each piece of evidence fired ('none': scenarios where nothing did).",
        (*_TS, "evidence"),
    ),
    Instrument(
        "coordbench.attributions",
        "counter",
        "{scenario}",
        "Failed scenarios by the agent failure attribution named responsible and the rule that found it "
        "('none': no agent could be named).",
        (*_TS, "agent", "rule"),
    ),
    Instrument(
        "coordbench.judge.skipped",
        "counter",
        "{trace}",
        "Traces sampled for the LLM judge that the rate limit left to the rule-based judge.",
    ),
    Instrument("coordbench.evaluation.queue.size", "gauge", "{trace}", "Traces waiting for evaluation."),
    Instrument("coordbench.evaluation.queue.capacity", "gauge", "{trace}", "The evaluation queue's bound."),
    Instrument("coordbench.evaluation.pending", "gauge", "{trace}", "Traces waiting for their quiet period."),
]

INSTRUMENTS: dict[str, Instrument] = {i.name: i for i in _INGEST + _EVALUATION}
"""Every metric the backend reports, by OpenTelemetry name."""
PROMETHEUS: dict[str, str] = {name: i.prometheus for name, i in INSTRUMENTS.items()}
"""Each metric's name on ``/metrics``."""


@dataclass(frozen=True)
class ScenarioFigures:
    """What the metrics record of one evaluated scenario (online evaluation makes them from its evaluation).

    Attributes:
        scenario: The scenario's label.
        score: The overall score.
        passed: Whether it passed.
        answer_quality: How good the answer was (``None``: not judged).
        coordination_quality: How well the agents worked together (``None``: not judged).
        density: The agent graph's density.
        degree_centralisation: The agent graph's degree centralisation.
        critical_path_s: The critical path's length.
        fired: The evidence that fired.
        hubs: Each hub and the median time it took to answer a request (seconds).
        blamed: For a failed scenario, the agent failure attribution named (``none`` when it
            could name none) and the rule that found it; ``None`` when nothing was attributed.
    """

    scenario: str
    score: float
    passed: bool
    answer_quality: float | None
    coordination_quality: float | None
    density: float | None
    degree_centralisation: float | None
    critical_path_s: float | None
    fired: tuple[str, ...]
    hubs: tuple[tuple[str, float], ...]
    blamed: tuple[str, str] | None = None


class BoundedLabels:
    """Label values from traces, at most ``limit`` distinct ones per label; later ones become ``other``.

    Values are also cut to ``max_chars`` characters. A team that names itself anew on every
    trace cannot grow the metrics without bound.
    """

    def __init__(self, limit: int = 100, max_chars: int = 80) -> None:
        """Create the bound."""
        self.limit = limit
        self.max_chars = max_chars
        self._seen: dict[str, set[str]] = {}

    def __call__(self, label: str, value: str) -> str:
        """``value`` if it is among the first ``limit`` of ``label``'s values, else ``other``."""
        value = value[: self.max_chars] or "unknown"
        seen = self._seen.setdefault(label, set())
        if value in seen:
            return value
        if len(seen) >= self.limit:
            return OTHER
        seen.add(value)
        return value


def _otlp_reader() -> Any | None:
    """A periodic OTLP metrics reader when ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` is set."""
    if otlp_endpoint("metrics", own_only=True) is None:
        return None
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    return PeriodicExportingMetricReader(otlp_exporter("metrics"))


class BackendMeters:
    """The backend's meter provider and instruments.

    Args:
        store: The trace store whose counters are observed at each collection.
        inflight: The exports being decoded (observed too).
        service_name: ``service.name`` of the metrics' resource.
        labels: The bound on trace-derived label values.
    """

    def __init__(
        self,
        store: SpanStore,
        inflight: Inflight | None = None,
        *,
        service_name: str = "coordbench-receiver",
        labels: BoundedLabels | None = None,
    ) -> None:
        """Create the provider, its readers and every instrument."""
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View
        from opentelemetry.sdk.resources import Resource
        from prometheus_client import CollectorRegistry

        self.store = store
        self.inflight = inflight
        self.labels = labels or BoundedLabels()
        self.registry = CollectorRegistry(auto_describe=False)
        readers: list[Any] = [PrometheusMetricReader(registry=self.registry, scope_info_enabled=False)]
        otlp = _otlp_reader()
        if otlp is not None:
            readers.append(otlp)
        views = [
            View(instrument_name=i.name, aggregation=ExplicitBucketHistogramAggregation(i.buckets))
            for i in INSTRUMENTS.values()
            if i.kind == "histogram"
        ]
        self.provider = MeterProvider(
            metric_readers=readers, resource=Resource.create({"service.name": service_name}), views=views
        )
        meter = self.provider.get_meter("coordbench")
        self.queue_size: Callable[[], tuple[int, int, int]] = lambda: (0, 0, 0)
        """Reports (queued, capacity, pending) for the gauges; the online evaluator sets it."""
        for instrument in _INGEST:
            self._observe(meter, instrument)
        for name in (
            "coordbench.evaluation.queue.size",
            "coordbench.evaluation.queue.capacity",
            "coordbench.evaluation.pending",
        ):
            self._observe(meter, INSTRUMENTS[name])
        self._histograms: dict[str, Any] = {}
        self._counters: dict[str, Any] = {}
        for instrument in _EVALUATION:
            if instrument.kind == "histogram":
                self._histograms[instrument.name] = meter.create_histogram(
                    instrument.name, unit=instrument.unit, description=instrument.description
                )
            elif instrument.kind == "counter":
                self._counters[instrument.name] = meter.create_counter(
                    instrument.name, unit=instrument.unit, description=instrument.description
                )

    # --- observed at collection -----------------------------------------------------------

    def _observe(self, meter: Any, instrument: Instrument) -> None:
        def callback(_options: CallbackOptions) -> Iterable[Observation]:
            return self._observations(instrument.name)

        create = meter.create_observable_counter if instrument.kind == "counter" else meter.create_observable_gauge
        create(instrument.name, callbacks=[callback], unit=instrument.unit, description=instrument.description)

    def _observations(self, name: str) -> list[Observation]:
        from opentelemetry.metrics import Observation

        store = self.store
        if name == "coordbench.spans.rejected_by_reason":
            # every reason known up front is a series from the start: one first seen at 1 hides that increase
            reasons = dict.fromkeys(KNOWN_REJECTIONS, 0) | store.stats.rejected_reasons
            return [Observation(count, {"reason": reason}) for reason, count in sorted(reasons.items())]
        readers: dict[str, Callable[[], int]] = {
            "coordbench.spans.received": lambda: store.stats.received,
            "coordbench.spans.stored": lambda: store.stats.stored,
            "coordbench.spans.duplicates": lambda: store.stats.duplicates,
            "coordbench.spans.rejected": lambda: store.stats.rejected,
            "coordbench.spans.evicted": lambda: store.stats.evicted,
            "coordbench.store.spans": lambda: store.stats.spans,
            "coordbench.store.traces": lambda: store.stats.traces,
            "coordbench.store.bytes": lambda: store.stats.bytes,
            "coordbench.store.max_spans": lambda: store.max_spans,
            "coordbench.store.max_traces": lambda: store.max_traces,
            "coordbench.store.max_bytes": lambda: store.max_bytes,
            "coordbench.exports.inflight": lambda: 0 if self.inflight is None else self.inflight.current,
            "coordbench.evaluation.queue.size": lambda: self.queue_size()[0],
            "coordbench.evaluation.queue.capacity": lambda: self.queue_size()[1],
            "coordbench.evaluation.pending": lambda: self.queue_size()[2],
        }
        return [Observation(readers[name]())]

    # --- recorded by the online evaluator ---------------------------------------------------

    def add(self, name: str, labels: Mapping[str, str] | None = None, amount: int = 1) -> None:
        """Add ``amount`` to the counter ``name`` (one of :data:`INSTRUMENTS`) with ``labels``."""
        self._counters[name].add(amount, dict(labels or {}))

    def evaluated(
        self, team: str, figures: Iterable[ScenarioFigures], *, revision: int, since_last_span: float, run: float
    ) -> None:
        """Record one trace's evaluation: every scenario's figures, and how long it took."""
        team = self.labels("team", team)
        self.add("coordbench.traces.evaluated", {"team": team, "revision": str(revision)})
        self._histograms["coordbench.evaluation.duration"].record(since_last_span, {"team": team})
        self._histograms["coordbench.evaluation.run.duration"].record(run, {"team": team})
        for figure in figures:
            labels = {"team": team, "scenario": self.labels("scenario", figure.scenario)}
            self.add("coordbench.evaluations", {**labels, "passed": str(figure.passed).lower()})
            for name, value in (
                ("coordbench.evaluation.score", figure.score),
                ("coordbench.evaluation.answer_quality", figure.answer_quality),
                ("coordbench.evaluation.coordination_quality", figure.coordination_quality),
                ("coordbench.graph.density", figure.density),
                ("coordbench.graph.degree_centralisation", figure.degree_centralisation),
                ("coordbench.trace.critical_path", figure.critical_path_s),
            ):
                if value is not None:
                    self._histograms[name].record(value, labels)
            for evidence in figure.fired or (NO_EVIDENCE,):  # a clean scenario is counted too: a series from the start
                self.add("coordbench.evidence", {**labels, "evidence": self.labels("evidence", evidence)})
            if figure.blamed is not None:
                agent, rule = figure.blamed
                self.add("coordbench.attributions",
                         {**labels, "agent": self.labels("agent", agent), "rule": rule})  # fmt: skip
            for hub, seconds in figure.hubs:
                self._histograms["coordbench.hub.request.duration"].record(
                    seconds, {**labels, "hub": self.labels("hub", hub)}
                )

    # --- exposition -------------------------------------------------------------------------

    def exposition(self, accept: str | None) -> tuple[bytes, str]:
        """The current values in the format ``accept`` asks for (Prometheus text, or OpenMetrics), and its type."""
        from prometheus_client.exposition import choose_encoder

        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type

    def shutdown(self) -> None:
        """Flush the OTLP exporter, if any, and stop the readers."""
        self.provider.shutdown()


def meters_of(app: Starlette) -> BackendMeters | None:
    """The backend's meters on ``app`` (``None``: it has none)."""
    meters: object = getattr(app.state, "meters", None)
    return meters if isinstance(meters, BackendMeters) else None


router = APIRouter()


@router.get("/metrics", summary="The backend's metrics for a Prometheus scrape", response_class=Response)
async def metrics(request: Request) -> Response:
    """Ingest counters, store gauges and online evaluations, as Prometheus text (OpenMetrics when asked)."""
    meters = meters_of(request.app)
    if meters is None:
        raise HTTPException(404, "this app has no metrics")
    body, content_type = meters.exposition(request.headers.get("accept"))
    return Response(body, media_type=content_type)
