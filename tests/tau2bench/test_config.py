"""A2AConfig: what tau2's a2a_agent accepts as an endpoint, a token, a timeout; and what it refuses."""

from __future__ import annotations

import pytest

from coordbench.errors import ConfigurationError
from coordbench.tau2.config import A2AConfig


def test_endpoints_are_normalised_and_settings_kept() -> None:
    config = A2AConfig.create(endpoint=" https://agents.example.org/team///", auth_token="t0k", timeout=12.5)
    assert config.endpoint == "https://agents.example.org/team/"
    assert (config.token, config.timeout, config.verify_tls) == ("t0k", 12.5, True)
    assert A2AConfig.create(endpoint="http://127.0.0.1:9019").endpoint == "http://127.0.0.1:9019/"
    assert A2AConfig.create(endpoint="http://h/").timeout == 300


def test_the_token_never_shows_and_never_goes_to_tau2s_configs() -> None:
    config = A2AConfig.create(endpoint="http://h/", auth_token="s3cret")
    assert "s3cret" not in repr(config) and "s3cret" not in str(config.model_dump())
    assert config.llm_args() == {"a2a_endpoint": "http://h/", "a2a_timeout": 300.0, "a2a_verify_tls": True}
    back = A2AConfig.from_llm_args({**config.llm_args(), "num_retries": 3, "api_key": "x"}, token="s3cret")
    assert back == config


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"endpoint": "ftp://h/"}, "invalid A2A setting endpoint: must be an http:// or https:// URL with a host"),
        ({"endpoint": "h:8080"}, "invalid A2A setting endpoint: must be an http:// or https:// URL"),
        ({"endpoint": "http://"}, "invalid A2A setting endpoint"),
        ({"endpoint": "http://u:pw@h/x", "timeout": 0}, "invalid A2A setting timeout: Input should be greater than 0"),
        ({"endpoint": "http://h/", "timeout": -1}, "invalid A2A setting timeout"),
        ({"endpoint": "http://h/", "auth_token": "  "}, "invalid A2A setting auth-token: must not be empty"),
        ({"endpoint": "http://h/", "retries": 2}, "invalid A2A setting retries: Extra inputs are not permitted"),
        ({}, "invalid A2A setting endpoint: Field required"),
    ],
)
def test_bad_settings_are_named(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match="^" + message.replace("(", r"\(")) as caught:
        A2AConfig.create(**values)
    assert "pw" not in str(caught.value)


def test_an_agent_without_an_endpoint_says_how_to_give_one() -> None:
    with pytest.raises(
        ConfigurationError, match=r"a2a_agent needs an endpoint: run it with `coordbench tau2 run --a2a"
    ):
        A2AConfig.from_llm_args({"temperature": 0})
