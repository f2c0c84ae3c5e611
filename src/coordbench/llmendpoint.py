"""An OpenAI-compatible model endpoint, as the environment configures it: the one reader.

The judge (``AGENTBEATS_LLM_*``) and the purple agents (``PURPLE_LLM_*``) read their endpoint
through :meth:`LLMEndpoint.from_env` with their prefix: ``<PREFIX>_BASE_URL``,
``<PREFIX>_API_KEY``, ``<PREFIX>_MODEL`` and ``<PREFIX>_TIMEOUT`` (seconds). A bad value is
refused with the variable's name. The key is registered as a secret the moment it is read
(:mod:`coordbench.redaction`): a provider's error that echoes it is redacted. (tau2's models
are configured tau2's way, through LiteLLM's arguments.)
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from coordbench.errors import ConfigurationError
from coordbench.redaction import register_secret

__all__ = ["MAX_TIMEOUT", "LLMEndpoint"]

MAX_TIMEOUT = 86_400.0
"""The longest call timeout accepted, in seconds."""


class LLMEndpoint(BaseModel):
    """Where a model is and how to call it.

    Attributes:
        base_url: The OpenAI-compatible endpoint (``.../v1``), or ``None`` when not given.
        api_key: The bearer key, or ``None`` when not given.
        model: The model name.
        timeout: Seconds a call may take, or ``None`` when not given.
    """

    model_config = ConfigDict(frozen=True)

    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, repr=False)
    model: str
    timeout: float | None = None

    @classmethod
    def from_env(cls, prefix: str, env: Mapping[str, str] | None = None, *, default_model: str) -> LLMEndpoint:
        """The endpoint the ``<prefix>_*`` variables configure (blank values count as not given).

        Args:
            prefix: ``AGENTBEATS_LLM`` or ``PURPLE_LLM``.
            env: The environment (default ``os.environ``).
            default_model: The model when ``<prefix>_MODEL`` is not given.

        Raises:
            ConfigurationError: If ``<prefix>_TIMEOUT`` is not a number of seconds in (0, 86400];
                the message names the variable.

        Example:
            >>> e = LLMEndpoint.from_env("X", {"X_BASE_URL": "http://127.0.0.1:8080/v1", "X_TIMEOUT": "30"},
            ...                          default_model="m")
            >>> e.base_url, e.api_key, e.model, e.timeout
            ('http://127.0.0.1:8080/v1', None, 'm', 30.0)
        """
        env = os.environ if env is None else env

        def given(name: str) -> str | None:
            value = env.get(f"{prefix}_{name}", "").strip()
            return value or None

        base_url, key, timeout = given("BASE_URL"), given("API_KEY"), given("TIMEOUT")
        seconds: float | None = None
        if timeout is not None:
            try:
                seconds = float(timeout)
            except ValueError:
                raise ConfigurationError(
                    f"{prefix}_TIMEOUT must be a number of seconds, not {timeout[:200]!r}"
                ) from None
            if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT):
                raise ConfigurationError(
                    f"{prefix}_TIMEOUT must be between 0 and {MAX_TIMEOUT:g} seconds, not {timeout[:200]!r}"
                )
        if key is not None:
            register_secret(key)  # providers may echo the key into an error message
        return cls(
            base_url=base_url,
            api_key=SecretStr(key) if key is not None else None,
            model=given("MODEL") or default_model,
            timeout=seconds,
        )
