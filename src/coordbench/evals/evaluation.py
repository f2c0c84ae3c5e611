"""The evaluation of a trace as typed models: per scenario, each evaluator's result as its own model.

:class:`TraceEvaluation` is what every path that evaluates a stored trace produces
(:func:`coordbench.evals.replay.replay`): ``coordbench evaluate``, online evaluation, ``compare``,
``report`` and the pytest helper. Its JSON line (:meth:`TraceEvaluation.to_json`) is only how it is
printed and stored: readers get the models back with :meth:`TraceEvaluation.from_json`, byte for
byte the same line again, and never dig dict keys.

:class:`EvaluatorResults` holds the built-in evaluators' results as their own models (``graph``,
``coordination``, ``latency``, ``llm_judge``, ``protocol``, ``text``) and a plugin's as plain data
in :attr:`~EvaluatorResults.extra`. On the wire it is one object keyed by evaluator name, as it
always was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from coordbench.evals.attribution.model import Attribution
from coordbench.evals.coordination import CoordinationResult
from coordbench.evals.judge import JudgeResult
from coordbench.evals.latency import LatencyResult
from coordbench.evals.protocol import ProtocolResult
from coordbench.evals.scoring import Score
from coordbench.evals.text import TextResult
from coordbench.graph.metrics.result import GraphMetrics, canonical_json

__all__ = ["BUILT_IN", "RESERVED", "EvaluatorFailure", "EvaluatorResults", "ScenarioEvaluation", "TraceEvaluation"]

BUILT_IN: Mapping[str, type[BaseModel]] = {
    "coordination": CoordinationResult,
    "graph": GraphMetrics,
    "latency": LatencyResult,
    "llm_judge": JudgeResult,
    "protocol": ProtocolResult,
    "text": TextResult,
}
"""Each built-in evaluator's name and the model of its result."""
RESERVED = "extra"
"""The one name no evaluator may have: :attr:`EvaluatorResults.extra` holds the plugins' results."""


class EvaluatorFailure(BaseModel):
    """An evaluator that raised or timed out: reported, not fatal."""

    model_config = ConfigDict(frozen=True)

    evaluator: str
    tier: int
    error: str


class EvaluatorResults(BaseModel):
    """Each evaluator's result on one scenario, by evaluator name (``None``: it did not run, or failed).

    Attributes:
        graph: The graph evaluator's description of the team's shape.
        coordination: The coordination evaluator's judgement.
        latency: Latency percentiles and the critical path.
        llm_judge: The judge's verdict (a model's, or the rule-based one).
        protocol: Per-agent protocol figures.
        text: Text similarity and diversity.
        extra: Plugin evaluators' results as plain JSON data, by name.
    """

    model_config = ConfigDict(frozen=True)

    graph: GraphMetrics | None = None
    coordination: CoordinationResult | None = None
    latency: LatencyResult | None = None
    llm_judge: JudgeResult | None = None
    protocol: ProtocolResult | None = None
    text: TextResult | None = None
    extra: dict[str, Any] = Field(default_factory=dict[str, Any])

    @model_validator(mode="before")
    @classmethod
    def _by_name(cls, data: object) -> object:
        """Read the wire form, one object keyed by evaluator name (a plugin's results go to ``extra``)."""
        if not isinstance(data, Mapping):
            return data
        found = cast("Mapping[str, object]", data)
        if RESERVED in found:  # built from fields (no evaluator is named so)
            return found
        known = {name: value for name, value in found.items() if name in BUILT_IN}
        return known | {"extra": {name: value for name, value in found.items() if name not in BUILT_IN}}

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Write the wire form: the results that exist, keyed by evaluator name."""
        data: dict[str, Any] = handler(self)
        extra: dict[str, Any] = data.pop("extra", {})
        out = {name: value for name, value in data.items() if value is not None}
        return out | {name: value for name, value in extra.items() if name not in out}

    @classmethod
    def of(cls, results: Mapping[str, BaseModel]) -> EvaluatorResults:
        """The results of an evaluator run (each evaluator's own model, by name).

        A built-in name's result is read as that evaluator's model, whatever class carried it;
        any other name's is kept as its JSON data.
        """
        typed: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, result in results.items():
            kind = BUILT_IN.get(name)
            if kind is None:
                extra[name] = result.model_dump(mode="json")
            else:
                typed[name] = result if type(result) is kind else kind.model_validate(result.model_dump())
        return cls(**typed, extra=extra)

    def names(self) -> list[str]:
        """The evaluators that gave a result, sorted."""
        return sorted([name for name in BUILT_IN if getattr(self, name) is not None] + list(self.extra))

    def __contains__(self, name: object) -> bool:
        """Whether the evaluator ``name`` gave a result."""
        return name in self.names()


class ScenarioEvaluation(BaseModel):
    """The evaluators' verdicts on one scenario.

    Attributes:
        scenario: Scenario id.
        results: Each evaluator's result.
        failures: Evaluators that failed (their results are missing).
        score: The overall score and its parts.
        passed: ``score.overall`` reached the configured pass threshold and the team answered
            (in live mode: a team that delivered no answer never passes).
        attribution: Which agent and step made the scenario fail, with the evidence: present
            when it did not pass (or when attribution was asked for every scenario).
    """

    model_config = ConfigDict(frozen=True)

    scenario: str
    results: EvaluatorResults = Field(default_factory=EvaluatorResults)
    failures: list[EvaluatorFailure] = Field(default_factory=list[EvaluatorFailure])
    score: Score
    passed: bool
    attribution: Attribution | None = None

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Without an attribution, no ``attribution`` key: a passing scenario's line is what it always was."""
        data: dict[str, Any] = handler(self)
        if data.get("attribution") is None:
            data.pop("attribution", None)
        return data

    def to_json(self) -> str:
        """Canonical JSON: the same spans and configuration give the same bytes."""
        return canonical_json(self.model_dump(mode="json"))


class TraceEvaluation(BaseModel):
    """The evaluation of one trace: one entry per scenario (one for a trace that is not an assessment's).

    Attributes:
        trace_id: The trace.
        evaluations: Per scenario, by scenario id.
    """

    model_config = ConfigDict(frozen=True)

    trace_id: str
    evaluations: list[ScenarioEvaluation]

    def to_json(self) -> str:
        """Canonical JSON on one line, ``coordbench evaluate``'s: the same spans and config give the same bytes."""
        return canonical_json(self.model_dump(mode="json"))

    @classmethod
    def from_json(cls, line: str | bytes) -> TraceEvaluation:
        """Read a line :meth:`to_json` wrote (its :meth:`to_json` is that line again).

        Raises:
            pydantic.ValidationError: If it is not one.
        """
        return cls.model_validate_json(line)
