"""Assessment reports, and the AgentBeats ``results.json`` built from them.

AgentBeats collects every DataPart of the assessor's final artifact as one element of
``results[]`` and writes ``{"participants": {role: agentbeats_id}, "results": [...]}``; the
leaderboard then runs DuckDB over those files. One assessment (or shard) is one row:

``domain``, ``score`` (overall score x 100), ``max_score`` (100), ``pass_rate`` (percentage of
scenarios whose overall score reached the pass threshold), ``time_used`` (seconds),
``task_rewards`` (``overall_score``; ``answer_quality``: how good the team's answers were;
``coordination_quality``: how well its agents worked together to get them, apart from the
answers; ``graph_density``; all 0-1 numbers, means over the evaluated scenarios) and
``detail`` (graph and latency metrics over all live scenarios, the judge's reasoning,
strengths and weaknesses, every scenario's entry, trace completeness).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from coordbench import __version__
from coordbench.evals import JudgeResult, ScenarioEvaluation, TeamOutcome
from coordbench.evals.assessment_config import AssessmentConfig
from coordbench.evals.evaluation import TraceEvaluation
from coordbench.redaction import redact_strings
from coordbench.results.document import (
    ResultRow,
    ResultsDocument,
    RowDetail,
    ScenarioEntry,
    Spread,
    TaskRewards,
    TraceCompleteness,
)
from coordbench.spans import SpanData

__all__ = [
    "DOMAIN",
    "MAX_SCORE",
    "AssessmentReport",
    "ScenarioReport",
    "agentbeats_results",
    "evaluation_results",
    "result_row",
    "spread_lines",
    "summary_text",
    "trace_results",
    "write_results",
]

DOMAIN = "graph-assessment"
MAX_SCORE = 100
_LIST_LIMIT = 5


class ScenarioReport(BaseModel):
    """How one scenario went.

    Attributes:
        id: Scenario id.
        mode: ``live`` (the team was asked) or ``ground_truth`` (a labelled pattern was replayed).
        status: ``evaluated``; ``error`` when the team could not be reached or broke the
            protocol (still evaluated: the failure is in the trace); ``failed`` when it could
            not be evaluated at all.
        error: What went wrong, if anything.
        entry: Role the task was sent to (live mode).
        trace_id: The trace the scenario's spans are in.
        completeness: The trace's completeness when it was evaluated.
        outcome: What the team answered (live mode).
        evaluation: The evaluators' verdicts.
        expected_label: The scenario's label, when it has one.
        duration_s: Wall time of the scenario.
        repeat: Which run of the scenario this is (``id`` is ``<scenario>#<repeat>``), when the
            config's ``repeats`` ran it more than once.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    mode: Literal["live", "ground_truth"]
    status: Literal["evaluated", "error", "failed"]
    error: str | None = None
    entry: str | None = None
    trace_id: str | None = None
    completeness: dict[str, Any] | None = None
    outcome: TeamOutcome | None = None
    evaluation: ScenarioEvaluation | None = None
    expected_label: str | None = None
    duration_s: float = 0.0
    repeat: int | None = None

    @property
    def scenario(self) -> str:
        """The scenario's id (without the run number)."""
        return self.id.rsplit("#", 1)[0] if self.repeat is not None else self.id

    @property
    def label(self) -> str | None:
        """The coordination label the graph evaluator gave."""
        graph = self.evaluation.results.graph if self.evaluation is not None else None
        return graph.label if graph is not None else None


class AssessmentReport(BaseModel):
    """One assessment (or shard).

    Attributes:
        assessment_id: The A2A context id of the assessment request.
        participants: Participant URLs by role.
        participant_ids: AgentBeats ids by role (``results.json``'s ``participants``).
        scenarios: Every scenario of this shard, in order.
        graph_metrics: Graph metrics over all live scenarios' spans together.
        latency_metrics: Latency figures over all live scenarios' spans together.
        time_used: Seconds the assessment took.
        config: The request's configuration, as used.
        ignored_config_keys: Configuration keys coordbench did not know.
        shard_index: Which shard this is.
        num_shards: How many shards there are.
    """

    model_config = ConfigDict(frozen=True)

    assessment_id: str
    participants: dict[str, str]
    participant_ids: dict[str, str] = Field(default_factory=dict[str, str])
    scenarios: list[ScenarioReport]
    graph_metrics: dict[str, Any] | None = None
    latency_metrics: dict[str, Any] | None = None
    time_used: float
    config: dict[str, Any] = Field(default_factory=dict[str, Any])
    ignored_config_keys: list[str] = Field(default_factory=list[str])
    shard_index: int = 0
    num_shards: int = 1

    @property
    def assessed(self) -> bool:
        """At least one scenario was evaluated, even one where the team failed (a team that fails is a result).

        ``False`` only when the assessor itself could not evaluate a single scenario.
        """
        return any(s.evaluation is not None for s in self.scenarios)


def _judge(report: ScenarioReport) -> JudgeResult | None:
    return report.evaluation.results.llm_judge if report.evaluation is not None else None


def _qualities(report: ScenarioReport) -> tuple[float | None, float | None]:
    """The coordination evaluator's answer quality and coordination quality of a scenario (``None``: not judged)."""
    coordination = report.evaluation.results.coordination if report.evaluation is not None else None
    if coordination is None:
        return None, None
    return coordination.answer_quality, coordination.coordination_quality


def _spread(reports: list[ScenarioReport]) -> dict[str, Spread]:
    """Each repeated scenario's runs: count, mean, sample standard deviation, min and max of the scores."""
    scores: dict[str, list[float]] = {}
    for report in reports:
        if report.repeat is not None:
            scores.setdefault(report.scenario, []).append(report.evaluation.score.overall if report.evaluation else 0.0)
    return {
        scenario: Spread(
            runs=len(values),
            mean=statistics.fmean(values),
            stdev=statistics.stdev(values) if len(values) > 1 else 0.0,
            min=min(values),
            max=max(values),
        )
        for scenario, values in sorted(scores.items())
    }


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))[:_LIST_LIMIT]


