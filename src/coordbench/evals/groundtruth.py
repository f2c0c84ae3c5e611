"""Labelled interaction patterns: turn them into spans, evaluate, and check label and metrics.

A ground-truth file (``data/ground_truth.json``) holds scenarios, each with an
``interaction_pattern`` (agents, and edges ``{"from", "to", "count", "latency_ms"}``), the
``label`` the pattern *is* (``high_coordination``, ``medium_coordination``,
``low_coordination``, ``bottleneck``, ``partial_isolation``) and ``expected_metrics`` worked
out independently of this code. The check replays a pattern as the spans real agents would
emit (a CLIENT span in the caller and a SERVER span in the callee per message; an isolated
agent does a TOOL step on its own), evaluates them through the graph tier, and compares.

``expected_metrics`` keys (all optional):

============================  ===============================================================
``agents``                    agents in the graph
``edges``                     caller → callee pairs
``interactions``              messages
``density``                   directed density over all agents (``metrics.density``)
``max_flow_betweenness``      highest flow betweenness among interacting agents
``bottleneck_agents``         agents above the bottleneck threshold
``busiest_agent``             agent with the largest share of messages (ties: by name)
``busiest_share``             its share
``isolated_agents``           agents with no interaction
``groups``                    weakly connected groups of interacting agents
``reciprocity``               ``metrics.reciprocity``
``degree_centralisation``     ``metrics.degree_centralisation``
``workload_gini``             ``metrics.workload.gini``
``average_path_length``       ``metrics.path_lengths.average``
``diameter``                  ``metrics.path_lengths.diameter``
``reachability``              ``metrics.path_lengths.reachability``
============================  ===============================================================
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coordbench import jsontext, semconv
from coordbench.errors import CoordbenchError, describe_validation_error
from coordbench.graph.metrics import GraphMetrics, Label, Thresholds
from coordbench.spans import SpanData, SpanKind

__all__ = [
    "EXPECTATIONS",
    "GroundTruth",
    "GroundTruthError",
    "InteractionEdge",
    "InteractionPattern",
    "Scenario",
    "ScenarioCheck",
    "check_scenario",
    "evaluate_scenario",
    "load_ground_truth",
    "pattern_spans",
]

HOST_SERVICE = "groundtruth-host"


class GroundTruthError(CoordbenchError, ValueError):
    """A ground-truth file cannot be read or does not have the expected shape."""

    default_message = "invalid ground-truth file"


class InteractionEdge(BaseModel):
    """Messages from one agent to another."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    count: int = Field(default=1, ge=1, le=100_000)
    latency_ms: float = Field(default=100.0, gt=0, le=3_600_000)


class InteractionPattern(BaseModel):
    """Who exchanges messages with whom, and how often."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: list[str] = Field(min_length=1)
    edges: list[InteractionEdge] = Field(default_factory=list[InteractionEdge])

    @model_validator(mode="after")
    def _consistent(self) -> InteractionPattern:
        if len(set(self.agents)) != len(self.agents):
            raise ValueError("agents must be unique")
        known = set(self.agents)
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in known:
                    raise ValueError(f"edge {edge.source} -> {edge.target}: {end!r} is not in agents")
            if edge.source == edge.target:
                raise ValueError(f"edge {edge.source} -> {edge.target}: an agent does not message itself")
        pairs = [(e.source, e.target) for e in self.edges]
        if len(set(pairs)) != len(pairs):
            raise ValueError("each (from, to) pair appears once; use count for repeated messages")
        return self


class Scenario(BaseModel):
    """One labelled pattern."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    description: str = ""
    label: Label
    interaction_pattern: InteractionPattern
    expected_metrics: dict[str, Any] = Field(default_factory=dict[str, Any])

    @model_validator(mode="after")
    def _known_expectations(self) -> Scenario:
        unknown = sorted(set(self.expected_metrics) - set(EXPECTATIONS))
        if unknown:
            raise ValueError(f"unknown expected_metrics key(s): {', '.join(unknown)}")
        return self


