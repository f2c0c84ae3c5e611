"""What the live UI's pages show, read from online evaluations: plain data, no markup.

Every figure comes from the evaluation ``coordbench evaluate`` writes for the trace (the
record's line, read back as :class:`~coordbench.evals.evaluation.TraceEvaluation`), so a page
says what ``/v1/evaluations``, ``evaluate`` and ``compare`` say. The pages
(:mod:`coordbench.server.ui.routes`) hand these values to the report's templates, which escape them.
"""

from __future__ import annotations

import statistics
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from coordbench.evals.evaluation import TraceEvaluation
from coordbench.graph.metrics.result import AgentSummary, EdgeSummary
from coordbench.online.records import EvaluationRecord

__all__ = [
    "AgentAcross",
    "EdgeAcross",
    "FailureGroup",
    "RunRow",
    "TeamPoint",
    "TeamView",
    "evaluation_of",
    "failure_groups",
    "run_rows",
    "team_view",
    "when",
]

_PARSED: OrderedDict[tuple[str, int], TraceEvaluation] = OrderedDict()
_PARSED_MOST = 512
_LOCK = threading.Lock()


def evaluation_of(record: EvaluationRecord) -> TraceEvaluation:
    """The record's evaluation as models (read once per record and revision; the last 512 are kept)."""
    key = (record.trace_id, record.evaluated_unix_nano)
    with _LOCK:
        found = _PARSED.get(key)
        if found is not None:
            _PARSED.move_to_end(key)
            return found
    evaluation = TraceEvaluation.from_json(record.line)
    with _LOCK:
        _PARSED[key] = evaluation
        while len(_PARSED) > _PARSED_MOST:
            _PARSED.popitem(last=False)
    return evaluation