def _scenario_entry(report: ScenarioReport) -> ScenarioEntry:
    evaluation = report.evaluation
    completeness = report.completeness or {}
    answer, quality = _qualities(report)
    return ScenarioEntry(
        id=report.id,
        mode=report.mode,
        status=report.status,
        error=report.error,
        score=evaluation.score.overall if evaluation else 0.0,
        answer_quality=answer,
        coordination_quality=quality,
        passed=bool(evaluation and evaluation.passed),
        label=report.label,
        expected_label=report.expected_label,
        label_ok=None if report.expected_label is None else report.label == report.expected_label,
        trace_id=report.trace_id,
        trace_complete=completeness.get("complete"),
        outcome=report.outcome,
        duration_s=report.duration_s,
        scenario=report.scenario if report.repeat is not None else None,
        repeat=report.repeat,
        score_components=evaluation.score if evaluation else None,
        evaluator_failures=list(evaluation.failures) if evaluation else None,
        results=evaluation.results.model_dump(mode="json") if evaluation else None,
        completeness=completeness or None,
        attribution=evaluation.attribution if evaluation else None,
    )


def result_row(report: AssessmentReport) -> ResultRow:
    """The one ``results[]`` row (the artifact's DataPart) of an assessment, canonical (floats rounded).

    Every string in it is redacted (:func:`coordbench.redaction.redact_strings`): the row is what
    the artifact, ``results.json``, the summary and the report show, and a participant's answer
    or an error may quote a URL with credentials, or a key.
    """
    evaluated = [s for s in report.scenarios if s.evaluation is not None]
    overall = _mean([s.evaluation.score.overall for s in evaluated if s.evaluation is not None]) or 0.0
    passed = sum(1 for s in evaluated if s.evaluation is not None and s.evaluation.passed)
    densities: list[float] = []
    for s in evaluated:
        graph = s.evaluation.results.graph if s.evaluation is not None else None
        if graph is not None and isinstance(graph.metrics.get("density"), int | float):
            densities.append(float(graph.metrics["density"]))
    judged = [j for j in (_judge(s) for s in evaluated) if j is not None]
    qualities = [_qualities(s) for s in evaluated]
    total = len(report.scenarios)
    live = [s for s in report.scenarios if s.mode == "live"]
    row = ResultRow(
        domain=DOMAIN,
        score=overall * MAX_SCORE,
        max_score=MAX_SCORE,
        pass_rate=100.0 * passed / total if total else 0.0,
        time_used=report.time_used,
        task_rewards=TaskRewards(
            overall_score=overall,
            graph_density=_mean(densities) or 0.0,
            answer_quality=_mean([a for a, _ in qualities if a is not None]) or 0.0,
            coordination_quality=_mean([q for _, q in qualities if q is not None]) or 0.0,
        ),
        assessment_id=report.assessment_id,
        scenarios=total,
        scenarios_passed=passed,
        scenarios_failed=sum(1 for s in report.scenarios if s.status != "evaluated"),
        shard_index=report.shard_index,
        num_shards=report.num_shards,
        version=__version__,
        detail=RowDetail(
            graph_metrics=report.graph_metrics,
            latency_metrics=report.latency_metrics,
            judges=sorted({j.judge for j in judged}),
            judge_fallbacks=sorted({j.fallback_reason for j in judged if j.fallback_reason}),
            reasoning="\n".join(f"[{s.id}] {j.reasoning}" for s in evaluated if (j := _judge(s)) is not None),
            strengths=_unique([x for j in judged for x in j.strengths]),
            weaknesses=_unique([x for j in judged for x in j.weaknesses]),
            trace_completeness=TraceCompleteness(
                live_scenarios=len(live),
                complete_scenarios=sum(1 for s in live if (s.completeness or {}).get("complete")),
                incomplete=[s.id for s in live if not (s.completeness or {}).get("complete")],
                timed_out=[s.id for s in live if (s.completeness or {}).get("timed_out")],
            ),
            participants=report.participants,
            config=report.config,
            ignored_config_keys=report.ignored_config_keys,
            scenarios=[_scenario_entry(s) for s in report.scenarios],
            spread=_spread(report.scenarios),
        ),
    )
    return ResultRow.read(redact_strings(row.wire()))


