"""One online evaluation, as the worker process runs it: stored spans in, the evaluation and its figures out.

The receiver sends a trace's spans as stored (:class:`SpanRow`, plain bytes and the codec's
name: no decoding on the loop that takes exports) and gets back a :class:`JobResult`. The
evaluation itself is :func:`coordbench.evals.replay.replay`, the very replay ``coordbench
evaluate`` runs, so the same spans give the same evaluation online and offline; its figures and
events are read from the typed evaluation, and its JSON line is only what is stored.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from coordbench import semconv
from coordbench.evals.evaluation import ScenarioEvaluation
from coordbench.meters import ScenarioFigures
from coordbench.spans import AttributeValue, SpanData
from coordbench.spantree import SpanTree, is_agent_call
from coordbench.store.encoded import EncodedSpan, Envelope

if TYPE_CHECKING:
    from coordbench.evals.replay import Replays

__all__ = [
    "EvaluationEvent",
    "JobRequest",
    "JobResult",
    "SpanRow",
    "may_hold_agent_calls",
    "quality_label",
    "rows_of",
    "run_job",
    "scenario_label",
    "team_of",
]

DEFAULT_TEAM_ATTRIBUTE = "service.namespace"
_EXPLANATION_CHARS = 1_000


class SpanRow(NamedTuple):
    """A stored span made picklable: ids, the codec's name and payload bytes, its resource and scope."""

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    codec: str
    payload: bytes
    resource: Mapping[str, AttributeValue]
    scope_name: str


def rows_of(spans: Sequence[EncodedSpan]) -> list[SpanRow]:
    """The spans as :class:`SpanRow` (protobuf spans are slices of the export: cheap).

    Spans that shared a resource share one dict, which pickling then sends once.
    """
    rows: list[SpanRow] = []
    resources: dict[int, dict[str, AttributeValue]] = {}
    for span in spans:
        codec, payload = span.dump()
        envelope = span.envelope
        resource = resources.get(id(envelope.resource))
        if resource is None:
            resource = resources[id(envelope.resource)] = dict(envelope.resource)
        rows.append(
            SpanRow(span.trace_id, span.span_id, span.parent_span_id, codec, payload, resource, envelope.scope_name)
        )
    return rows


_AGENT_CALL_MARK = semconv.OPERATION_INVOKE_AGENT.encode()


def may_hold_agent_calls(rows: Sequence[SpanRow]) -> bool:
    r"""Whether any span's bytes hold ``invoke_agent``: without it no span can be an A2A call.

    A cheap test on the encoded bytes, so a trace without A2A calls never reaches a worker
    process. In OTLP protobuf an attribute's value is its plain UTF-8; so it is in a span's
    OTLP/JSON text, unless the text escapes a character (``\u0069nvoke_agent`` spells it too):
    a JSON span with any escape counts as a maybe.
    """
    return any(_AGENT_CALL_MARK in row.payload or (row.codec == _JSON_TEXT and b"\\" in row.payload) for row in rows)


_JSON_TEXT = "otlp/json-text"
"""The codec name of spans kept as their OTLP/JSON text (:data:`coordbench.otlp.OTLP_JSON_TEXT`)."""


def _decode(rows: Sequence[SpanRow]) -> list[SpanData]:
    from coordbench.otlp import CODECS

    spans: list[SpanData] = []
    envelopes: dict[tuple[int, str], Envelope] = {}
    for row in rows:
        codec = CODECS[row.codec]
        key = (id(row.resource), row.scope_name)
        envelope = envelopes.get(key)
        if envelope is None:
            envelope = envelopes[key] = Envelope(row.resource, row.scope_name)
        spans.append(EncodedSpan(row.trace_id, row.span_id, row.parent_span_id, codec, row.payload, envelope).decode())
    spans.sort(key=lambda s: (s.start_time_unix_nano, s.span_id))
    return spans


NOBODY = "none"
"""The agent (and rule) label of a failed scenario for which attribution could name no agent."""


@dataclass(frozen=True)
class JobRequest:
    """What the worker is asked.

    Attributes:
        trace_id: The trace (32 hex digits).
        rows: Its spans as stored (sent to the worker apart from the rest, in chunks).
        idle_seconds: Seconds since it last grew.
        settle: An incomplete trace is evaluated as it is once it has been idle this long.
        judge: Use the configured LLM judge (else the rule-based judge answers).
        team_attribute: The root resource's attribute naming the team.
    """

    trace_id: str
    rows: list[SpanRow]
    idle_seconds: float
    settle: float
    judge: bool = False
    team_attribute: str = DEFAULT_TEAM_ATTRIBUTE


@dataclass(frozen=True)
class EvaluationEvent:
    """One ``gen_ai.evaluation.result`` event (GenAI semantic conventions)."""

    name: str
    score: float
    label: str
    explanation: str
    scenario: str


