"""The results contract: ``results.json`` and its rows as typed models.

An assessment becomes one row (:class:`ResultRow`); rows become the AgentBeats document
(:class:`ResultsDocument`). :mod:`coordbench.results` writes them; the summary, the CLI, the
report, comparisons and online evaluation read them through these models, so a renamed field
fails loudly where it is read instead of rendering as "-". The JSON shape is the one the
AgentBeats leaderboard queries (``docs/results.schema.json`` is generated from these models;
a test holds the two equal).

Each scenario's ``results`` hold the evaluators' outputs by name as plain data (an evaluator
plugin may add its own; a newer coordbench's fields are kept as written);
:meth:`ScenarioEntry.evaluator_results` reads them as the evaluation's own
:class:`~coordbench.evals.evaluation.EvaluatorResults`, and :meth:`~ScenarioEntry.graph`,
:meth:`~ScenarioEntry.coordination`, :meth:`~ScenarioEntry.judge` and
:meth:`~ScenarioEntry.latency` are its built-in parts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from coordbench.errors import CoordbenchError, describe_validation_error
from coordbench.evals.attribution.model import Attribution
from coordbench.evals.base import TeamOutcome
from coordbench.evals.coordination import CoordinationResult
from coordbench.evals.evaluation import EvaluatorFailure, EvaluatorResults
from coordbench.evals.judge import JudgeResult
from coordbench.evals.latency import LatencyResult
from coordbench.evals.scoring import Score
from coordbench.graph.metrics.result import GraphMetrics, canonical_json

__all__ = [
    "PART_ORDER",
    "ResultRow",
    "ResultsDocument",
    "ResultsDocumentError",
    "RowDetail",
    "ScenarioEntry",
    "Spread",
    "TaskRewards",
    "TraceCompleteness",
    "results_schema",
    "schema_text",
]

PART_ORDER = ("outcome", "participation", "efficiency", "parallelism", "bottleneck", "robustness", "information_flow")
"""The coordination score's parts in the order they are shown (the outcome first)."""


class ResultsDocumentError(CoordbenchError, ValueError):
    """A file or value that is not a ``results.json`` document (or row), with every bad field named."""


class _Model(BaseModel):
    # Unknown keys are kept (a newer coordbench may add fields): a renamed or missing known
    # field still fails, since every field the readers use is declared.
    model_config = ConfigDict(frozen=True, extra="allow")


_OPTIONAL_KEYS = frozenset(
    {"scenario", "repeat", "score_components", "evaluator_failures", "results", "completeness", "attribution"}
)
"""A scenario entry's keys written only when they have a value (the others are always written, null or not)."""