def agentbeats_results(report: AssessmentReport) -> ResultsDocument:
    """``{"participants": {role: id}, "results": [row]}``; a role without an AgentBeats id is given by its URL."""
    return ResultsDocument.of([result_row(report)])


async def trace_results(
    spans: Sequence[SpanData],
    trace_id: str,
    *,
    config: AssessmentConfig | None = None,
    participants: Sequence[str] = (),
    task: str = "",
    references: Sequence[str] = (),
) -> ResultsDocument:
    """A results document for a stored trace, replayed (:func:`coordbench.evals.replay.replay`).

    The trace is judged as its assessment judged it: with the config it recorded (which the
    document's ``detail.config`` then shows) unless ``config`` is given. The participants are the
    agents the trace shows (no address is known: each is given as ``seen in the trace``), and the
    time used is the trace's span from first start to last end.

    Args:
        spans: The trace's spans.
        trace_id: The trace (the assessment's id in the document).
        config: The assessment config to apply (default: the recorded one, else the defaults).
        participants: The team's members, when known (a member that never took part is then idle).
        task: The task of a plain trace (one that holds no assessment), when known.
        references: What a good answer to it holds.

    Raises:
        ConfigurationError: If the recorded config is not valid.
    """
    from coordbench.evals import EvalScenario
    from coordbench.evals.replay import recorded_config, replay, replay_config

    assessment = replay_config(spans, config)
    known = [EvalScenario(id=trace_id, task=task, references=list(references))] if task or references else []
    evaluation = await replay(trace_id, spans, config=assessment, scenarios=known, participants=participants)
    applied = config is not None or recorded_config(spans) is not None
    return evaluation_results(evaluation, spans, config=assessment if applied else None)