@dataclass(frozen=True)
class JobResult:
    """What the worker answers.

    Attributes:
        outcome: ``evaluated``; ``incomplete`` (wait for more spans); ``no_agent_calls``
            (nothing to judge: no A2A call in it).
        span_count: Spans it was given.
        team: The trace's team (:func:`team_of`).
        complete: The trace was complete (an incomplete one is evaluated once it settles).
        line: The evaluation as stored: canonical JSON (``coordbench evaluate``'s line).
        figures: Per scenario, what the metrics record.
        events: The ``gen_ai.evaluation.result`` events to emit.
        root_span_id: The span the events are attached to (the trace's root).
        seconds: Wall time the evaluation took in the worker.
    """

    outcome: Literal["evaluated", "incomplete", "no_agent_calls"]
    span_count: int
    team: str = ""
    complete: bool = False
    line: str = ""
    figures: list[ScenarioFigures] = field(default_factory=list[ScenarioFigures])
    events: list[EvaluationEvent] = field(default_factory=list[EvaluationEvent])
    root_span_id: str | None = None
    seconds: float = 0.0


def _root(spans: Sequence[SpanData]) -> SpanData | None:
    """The trace's root span (no parent), else its earliest span whose parent never arrived."""
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_span_id is None]
    if roots:
        return roots[0]
    loose = [s for s in spans if s.parent_span_id not in ids]
    return loose[0] if loose else (spans[0] if spans else None)


def team_of(spans: Sequence[SpanData], attribute: str = DEFAULT_TEAM_ATTRIBUTE) -> str:
    """The team a trace belongs to: the team an assessment named, else ``attribute`` of its root's resource.

    An assessor's trace is rooted in the assessor's own span, whose resource is the assessor's:
    the team it assessed is the ``team`` of the config it recorded there, when the request named
    one. Otherwise ``attribute`` of the root span's resource (``service.namespace`` by default,
    OpenTelemetry's name for a group of services run together), else the root's service name;
    ``unknown`` when the root says none of these.
    """
    root = _root(spans)
    if root is None:
        return "unknown"
    assessed = _assessed_team(root)
    if assessed is not None:
        return assessed
    value = root.resource.get(attribute)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return root.service_name or "unknown"


_TEAM_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A team name an assessment request may give (``AssessmentConfig.team``); a trace claiming another is not read."""


def _assessed_team(root: SpanData) -> str | None:
    """The ``team`` of the assessment config recorded on ``root``, if it is an assessor's root that names one."""
    recorded = root.attribute_str(semconv.COORDBENCH_ASSESSMENT_CONFIG)
    if not recorded or '"team"' not in recorded:
        return None
    try:
        config: object = json.loads(recorded)
    except ValueError:
        return None
    team: object = cast("dict[str, object]", config).get("team") if isinstance(config, dict) else None
    return team if isinstance(team, str) and _TEAM_NAME.fullmatch(team) else None  # as a request may name it


def scenario_label(spans: Sequence[SpanData], evaluated: str) -> str:
    """The scenario a metric is labelled with.

    An assessment's scenario id (``evaluated`` when it is not the trace id); else the root
    span's ``gen_ai.workflow.name``; else the root span's name.
    """
    root = _root(spans)
    if root is not None and evaluated == root.trace_id:
        workflow = root.attribute_str(semconv.GEN_AI_WORKFLOW_NAME)
        return (workflow or root.name or "trace").strip() or "trace"
    return evaluated.split("#", 1)[0]


def _number(value: float | None) -> float | None:
    """``value`` as the stored line states it (12 significant digits), ``None`` for no number."""
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.12g}")


def _started(tree: SpanTree) -> dict[str, float]:
    """Each agent that began the trace (its root span's owner) and the median of those spans' durations (ms).

    An agent at the top of a trace answers no A2A request (in production nothing calls the
    coordinator over A2A: the trace starts in it), so the time it took to handle one is its root
    span's: what a hub's request duration is made of when no request reached it.
    """
    durations: dict[str, list[float]] = {}
    for root in tree.roots:
        agent = tree.agent_of(root)
        if agent is not None:
            durations.setdefault(agent, []).append(root.duration_ms)
    return {agent: statistics.median(values) for agent, values in durations.items()}


def _hubs(evaluation: ScenarioEvaluation) -> list[str]:
    """The hubs the dashboards time: the coordination evaluator's, and an entry agent that delegated to two or more.

    A trace with no assessor in it starts in the team's own entry agent, which the evaluation
    reads as the host (the user's side, outside the team's judgement); it is still the hub its
    workers wait on, so its time is recorded (this is a figure, never a score).
    """
    coordination, graph = evaluation.results.coordination, evaluation.results.graph
    hubs: set[str] = set(coordination.hubs) if coordination is not None else set()
    if graph is not None:
        callees: dict[str, set[str]] = {}
        for edge in graph.edges:
            if edge.caller in graph.hosts and edge.callee != edge.caller:
                callees.setdefault(edge.caller, set()).add(edge.callee)
        hubs |= {host for host, called in callees.items() if len(called) >= 2}
    return sorted(hubs)


