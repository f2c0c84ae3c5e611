"""What an evaluation is configured with: evaluator selection, score weights, thresholds, the judge.

Defaults come from code and the environment (the judge's ``AGENTBEATS_LLM_*`` variables);
an assessment request may override the non-secret parts through its ``config``. Secrets
(the API key) are only ever read from the environment and never serialised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from coordbench.graph.metrics import Thresholds
from coordbench.llmendpoint import LLMEndpoint
from coordbench.redaction import register_secret

__all__ = [
    "DEFAULT_WEIGHTS",
    "LLM_API_KEY_ENV",
    "LLM_BASE_URL_ENV",
    "LLM_MODEL_ENV",
    "EvalConfig",
    "JudgeConfig",
    "check_weights",
]

LLM_ENV_PREFIX = "AGENTBEATS_LLM"
"""The judge's endpoint variables' prefix (:class:`coordbench.llmendpoint.LLMEndpoint`)."""
LLM_API_KEY_ENV = f"{LLM_ENV_PREFIX}_API_KEY"
LLM_BASE_URL_ENV = f"{LLM_ENV_PREFIX}_BASE_URL"
LLM_MODEL_ENV = f"{LLM_ENV_PREFIX}_MODEL"

DEFAULT_WEIGHTS: Mapping[str, float] = {"coordination": 0.7, "llm_judge": 0.3}
"""Weights of the evaluators' scores in the overall score (see ``docs/scoring.md``).

The graph evaluator describes shape and has no score; protocol, latency and text figures feed
the coordination score's parts rather than counting on their own. Without an LLM the
rule-based judge answers with the coordination score itself."""


def check_weights(weights: dict[str, float]) -> dict[str, float]:
    """``weights`` if every one is a finite number >= 0.

    Raises:
        ValueError: Naming the first weight that is not (an infinite weight would make the
            overall score NaN).
    """
    for name, weight in weights.items():
        if not (math.isfinite(weight) and weight >= 0):
            raise ValueError(f"weight of {name!r} must be a finite number >= 0, got {weight}")
    return weights


class JudgeConfig(BaseModel):
    """The LLM judge's endpoint and limits.

    Attributes:
        api_key: Bearer key for the endpoint; without one the rule-based judge answers.
        base_url: Any OpenAI-compatible endpoint.
        model: Model name sent to the endpoint.
        timeout: Seconds for the whole judge call.
        max_prompt_chars: Bound on the serialised trace in the prompt (it is cut, and says so).
        max_output_tokens: Bound on the judgment's length.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    timeout: float = Field(default=60.0, gt=0, le=3600)
    max_prompt_chars: int = Field(default=24_000, ge=16_000, le=1_000_000)
    max_output_tokens: int = Field(default=700, ge=64, le=16_000)

    @field_validator("api_key")
    @classmethod
    def _remember_key(cls, api_key: SecretStr | None) -> SecretStr | None:
        if api_key is not None:
            register_secret(api_key.get_secret_value())  # a provider's error may echo it
        return api_key

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> JudgeConfig:
        """The judge configured by ``AGENTBEATS_LLM_API_KEY``, ``_BASE_URL`` and ``_MODEL``, then ``overrides``.

        The endpoint is read as every model endpoint is (:class:`coordbench.llmendpoint.LLMEndpoint`);
        the judge's timeout comes from the assessment's configuration, not the environment.
        """
        endpoint = LLMEndpoint.from_env(LLM_ENV_PREFIX, env, default_model=cls.model_fields["model"].default)
        values: dict[str, Any] = {"model": endpoint.model}
        if endpoint.api_key is not None:
            values["api_key"] = endpoint.api_key
        if endpoint.base_url is not None:
            values["base_url"] = endpoint.base_url
        values.update(overrides)
        return cls(**values)


class EvalConfig(BaseModel):
    """Configuration of the evaluator pipeline.

    Attributes:
        evaluators: Only these evaluators (``None``: all registered).
        disabled_evaluators: Leave these out.
        metrics: Only these graph metrics (``None``: all registered).
        disabled_metrics: Leave these graph metrics out.
        weights: Weight of each evaluator's score in the overall score; evaluators not
            listed do not count. Renormalised over the evaluators that produced a score.
        thresholds: The graph detections' thresholds.
        judge: The LLM judge's endpoint.
        evaluator_timeout: Seconds one evaluator may take before it is reported as failed.
        pass_threshold: Overall score at or above which a scenario counts as passed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    evaluators: list[str] | None = None
    disabled_evaluators: list[str] = Field(default_factory=list[str])
    metrics: list[str] | None = None
    disabled_metrics: list[str] = Field(default_factory=list[str])
    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    thresholds: Thresholds = Field(default_factory=Thresholds)
    judge: JudgeConfig = Field(default_factory=JudgeConfig.from_env)
    evaluator_timeout: float = Field(default=300.0, gt=0, le=86_400)
    pass_threshold: float = Field(default=0.5, ge=0, le=1)

    @field_validator("weights")
    @classmethod
    def _weights(cls, weights: dict[str, float]) -> dict[str, float]:
        return check_weights(weights)