def evaluation_results(
    evaluation: TraceEvaluation, spans: Sequence[SpanData], *, config: AssessmentConfig | None = None
) -> ResultsDocument:
    """The results document of a trace's evaluation: what :func:`trace_results` writes, from an evaluation at hand.

    The live UI and ``compare`` read online evaluations this way, so a page shows what
    ``coordbench evaluate`` and ``report`` would.

    Args:
        evaluation: The trace's evaluation (``coordbench evaluate``'s line, read back).
        spans: Its spans (the time used is their span; empty when they are no longer held).
        config: The config it was judged with, shown in ``detail.config`` (``None``: the defaults, not shown).
    """
    trace_id = evaluation.trace_id
    scenarios = [
        ScenarioReport(id=e.scenario, mode="live", status="evaluated", trace_id=trace_id, evaluation=e)
        for e in evaluation.evaluations
    ]
    agents: set[str] = set()
    for scenario in evaluation.evaluations:
        graph = scenario.results.graph
        if graph is not None:
            agents |= {a.name for a in graph.agents} - set(graph.hosts)
    took = (max(s.end_time_unix_nano for s in spans) - min(s.start_time_unix_nano for s in spans)) / 1e9 if spans else 0
    report = AssessmentReport(
        assessment_id=trace_id,
        participants=dict.fromkeys(sorted(agents), "seen in the trace"),
        scenarios=scenarios,
        time_used=max(0.0, took),
        config=config.recorded() if config is not None else {},
    )
    return agentbeats_results(report)


def write_results(path: str | Path, report: AssessmentReport | ResultsDocument) -> Path:
    """Write ``results.json`` (creating the folder, atomically) for a report or a document; returns the path."""
    document = agentbeats_results(report) if isinstance(report, AssessmentReport) else report
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    temporary.write_text(document.text(), encoding="utf-8")
    temporary.replace(target)
    return target


def spread_lines(spread: Mapping[str, Spread]) -> list[str]:
    """One line per repeated scenario: its runs' mean score, standard deviation and range."""
    return [
        f"- {scenario}: {s.runs} runs, score {s.mean:.3f} ± {s.stdev:.3f} (range {s.min:.3f} to {s.max:.3f})"
        for scenario, s in spread.items()
    ]


def summary_text(report: AssessmentReport, row: ResultRow | None = None) -> str:
    """A human summary of the assessment (the artifact's text part): one line, then one per scenario."""
    row = row or result_row(report)
    failed = row.scenarios_failed
    lines = [
        f"coordbench assessment {report.assessment_id}: score {row.score:.1f}/{MAX_SCORE}, "
        f"{row.scenarios_passed}/{row.scenarios} scenarios passed"
        + (f", {failed} not evaluated normally" if failed else "")
        + f", {row.time_used:.1f} s",
    ]
    for entry in row.detail.scenarios:
        verdict = "passed" if entry.passed else "not passed"
        graph = entry.graph()
        shape = f", {graph.topology} / {entry.label}" if graph is not None else ""
        expected = f" (expected {entry.expected_label})" if entry.expected_label else ""
        trace = f"; trace {entry.trace_id}" if entry.trace_id and entry.mode == "live" else ""
        problem = f"; {entry.status}: {entry.error}" if entry.error else ""
        qualities = ""
        if entry.answer_quality is not None:
            qualities = f" (answer {entry.answer_quality:.2f}, coordination {entry.coordination_quality or 0.0:.2f})"
        lines.append(
            f"- {entry.id} [{entry.mode}]: score {entry.score:.2f}{qualities}, {verdict}{shape}{expected}"
            f"{trace}{problem}"
        )
    lines += spread_lines(row.detail.spread)
    if row.detail.judge_fallbacks:
        lines.append(
            "Judge: rule-based (not counted in the score: it restates the coordination score), because "
            + "; ".join(row.detail.judge_fallbacks)
        )
    if row.detail.ignored_config_keys:
        lines.append("Ignored config keys (not known to coordbench): " + ", ".join(row.detail.ignored_config_keys))
    if row.detail.weaknesses:
        lines.append("Weaknesses: " + "; ".join(row.detail.weaknesses))
    return "\n".join(lines)