class ScenarioEntry(_Model):
    """One scenario of an assessment, as ``results.json`` holds it.

    Attributes:
        id: Scenario id (``<scenario>#<repeat>`` for a repeated run).
        mode: ``live`` or ``ground_truth``.
        status: ``evaluated``, ``error`` (the team failed; still evaluated) or ``failed``.
        error: What went wrong, if anything.
        score: The overall score, 0-1 (0 when not evaluated).
        answer_quality: The coordination evaluator's answer quality (``None``: not judged).
        coordination_quality: How well the agents worked together, apart from the answer.
        passed: The score reached the pass threshold (and the team answered).
        label: The graph evaluator's coordination label.
        expected_label: The scenario's label, when it has one.
        label_ok: Whether the two labels agree (``None`` without an expected label).
        trace_id: The trace the scenario's spans are in.
        trace_complete: Whether that trace was complete when evaluated.
        outcome: What the team answered (live mode).
        duration_s: Wall time of the scenario.
        scenario: The scenario's id without the run number (repeated runs only).
        repeat: Which run this is (repeated runs only).
        score_components: How the overall score was made (evaluated scenarios only).
        evaluator_failures: Evaluators that failed (evaluated scenarios only).
        results: Each evaluator's result as plain data, by evaluator name (evaluated scenarios only).
        completeness: The trace's completeness (see :class:`coordbench.spantree.Completeness`).
        attribution: Which agent and step made the scenario fail, with the evidence (failed
            scenarios only; :mod:`coordbench.evals.attribution`).
    """

    id: str
    mode: Literal["live", "ground_truth"]
    status: Literal["evaluated", "error", "failed"]
    error: str | None
    score: float
    answer_quality: float | None
    coordination_quality: float | None
    passed: bool
    label: str | None
    expected_label: str | None
    label_ok: bool | None
    trace_id: str | None
    trace_complete: bool | None
    outcome: TeamOutcome | None
    duration_s: float
    scenario: str | None = None
    repeat: int | None = None
    score_components: Score | None = None
    evaluator_failures: list[EvaluatorFailure] | None = None
    results: dict[str, Any] | None = None
    completeness: dict[str, Any] | None = None
    attribution: Attribution | None = None
    _read: tuple[object, EvaluatorResults] | None = PrivateAttr(default=None)

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if value is not None or key not in _OPTIONAL_KEYS}

    def evaluator_results(self) -> EvaluatorResults:
        """The evaluators' results as their own models (read once, then kept; empty when none ran).

        Raises:
            ResultsDocumentError: If a built-in evaluator's result is not what that evaluator writes.
        """
        found = self.results or {}
        cached = self._read
        if cached is None or cached[0] is not found:  # kept per results object: a copy with new results reads again
            try:
                cached = (found, EvaluatorResults.model_validate(found))
            except ValidationError as exc:
                raise ResultsDocumentError(
                    f"scenario {self.id!r}: {describe_validation_error(exc, prefix='results.', whole='results')}"
                ) from exc
            self._read = cached
        return cached[1]

    def graph(self) -> GraphMetrics | None:
        """The graph evaluator's result, or ``None`` when it did not run."""
        return self.evaluator_results().graph

    def coordination(self) -> CoordinationResult | None:
        """The coordination evaluator's result, or ``None`` when it did not run."""
        return self.evaluator_results().coordination

    def judge(self) -> JudgeResult | None:
        """The judge's result, or ``None`` when it did not run."""
        return self.evaluator_results().llm_judge

    def latency(self) -> LatencyResult | None:
        """The latency evaluator's result, or ``None`` when it did not run."""
        return self.evaluator_results().latency

    @property
    def run_of(self) -> str:
        """The scenario this entry is a run of (its id without the run number)."""
        return self.scenario if self.scenario is not None else self.id


class TaskRewards(_Model):
    """The row's 0-1 numbers, means over the evaluated scenarios.

    Attributes:
        overall_score: The mean overall score.
        graph_density: The mean graph density.
        answer_quality: The mean answer quality.
        coordination_quality: The mean coordination quality.
    """

    overall_score: float
    graph_density: float
    answer_quality: float
    coordination_quality: float


class TraceCompleteness(_Model):
    """How many live scenarios' traces were complete when evaluated.

    Attributes:
        live_scenarios: Live scenarios.
        complete_scenarios: Those whose trace was complete.
        incomplete: Ids of the others.
        timed_out: Ids of those whose wait for a complete trace gave up.
    """

    live_scenarios: int
    complete_scenarios: int
    incomplete: list[str]
    timed_out: list[str]


class Spread(_Model):
    """A repeated scenario's runs: count, mean, sample standard deviation and range of the scores."""

    runs: int
    mean: float
    stdev: float
    min: float
    max: float


class RowDetail(_Model):
    """Everything under a row's ``detail``.

    Attributes:
        graph_metrics: Graph metrics over all live scenarios' spans together.
        latency_metrics: Latency figures over all live scenarios' spans together.
        judges: Which judges ran (``llm``, ``rule_based``).
        judge_fallbacks: Why the rule-based judge stood in, when it did.
        reasoning: The judge's reasoning, one line per scenario.
        strengths: What went well (at most five).
        weaknesses: What lowered the scores (at most five).
        trace_completeness: The live traces' completeness.
        participants: Participant URLs by role (redacted).
        config: The request's configuration, as used.
        ignored_config_keys: Configuration keys coordbench did not know.
        scenarios: Every scenario, in order.
        spread: Each repeated scenario's runs, by scenario id.
    """

    graph_metrics: dict[str, Any] | None
    latency_metrics: dict[str, Any] | None
    judges: list[str]
    judge_fallbacks: list[str]
    reasoning: str
    strengths: list[str]
    weaknesses: list[str]
    trace_completeness: TraceCompleteness
    participants: dict[str, str]
    config: dict[str, Any]
    ignored_config_keys: list[str]
    scenarios: list[ScenarioEntry]
    spread: dict[str, Spread]

    def graph(self) -> GraphMetrics | None:
        """The graph metrics over all live scenarios together, or ``None`` when there were none."""
        return GraphMetrics.model_validate(self.graph_metrics) if self.graph_metrics else None

    def latency(self) -> LatencyResult | None:
        """The latency figures over all live scenarios together, or ``None`` when there were none."""
        return LatencyResult.model_validate(self.latency_metrics) if self.latency_metrics else None