def _figures(evaluation: ScenarioEvaluation, label: str, started: Mapping[str, float]) -> ScenarioFigures:
    results = evaluation.results
    coordination, graph, latency = results.coordination, results.graph, results.latency
    hubs: list[tuple[str, float]] = []
    for hub in _hubs(evaluation):
        handled = latency.agents[hub].handled if latency is not None and hub in latency.agents else None
        p50 = _number(handled.p50_ms) if handled is not None else None
        if p50 is None:
            p50 = _number(started.get(hub))
        if p50 is not None:
            hubs.append((hub, p50 / 1000))
    metrics = graph.metrics if graph is not None else {}
    blamed = evaluation.attribution
    critical = _number(latency.critical_path_ms) if latency is not None else None
    return ScenarioFigures(
        scenario=label,
        score=_number(evaluation.score.overall) or 0.0,
        passed=evaluation.passed,
        answer_quality=_number(coordination.answer_quality) if coordination is not None else None,
        coordination_quality=_number(coordination.coordination_quality) if coordination is not None else None,
        density=_metric(metrics.get("density")),
        degree_centralisation=_metric(metrics.get("degree_centralisation")),
        critical_path_s=None if critical is None else critical / 1000,
        fired=tuple(coordination.fired) if coordination is not None else (),
        hubs=tuple(hubs),
        blamed=None if blamed is None else (blamed.agent or NOBODY, blamed.rule or NOBODY),
    )


def _metric(value: object) -> float | None:
    """A graph metric as a number (a plugin metric may be anything)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return _number(float(value))


def _cut(text: str) -> str:
    return text if len(text) <= _EXPLANATION_CHARS else text[: _EXPLANATION_CHARS - 3] + "..."


def quality_label(value: float) -> str:
    """``good`` (>= 0.75), ``fair`` (>= 0.5) or ``poor``: the label of a quality on an event."""
    return "good" if value >= 0.75 else "fair" if value >= 0.5 else "poor"


def _events(evaluation: ScenarioEvaluation, label: str) -> list[EvaluationEvent]:
    coordination = evaluation.results.coordination
    weaknesses = "; ".join(coordination.weaknesses) if coordination is not None else ""
    strengths = "; ".join(coordination.strengths) if coordination is not None else ""
    why = _cut(weaknesses or strengths or "nothing to fault")
    events: list[EvaluationEvent] = []
    overall = _number(evaluation.score.overall)
    if overall is not None:
        events.append(EvaluationEvent("coordbench.score", overall, "pass" if evaluation.passed else "fail", why, label))
    if coordination is not None:
        for value, name in (
            (coordination.coordination_quality, "coordbench.coordination"),
            (coordination.answer_quality, "coordbench.answer"),
        ):
            stated = _number(value)
            if stated is not None:
                events.append(EvaluationEvent(name, stated, quality_label(stated), why, label))
    blamed = evaluation.attribution
    if blamed is not None:  # a failed scenario: who, with how much confidence, and why
        confidence = _number(blamed.confidence) or 0.0
        events.append(EvaluationEvent("coordbench.attribution", confidence, blamed.agent or NOBODY,
                                      _cut(blamed.reason), label))  # fmt: skip
    return events


def run_job(request: JobRequest, replays: Replays | None = None) -> JobResult:
    """Decode, check completeness, and evaluate one trace (in the worker process).

    Args:
        request: The job.
        replays: The worker's event loop for evaluations (default: one for this job alone).
    """
    from coordbench.evals.config import JudgeConfig
    from coordbench.evals.replay import replay_sync

    started = time.perf_counter()
    spans = _decode(request.rows)
    tree = SpanTree(spans)
    team = team_of(spans, request.team_attribute)
    root = _root(spans)
    if not any(is_agent_call(s) for s in spans):
        return JobResult("no_agent_calls", len(spans), team=team)
    complete = tree.completeness(request.trace_id, request.idle_seconds).complete
    if not complete and request.idle_seconds < request.settle:
        return JobResult("incomplete", len(spans), team=team)
    judge = JudgeConfig.from_env()
    if not request.judge:
        judge = judge.model_copy(update={"api_key": None})
    if replays is not None:
        evaluation = replays.run(request.trace_id, spans, judge=judge)
    else:
        evaluation = replay_sync(request.trace_id, spans, judge=judge)
    figures: list[ScenarioFigures] = []
    events: list[EvaluationEvent] = []
    entered = _started(tree)
    for scenario in evaluation.evaluations:
        label = scenario_label(spans, scenario.scenario)
        figures.append(_figures(scenario, label, entered))
        events += _events(scenario, label)
    return JobResult(
        "evaluated",
        len(spans),
        team=team,
        complete=complete,
        line=evaluation.to_json(),
        figures=figures,
        events=events,
        root_span_id=None if root is None else root.span_id,
        seconds=time.perf_counter() - started,
    )
