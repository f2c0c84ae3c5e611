"""An assessment's config: its scenarios and how they are judged, as a request gives it and a trace records it.

The green validates it from the assessment request; the assessor records it on the
assessment's root span (:data:`coordbench.semconv.COORDBENCH_ASSESSMENT_CONFIG`), and every
replay of a stored trace (:func:`coordbench.evals.replay.replay`) reads it back from there, so
``coordbench evaluate``, online evaluation, ``compare``, ``report`` and the pytest helper judge
a trace as its assessment did.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from coordbench.datafiles import data_file
from coordbench.errors import ConfigurationError, describe_validation_error
from coordbench.evals.base import EvalScenario
from coordbench.evals.config import EvalConfig, JudgeConfig, check_weights
from coordbench.evals.groundtruth import InteractionPattern, load_ground_truth
from coordbench.graph.metrics import Label, Thresholds

__all__ = [
    "AssessmentConfig",
    "ScenarioConfig",
    "default_scenarios",
    "ground_truth_scenarios",
    "validate_config",
]


class ScenarioConfig(BaseModel):
    """One scenario of an assessment.

    Attributes:
        id: Unique id.
        task: What the team is asked to do (live mode).
        entry: Role of the participant the task goes to (default: the assessment's ``entry``).
        references: Reference texts the answer is compared with.
        interaction_pattern: A labelled pattern to evaluate instead of asking the team
            (ground-truth mode).
        label: The label the pattern should get (ground-truth mode).
        description: Free text.
        expected: The correct answer, when known: a failed scenario's attribution follows what
            the team's answer carries beyond it, and what it lacks, back to the agents.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
    task: str = Field(default="", max_length=100_000)
    entry: str | None = None
    references: list[str] = Field(default_factory=list[str], max_length=100)
    interaction_pattern: InteractionPattern | None = None
    label: Label | None = None
    description: str = Field(default="", max_length=10_000)
    expected: str = Field(default="", max_length=100_000)

    @model_validator(mode="after")
    def _live_or_pattern(self) -> ScenarioConfig:
        if self.interaction_pattern is None and not self.task.strip():
            raise ValueError(f"scenario {self.id!r} needs a 'task' (live mode) or an 'interaction_pattern'")
        return self

    @property
    def live(self) -> bool:
        """The team is asked to do the task (rather than a pattern being replayed)."""
        return self.interaction_pattern is None

    def eval_scenario(self) -> EvalScenario:
        """What the evaluators are told about the scenario."""
        return EvalScenario(
            id=self.id,
            task=self.task,
            references=self.references,
            expected_label=self.label,
            description=self.description,
            expected=self.expected,
        )


class AssessmentConfig(BaseModel):
    """The ``config`` of an assessment request (all optional).

    Attributes:
        scenarios: Scenarios to run (default: the bundled live scenarios; ``[]`` for none,
            with ``ground_truth``).
        ground_truth: Also evaluate the bundled labelled patterns (ground-truth mode).
        entry: Role that receives each task (default: ``coordinator`` or ``agent`` if such a
            role exists, else the first participant).
        timeout: Seconds a participant may take to answer one task.
        trace_timeout: Seconds to wait for a scenario's spans to arrive and be complete.
        trace_quiet: Seconds without new spans after which a complete trace is final.
        participant_ids: AgentBeats ids of the participants, by role (for ``results.json``).
        evaluators, disabled_evaluators, metrics, disabled_metrics, weights, thresholds,
        pass_threshold: See :class:`~coordbench.evals.EvalConfig`.
        judge_model: Model for the LLM judge (the endpoint and key come from the
            assessor's environment only: a request must not redirect the key elsewhere).
        shard_index, num_shards, num_instances: AgentBeats sharding: this run assesses the
            scenarios whose position ``i`` has ``i % num_shards == shard_index``.
        repeats: Runs of each live scenario (1-20). With more than one, run ``k`` is reported as
            scenario ``<id>#<k>`` and the results give each scenario's mean score and spread
            (leaderboards compare teams run on different machines, at different times).
        team: A name for the team assessed (letters, digits, ``.``, ``_``, ``-``): the assessor
            writes this assessment's results and report as ``results/<team>-<id>.json`` and
            ``reports/<team>-<id>.html`` (default: the entry participant's role).
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    scenarios: list[ScenarioConfig] | None = Field(default=None, max_length=1_000)
    ground_truth: bool = False
    entry: str | None = None
    timeout: float = Field(default=300.0, gt=0, le=86_400)
    trace_timeout: float = Field(default=15.0, ge=0, le=3_600)
    trace_quiet: float = Field(default=1.0, ge=0, le=600)
    participant_ids: dict[str, str] = Field(default_factory=dict[str, str])
    evaluators: list[str] | None = None
    disabled_evaluators: list[str] = Field(default_factory=list[str])
    metrics: list[str] | None = None
    disabled_metrics: list[str] = Field(default_factory=list[str])
    weights: dict[str, float] | None = None
    thresholds: Thresholds = Field(default_factory=Thresholds)
    pass_threshold: float = Field(default=0.5, ge=0, le=1)
    judge_model: str | None = Field(default=None, min_length=1, max_length=200)
    shard_index: int = Field(default=0, ge=0)
    num_shards: int = Field(default=1, ge=1, le=10_000)
    num_instances: int | None = Field(default=None, ge=1)
    team: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]{1,64}$")
    repeats: int = Field(default=1, ge=1, le=20)

    @model_validator(mode="before")
    @classmethod
    def _no_typos(cls, data: object) -> object:
        """An unknown key close to a known one is a typo (``timout``): refused, naming the right one."""
        keys = [str(k) for k in cast("dict[object, object]", data)] if isinstance(data, dict) else []
        known = list(cls.model_fields)
        for key in sorted(keys):
            close = [] if key in known else difflib.get_close_matches(key, known, n=1, cutoff=0.75)
            if close:
                raise ValueError(f"unknown config key {key!r}: did you mean {close[0]!r}?")
        return cast("object", data)

    @field_validator("weights")
    @classmethod
    def _weights(cls, weights: dict[str, float] | None) -> dict[str, float] | None:
        return None if weights is None else check_weights(weights)

    @model_validator(mode="after")
    def _consistent(self) -> AssessmentConfig:
        if self.shard_index >= self.num_shards:
            raise ValueError(f"shard_index {self.shard_index} must be below num_shards {self.num_shards}")
        if self.scenarios == [] and not self.ground_truth:
            raise ValueError("no scenarios to run: 'scenarios' is empty and 'ground_truth' is false")
        if self.scenarios is not None:
            ids = [s.id for s in self.scenarios]
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"scenario ids must be unique; repeated: {', '.join(duplicates)}")
        return self

    def runs(self, scenarios: list[ScenarioConfig]) -> list[tuple[ScenarioConfig, int | None]]:
        """Each scenario as run: a live one ``repeats`` times (``<id>#<k>``, with ``k``), the others once.

        ``#`` is not allowed in a scenario id, so a run's id never collides with a scenario's.
        """
        if self.repeats == 1:
            return [(s, None) for s in scenarios]
        runs: list[tuple[ScenarioConfig, int | None]] = []
        for scenario in scenarios:
            if not scenario.live:
                runs.append((scenario, None))
                continue
            runs += [(scenario.model_copy(update={"id": f"{scenario.id}#{k}"}), k) for k in range(1, self.repeats + 1)]
        return runs

    def all_scenarios(self) -> list[ScenarioConfig]:
        """Every scenario this config runs (before sharding), in order: its own or the bundled ones."""
        chosen = list(self.scenarios) if self.scenarios is not None else default_scenarios()
        if self.ground_truth:
            chosen += ground_truth_scenarios()
        return chosen

    @property
    def ignored_keys(self) -> list[str]:
        """Keys of the request's config that coordbench does not know (ignored, reported)."""
        return sorted(self.model_extra or {})

    def recorded(self) -> dict[str, Any]:
        """The config as used, as the assessor records it on its trace: known keys only, scenarios apart.

        Whatever else a request carries is not echoed (it may be anything); the scenarios are
        recorded one by one, on their own spans.
        """
        return self.model_dump(mode="json", exclude_none=True, exclude={"scenarios", *self.ignored_keys})

    def eval_config(self, judge: JudgeConfig | None = None) -> EvalConfig:
        """The evaluator pipeline's configuration for this assessment."""
        judge = judge or JudgeConfig.from_env()
        if self.judge_model:
            judge = judge.model_copy(update={"model": self.judge_model})
        values: dict[str, Any] = {
            "evaluators": self.evaluators,
            "disabled_evaluators": self.disabled_evaluators,
            "metrics": self.metrics,
            "disabled_metrics": self.disabled_metrics,
            "thresholds": self.thresholds,
            "pass_threshold": self.pass_threshold,
            "judge": judge,
        }
        if self.weights is not None:
            values["weights"] = self.weights
        return EvalConfig(**values)


def default_scenarios(path: Path | None = None) -> list[ScenarioConfig]:
    """The bundled live scenarios (``data/scenarios.json``)."""
    document = json.loads((path or data_file("scenarios.json")).read_text(encoding="utf-8"))
    return [ScenarioConfig.model_validate(s) for s in document["scenarios"]]


def ground_truth_scenarios(path: Path | None = None) -> list[ScenarioConfig]:
    """The bundled labelled patterns (``data/ground_truth.json``) as ground-truth-mode scenarios."""
    truth = load_ground_truth(path or data_file("ground_truth.json"))
    return [
        ScenarioConfig(id=s.id, description=s.description, interaction_pattern=s.interaction_pattern, label=s.label)
        for s in truth.scenarios
    ]


def validate_config(document: object) -> AssessmentConfig:
    """Validate an assessment's ``config`` on its own (re-evaluating a stored trace needs no participants).

    Raises:
        ConfigurationError: With the first few problems, each naming its field (``config.weights``...).
    """
    if not isinstance(document, dict):
        raise ConfigurationError(f"the config must be a JSON object, got {type(document).__name__}")
    try:
        return AssessmentConfig.model_validate(document)
    except ValidationError as exc:
        raise ConfigurationError(
            f"invalid config: {describe_validation_error(exc, prefix='config.', whole='request')}"
        ) from exc