class ResultRow(_Model):
    """One assessment (or shard): one element of ``results.json``'s ``results``.

    Attributes:
        domain: ``graph-assessment``.
        score: The mean overall score x 100.
        max_score: 100.
        pass_rate: Percentage of scenarios that passed.
        time_used: Seconds the assessment took.
        task_rewards: The 0-1 means.
        assessment_id: The A2A context id of the assessment request.
        scenarios: How many scenarios there were.
        scenarios_passed: How many passed.
        scenarios_failed: How many were not evaluated normally.
        shard_index: Which shard this is.
        num_shards: How many shards there are.
        version: The coordbench version that wrote it.
        detail: Everything else.
    """

    domain: str
    score: float
    max_score: int
    pass_rate: float
    time_used: float
    task_rewards: TaskRewards
    assessment_id: str
    scenarios: int
    scenarios_passed: int
    scenarios_failed: int
    shard_index: int
    num_shards: int
    version: str
    detail: RowDetail

    def wire(self) -> dict[str, Any]:
        """The row as plain data, canonical (floats rounded): what the artifact's DataPart carries."""
        return json.loads(canonical_json(self.model_dump(mode="json")))

    @classmethod
    def read(cls, data: object) -> ResultRow:
        """Read a row from plain data (a DataPart, a document's element).

        Raises:
            ResultsDocumentError: If it is not a row, naming every bad field.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ResultsDocumentError(f"not a results row: {describe_validation_error(exc, whole='row')}") from exc


class ResultsDocument(_Model):
    """AgentBeats ``results.json``: ``{"participants": {role: id}, "results": [row, ...]}``.

    Attributes:
        participants: AgentBeats id by role (a role without one is given by its redacted URL).
        results: One row per assessment or shard.
    """

    participants: dict[str, str] = Field(default_factory=dict[str, str])
    results: list[ResultRow]

    @classmethod
    def of(cls, rows: Sequence[ResultRow]) -> ResultsDocument:
        """The document of these rows, its participants read from the rows alone.

        So the assessor's copy and the one ``coordbench assess`` writes from the artifact it
        received are the same bytes.
        """
        participants: dict[str, str] = {}
        for row in rows:
            ids: dict[str, Any] = row.detail.config.get("participant_ids") or {}
            for role, url in row.detail.participants.items():
                participants[role] = str(ids.get(role, url))
        return cls(participants=dict(sorted(participants.items())), results=list(rows))

    def wire(self) -> dict[str, Any]:
        """The document as plain data, canonical."""
        return {"participants": dict(self.participants), "results": [row.wire() for row in self.results]}

    def text(self) -> str:
        """``results.json``'s text: the document indented, keys sorted, newline-terminated."""
        return json.dumps(self.wire(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def read(cls, data: object, *, source: str = "the document") -> ResultsDocument:
        """Read a document from plain data.

        Raises:
            ResultsDocumentError: If it is not a ``results.json`` document, naming every bad field.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ResultsDocumentError(
                f"{source} is not a results.json document: {describe_validation_error(exc, whole='document')}"
            ) from exc

    @classmethod
    def load(cls, path: str | Path) -> ResultsDocument:
        """Read ``results.json`` from a file.

        Raises:
            ResultsDocumentError: If the file cannot be read, is not JSON, or is not a document.
        """
        from coordbench import jsontext

        return cls.read(jsontext.load_file(Path(path), ResultsDocumentError), source=str(path))


def results_schema() -> dict[str, Any]:
    """The JSON Schema of ``results.json`` (``docs/results.schema.json`` is this, written out)."""
    schema = ResultsDocument.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def schema_text() -> str:
    """:func:`results_schema` as ``docs/results.schema.json`` holds it: indented, keys sorted."""
    return json.dumps(results_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