def when(unix_nano: int) -> str:
    """A moment as the pages show it: UTC, to the second (``2026-11-28 17:05:09Z``)."""
    return datetime.fromtimestamp(unix_nano / 1e9, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


@dataclass(frozen=True)
class RunRow:
    """One scenario of one evaluated run, as the runs page lists it.

    Attributes:
        trace_id: The run's trace.
        team: Its team.
        evaluated: When it was evaluated (:func:`when`).
        scenario: The scenario (a plain trace has one, named after the trace).
        score: Its overall score.
        answer_quality: The coordination evaluator's answer quality (``None``: not judged).
        coordination_quality: How well the agents worked together.
        passed: Whether it passed.
        complete: Whether the trace was complete when evaluated.
        fired: The evidence that lowered the coordination score.
        blamed: The agent attribution named for a failed run (``none``: it could name none).
        cause: The rule that found the decisive step.
        spans: Spans the trace had.
        first: The run's first scenario (the row that names the run).
        scenarios: How many scenarios the run has (the rows it takes).
    """

    trace_id: str
    team: str
    evaluated: str
    scenario: str
    score: float
    answer_quality: float | None
    coordination_quality: float | None
    passed: bool
    complete: bool
    fired: tuple[str, ...]
    blamed: str | None
    cause: str | None
    spans: int
    first: bool = True
    scenarios: int = 1


def run_rows(records: Sequence[EvaluationRecord]) -> list[RunRow]:
    """One row per scenario of each record, in the records' order (newest first from the log)."""
    return [
        RunRow(
            trace_id=r.trace_id,
            team=r.team,
            evaluated=when(r.evaluated_unix_nano),
            scenario=s.scenario,
            score=s.score,
            answer_quality=s.answer_quality,
            coordination_quality=s.coordination_quality,
            passed=s.passed,
            complete=r.complete,
            fired=s.fired,
            blamed=s.blamed,
            cause=s.cause,
            spans=r.span_count,
            first=i == 0,
            scenarios=len(r.scenarios),
        )
        for r in records
        for i, s in enumerate(r.scenarios)
    ]


@dataclass(frozen=True)
class FailureGroup:
    """Failed runs that attribution blamed on the same agent for the same cause.

    Attributes:
        agent: The agent named (``none``: attribution could name none).
        cause: The rule that found the decisive step (``none``: none did).
        runs: The failed runs, newest first.
    """

    agent: str
    cause: str
    runs: tuple[RunRow, ...]


def failure_groups(records: Sequence[EvaluationRecord]) -> list[FailureGroup]:
    """The failed scenarios grouped by blamed agent and cause, the largest group first.

    A failed scenario evaluated without attribution (a record kept before it was listed) is
    grouped under ``not attributed``.
    """
    groups: dict[tuple[str, str], list[RunRow]] = {}
    for row in run_rows(records):
        if row.passed:
            continue
        key = (row.blamed or "not attributed", row.cause or "not attributed")
        groups.setdefault(key, []).append(row)
    return [
        FailureGroup(agent, cause, tuple(rows))
        for (agent, cause), rows in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


@dataclass
class EdgeAcross:
    """One caller → callee pair over a team's recent runs.

    Attributes:
        caller: The calling agent.
        callee: The agent called.
        runs: Runs in which the pair appears.
        calls: Calls over those runs.
        errors: Calls that failed.
        latencies: Each run's median call latency (:attr:`median_latency_ms` is their median).
        serialised_runs: Runs in which the coordination score found the caller's calls serialised
            (its parallelism part fired naming the caller: it called one after another agents it
            could have called side by side).
    """

    caller: str
    callee: str
    runs: int = 0
    calls: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list[float])
    serialised_runs: int = 0

    @property
    def failure_rate(self) -> float:
        """Failed calls over calls."""
        return self.errors / self.calls if self.calls else 0.0

    @property
    def median_latency_ms(self) -> float | None:
        """The median of the runs' median call latencies (``None``: no run timed one)."""
        return statistics.median(self.latencies) if self.latencies else None

    @property
    def serialised_share(self) -> float:
        """Runs with the pair's calls serialised, over runs with the pair."""
        return self.serialised_runs / self.runs if self.runs else 0.0


@dataclass
class AgentAcross:
    """One agent over a team's recent runs.

    Attributes:
        name: The agent.
        role: Its role in the graph (``agent`` or ``host``), as last seen.
        runs: Runs it took part in.
        requests: Requests it served.
        calls: Calls it made.
        errors: Its failed spans.
        held_up: Runs in which a coordination part that fired named it.
        blamed: Failed runs attribution blamed on it.
    """

    name: str
    role: str = "agent"
    runs: int = 0
    requests: int = 0
    calls: int = 0
    errors: int = 0
    held_up: int = 0
    blamed: int = 0


@dataclass(frozen=True)
class TeamPoint:
    """One run of the team on its score chart.

    Attributes:
        trace_id: The run.
        evaluated_unix_nano: When it was evaluated.
        score: Its score (the mean over its scenarios).
        answer_quality: Its answer quality (mean; ``None``: not judged).
        coordination_quality: Its coordination quality (mean).
        parts: Each coordination part's value (mean over the scenarios that had it).
    """

    trace_id: str
    evaluated_unix_nano: int
    score: float
    answer_quality: float | None
    coordination_quality: float | None
    parts: dict[str, float]


@dataclass(frozen=True)
class TeamView:
    """A team across its recent runs.

    Attributes:
        team: The team.
        runs: Runs read.
        edges: Every caller → callee pair seen, by caller then callee.
        agents: Every agent seen, by name.
        points: The runs, oldest first.
    """

    team: str
    runs: int
    edges: list[EdgeAcross]
    agents: list[AgentAcross]
    points: list[TeamPoint]

    def graph(self) -> tuple[list[AgentSummary], list[EdgeSummary]]:
        """The team's graph over its runs, as the agent-graph picture takes it (counts summed).

        The picture draws counts and failures only; each edge's latency fields all hold its median.
        """
        agents = [
            AgentSummary(
                name=a.name,
                role=a.role,
                requests=a.requests,
                calls=a.calls,
                errors=a.errors,
                tool_calls=0,
                tool_time_ms=0.0,
            )
            for a in self.agents
        ]
        edges = [
            EdgeSummary(
                caller=e.caller,
                callee=e.callee,
                count=e.calls,
                errors=e.errors,
                polls=0,
                latency_mean_ms=e.median_latency_ms or 0.0,
                latency_p50_ms=e.median_latency_ms or 0.0,
                latency_max_ms=e.median_latency_ms or 0.0,
            )
            for e in self.edges
        ]
        return agents, edges


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def team_view(team: str, records: Sequence[EvaluationRecord]) -> TeamView:
    """The team ``team`` across ``records`` (its runs, newest first, as the log lists them)."""
    edges: dict[tuple[str, str], EdgeAcross] = {}
    agents: dict[str, AgentAcross] = {}
    points: list[TeamPoint] = []
    for record in records:
        evaluation = evaluation_of(record)
        seen_edges: set[tuple[str, str]] = set()
        seen_agents: set[str] = set()
        serialised: set[tuple[str, str]] = set()
        held: set[str] = set()
        blamed: set[str] = set()
        scores: list[float] = []
        answers: list[float] = []
        coordination: list[float] = []
        parts: dict[str, list[float]] = {}
        for scenario in evaluation.evaluations:
            scores.append(scenario.score.overall)
            graph, judged = scenario.results.graph, scenario.results.coordination
            if judged is not None:
                if judged.answer_quality is not None:
                    answers.append(judged.answer_quality)
                coordination.append(judged.coordination_quality)
                for name, part in judged.parts.items():
                    if part.value is not None:
                        parts.setdefault(name, []).append(part.value)
                    if part.fired:
                        held.update(part.agents)
                parallelism = judged.parts.get("parallelism")
                named: set[str] = set(parallelism.agents) if parallelism is not None and parallelism.fired else set()
            else:
                named = set[str]()
            if scenario.attribution is not None and scenario.attribution.agent:
                blamed.add(scenario.attribution.agent)
            if graph is None:
                continue
            for agent in graph.agents:
                across = agents.setdefault(agent.name, AgentAcross(agent.name))
                across.role = agent.role
                across.requests += agent.requests
                across.calls += agent.calls
                across.errors += agent.errors
                seen_agents.add(agent.name)
            for edge in graph.edges:
                key = (edge.caller, edge.callee)
                across_edge = edges.setdefault(key, EdgeAcross(edge.caller, edge.callee))
                across_edge.calls += edge.count
                across_edge.errors += edge.errors
                if edge.count and key not in seen_edges:
                    across_edge.latencies.append(edge.latency_p50_ms)
                seen_edges.add(key)
                if edge.caller in named and edge.callee != edge.caller:
                    serialised.add(key)
        for key in seen_edges:
            edges[key].runs += 1
            edges[key].serialised_runs += key in serialised
        for name in seen_agents:
            agents[name].runs += 1
            agents[name].held_up += name in held
            agents[name].blamed += name in blamed
        points.append(
            TeamPoint(
                trace_id=record.trace_id,
                evaluated_unix_nano=record.evaluated_unix_nano,
                score=_mean(scores) or 0.0,
                answer_quality=_mean(answers),
                coordination_quality=_mean(coordination),
                parts={name: sum(values) / len(values) for name, values in sorted(parts.items())},
            )
        )
    points.sort(key=lambda p: (p.evaluated_unix_nano, p.trace_id))
    return TeamView(
        team=team,
        runs=len(records),
        edges=[edges[key] for key in sorted(edges)],
        agents=[agents[name] for name in sorted(agents)],
        points=points,
    )