class GroundTruth(BaseModel):
    """A ground-truth file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    description: str = ""
    scenarios: list[Scenario] = Field(min_length=1)


def load_ground_truth(path: str | Path) -> GroundTruth:
    """Read and validate a ground-truth file.

    Raises:
        GroundTruthError: If the file is missing, not JSON, or not shaped as documented; the
            message says where.
    """
    file = Path(path)
    raw = jsontext.load_file(file, GroundTruthError)
    try:
        truth = GroundTruth.model_validate(raw)
    except ValidationError as exc:
        raise GroundTruthError(f"{file}: {describe_validation_error(exc, whole='(top level)')}") from exc
    ids = [s.id for s in truth.scenarios]
    if len(set(ids)) != len(ids):
        raise GroundTruthError(f"{file}: scenario ids must be unique")
    return truth


def _hex(seed: str, width: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:width]


def pattern_spans(
    pattern: InteractionPattern, *, scenario_id: str, start_unix_nano: int = 1_700_000_000 * 10**9
) -> list[SpanData]:
    """The spans agents would emit if they interacted as ``pattern`` says (deterministic).

    One trace: a root HOST step of the ground-truth host; per message a CLIENT span in the
    caller (``invoke_agent <callee>``) and, inside it, the callee's SERVER span; an agent
    with no edge does a TOOL step alone. Messages run one after another, each taking its
    edge's ``latency_ms``. Each agent is its own resource (``service.name``).
    """
    trace_id = _hex(f"trace:{scenario_id}", 32)
    root_id = _hex(f"root:{scenario_id}", 16)
    spans: list[SpanData] = []
    clock = start_unix_nano + 1_000_000
    active = {e.source for e in pattern.edges} | {e.target for e in pattern.edges}
    for index, edge in enumerate(pattern.edges):
        duration = round(edge.latency_ms * 1_000_000)
        for k in range(edge.count):
            client_id = _hex(f"client:{scenario_id}:{index}:{k}", 16)
            digest = _hex(f"message:{scenario_id}:{index}:{k}", 16)
            common = {
                semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
                semconv.GEN_AI_AGENT_NAME: edge.target,
                semconv.A2A_METHOD: "SendMessage",
                semconv.A2A_PROTOCOL_VERSION: "1.0",
                semconv.A2A_MESSAGE_DIGEST: digest,
                semconv.A2A_TASK_STATE: "completed",
            }
            spans.append(
                SpanData(
                    trace_id=trace_id,
                    span_id=client_id,
                    parent_span_id=root_id,
                    name=f"invoke_agent {edge.target}",
                    kind=SpanKind.CLIENT,
                    start_time_unix_nano=clock,
                    end_time_unix_nano=clock + duration,
                    attributes={**common, semconv.A2A_CALLER_NAME: edge.source},
                    resource={semconv.SERVICE_NAME: edge.source},
                    scope_name="coordbench.evals.groundtruth",
                )
            )
            spans.append(
                SpanData(
                    trace_id=trace_id,
                    span_id=_hex(f"server:{scenario_id}:{index}:{k}", 16),
                    parent_span_id=client_id,
                    name=f"invoke_agent {edge.target}",
                    kind=SpanKind.SERVER,
                    start_time_unix_nano=clock + duration // 10,
                    end_time_unix_nano=clock + duration - duration // 10,
                    attributes=common,
                    resource={semconv.SERVICE_NAME: edge.target},
                    scope_name="coordbench.evals.groundtruth",
                )
            )
            clock += duration + 1_000_000
    for agent in pattern.agents:
        if agent in active:
            continue
        spans.append(
            SpanData(
                trace_id=trace_id,
                span_id=_hex(f"alone:{scenario_id}:{agent}", 16),
                parent_span_id=root_id,
                name="execute_tool work_alone",
                kind=SpanKind.INTERNAL,
                start_time_unix_nano=clock,
                end_time_unix_nano=clock + 5_000_000,
                attributes={
                    semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_EXECUTE_TOOL,
                    semconv.GEN_AI_TOOL_NAME: "work_alone",
                },
                resource={semconv.SERVICE_NAME: agent},
                scope_name="coordbench.evals.groundtruth",
            )
        )
        clock += 6_000_000
    spans.append(
        SpanData(
            trace_id=trace_id,
            span_id=root_id,
            parent_span_id=None,
            name=f"invoke_workflow {scenario_id}",
            kind=SpanKind.INTERNAL,
            start_time_unix_nano=start_unix_nano,
            end_time_unix_nano=clock + 1_000_000,
            attributes={
                semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_WORKFLOW,
                semconv.GEN_AI_WORKFLOW_NAME: scenario_id,
                semconv.A2A_CALL_TYPE: "HOST",
            },
            resource={semconv.SERVICE_NAME: HOST_SERVICE},
            scope_name="coordbench.evals.groundtruth",
        )
    )
    return spans


def _metric(result: GraphMetrics, *path: str) -> Any:
    value: Any = result.metrics
    for key in path:
        value = cast("dict[str, Any]", value).get(key) if isinstance(value, dict) else None
    return value


EXPECTATIONS: dict[str, Callable[[GraphMetrics], Any]] = {
    "agents": lambda r: len([a for a in r.agents if a.role != "host"]),
    "edges": lambda r: len([e for e in r.edges if e.caller not in r.hosts]),
    "interactions": lambda r: r.interactions,
    "density": lambda r: _metric(r, "density"),
    "max_flow_betweenness": lambda r: r.detections.max_flow_betweenness,
    "bottleneck_agents": lambda r: r.detections.bottleneck_agents,
    "busiest_agent": lambda r: r.detections.busiest_agent,
    "busiest_share": lambda r: r.detections.busiest_share,
    "isolated_agents": lambda r: r.detections.isolated_agents,
    "groups": lambda r: r.detections.groups,
    "reciprocity": lambda r: _metric(r, "reciprocity"),
    "degree_centralisation": lambda r: _metric(r, "degree_centralisation"),
    "workload_gini": lambda r: _metric(r, "workload", "gini"),
    "average_path_length": lambda r: _metric(r, "path_lengths", "average"),
    "diameter": lambda r: _metric(r, "path_lengths", "diameter"),
    "reachability": lambda r: _metric(r, "path_lengths", "reachability"),
}


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-9)
    return expected == actual


class ScenarioCheck(BaseModel):
    """How one scenario fared."""

    model_config = ConfigDict(frozen=True)

    scenario: str
    expected_label: Label
    predicted_label: Label
    mismatches: dict[str, tuple[Any, Any]]
    """``metric → (expected, actual)`` for every expected metric that differs."""

    @property
    def label_ok(self) -> bool:
        """The predicted label is the expected one."""
        return self.expected_label == self.predicted_label

    @property
    def ok(self) -> bool:
        """Label and every expected metric match."""
        return self.label_ok and not self.mismatches


def check_scenario(scenario: Scenario, result: GraphMetrics) -> ScenarioCheck:
    """Compare an evaluation with the scenario's label and expected metrics."""
    mismatches: dict[str, tuple[Any, Any]] = {}
    for key, expected in sorted(scenario.expected_metrics.items()):
        actual = EXPECTATIONS[key](result)
        if not _same(expected, actual):
            mismatches[key] = (expected, actual)
    return ScenarioCheck(
        scenario=scenario.id, expected_label=scenario.label, predicted_label=result.label, mismatches=mismatches
    )


def evaluate_scenario(
    scenario: Scenario, *, thresholds: Thresholds | None = None, spans: Iterable[SpanData] | None = None
) -> tuple[GraphMetrics, ScenarioCheck]:
    """Evaluate a scenario's spans (by default its pattern's) and check them."""
    from coordbench.graph import evaluate_graph

    used = list(spans) if spans is not None else pattern_spans(scenario.interaction_pattern, scenario_id=scenario.id)
    result = evaluate_graph(used, thresholds=thresholds, declared_agents=scenario.interaction_pattern.agents)
    return result, check_scenario(scenario, result)
