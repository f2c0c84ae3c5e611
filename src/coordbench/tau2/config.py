"""How tau2-bench reaches a remote A2A agent: endpoint, credentials, timeout, TLS."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from coordbench.a2a import DEFAULT_TIMEOUT
from coordbench.errors import ConfigurationError, describe_validation_error
from coordbench.redaction import redact_url, register_secret

__all__ = ["LLM_ARGS_KEYS", "TOKEN_ENV", "A2AConfig"]

TOKEN_ENV = "COORDBENCH_A2A_AUTH_TOKEN"  # noqa: S105 (the variable's name, not a token)
"""Where the bearer token is read from when the command line gives none (keeps it out of ``ps``)."""

LLM_ARGS_KEYS = ("a2a_endpoint", "a2a_timeout", "a2a_verify_tls")
"""The keys of tau2's ``llm_args_agent`` that carry an :class:`A2AConfig` (never the token).

tau2 stores ``llm_args_agent`` in every results file, so the run's settings are recorded where
tau2 keeps its own, and its ``RunConfig`` needs no new field."""


class A2AConfig(BaseModel):
    """Where and how tau2's ``a2a_agent`` talks to the agent under test.

    Attributes:
        endpoint: The agent's base URL (``http`` or ``https``), where its card is served;
            stored with one trailing slash.
        auth_token: Bearer token sent with every request; kept out of results, logs and spans.
        timeout: Seconds one A2A call may take, end to end.
        verify_tls: Verify the agent's TLS certificate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str
    auth_token: SecretStr | None = None
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)
    verify_tls: bool = True

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        value = value.strip()
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"must be an http:// or https:// URL with a host, not {redact_url(value)!r}")
        return value.rstrip("/") + "/"

    @field_validator("auth_token")
    @classmethod
    def _token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("must not be empty (leave it out to send no token)")
        if value is not None:
            register_secret(value.get_secret_value())
        return value

    @classmethod
    def create(cls, **values: Any) -> A2AConfig:
        """Validate the settings, with one clear message for the first problem.

        Raises:
            ConfigurationError: A setting is missing or invalid; the message names it.
        """
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problem = describe_validation_error(exc, whole="a2a", limit=1)
            where, _, message = problem.partition(": ")
            raise ConfigurationError(f"invalid A2A setting {where.replace('_', '-')}: {message}") from None

    @classmethod
    def from_llm_args(cls, llm_args: dict[str, Any], token: str | None = None) -> A2AConfig:
        """The settings tau2 handed its agent in ``llm_args_agent`` (see :data:`LLM_ARGS_KEYS`).

        Raises:
            ConfigurationError: No endpoint, or an invalid setting.
        """
        if not llm_args.get("a2a_endpoint"):
            raise ConfigurationError(
                "a2a_agent needs an endpoint: run it with `coordbench tau2 run --a2a-endpoint URL`"
                ' or put "a2a_endpoint" in --agent-llm-args'
            )
        values: dict[str, Any] = {"endpoint": llm_args["a2a_endpoint"], "auth_token": token}
        if "a2a_timeout" in llm_args:
            values["timeout"] = llm_args["a2a_timeout"]
        if "a2a_verify_tls" in llm_args:
            values["verify_tls"] = llm_args["a2a_verify_tls"]
        return cls.create(**values)

    def llm_args(self) -> dict[str, Any]:
        """The settings as ``llm_args_agent`` entries; the token stays out."""
        return {"a2a_endpoint": self.endpoint, "a2a_timeout": self.timeout, "a2a_verify_tls": self.verify_tls}

    @property
    def token(self) -> str | None:
        """The bearer token in clear, for the Authorization header only."""
        return self.auth_token.get_secret_value() if self.auth_token is not None else None
