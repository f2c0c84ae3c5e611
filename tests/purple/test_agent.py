"""A purple agent over real A2A: message-driven per context, AgentBeats conformance, an a2a-sdk 0.3 client."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from coordbench.a2a import Messenger
from coordbench.purple import create_purple_app, team_for_shape
from coordbench.testing import LoopbackServer
from support.conformance import check_card, check_hello
from support.processes import AgentProcess

AGENTS = Path(__file__).parent.parent / "agents"


def analyst_app(url: str) -> object:
    return create_purple_app(team_for_shape("star"), "analyst", url, pace=0)


async def test_details_over_three_messages_all_reach_the_answer_and_contexts_stay_apart() -> None:
    with LoopbackServer(analyst_app) as url:
        async with Messenger(timeout=30) as messenger:
            await messenger.send(url, "Plan the launch of the mobile app.", context_id="ctx-a")
            await messenger.send(url, data={"tools": {"calendar": {"mcp": "http://127.0.0.1:9/mcp"}}},
                                 context_id="ctx-a")  # fmt: skip
            third = await messenger.send(url, "Also: the budget is 40,000 and marketing depends on design.",
                                         context_id="ctx-a")  # fmt: skip
            other = await messenger.send(url, "Review the paper on graph metrics by 2026-12-01.", context_id="ctx-b")
    assert third.state == other.state == "completed"
    # the first message's task, the second's tool details, the third's figures and risk
    assert "launch" in third.text and "calendar" in third.text and "mcp" in third.text
    assert "Figures: 40,000" in third.text and "- Also: the budget is 40,000" in third.text
    # the other context saw nothing of these
    assert "Figures: 2026-12-01" in other.text
    for word in ("launch", "calendar", "40,000"):
        assert word not in other.text


def test_the_purple_agent_passes_the_agentbeats_conformance_checks() -> None:
    with LoopbackServer(analyst_app) as url:
        card = check_card(url)
        assert card["name"] == "analyst" and card["capabilities"]["streaming"] is True
        result, events = check_hello(url)
    assert result["kind"] == "task" and result["status"]["state"] == "completed"
    assert "Analysis (analyst)" in result["artifacts"][0]["parts"][0]["text"]
    assert events[-1]["kind"] in ("status-update", "task") and events[-1]["status"]["state"] == "completed"


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["send", "streaming"])
def test_an_a2a_sdk_03_client_talks_to_a_purple_agent(
    v03_python: Path, processes: list[AgentProcess], subprocess_env: dict[str, str], mode: str
) -> None:
    env = {**subprocess_env, "OTEL_TRACES_EXPORTER": "none"}
    agent = AgentProcess([sys.executable, "-m", "coordbench", "purple", "--role", "writer", "--shape", "star",
                          "--port", "0", "--pace", "0"], env)  # fmt: skip
    processes.append(agent)
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    out = subprocess.run(
        [str(v03_python), str(AGENTS / "v03_client.py"), agent.url, mode, traceparent],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["kind"] == "task" and reply["state"] == "completed"
    assert reply["text"].startswith("Draft (writer):")


async def test_a_model_writes_the_contribution_and_the_rules_answer_when_it_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Any OpenAI-compatible endpoint (a local one over real HTTP here); a failing one falls back, said why."""
    import logging

    from coordbench.purple.llm import LLMBackend
    from support.fake_llm import FakeLLM

    llm = FakeLLM("ok", answer={"note": "the model's draft"})
    llm.start()
    try:
        backend = LLMBackend(llm.base_url, "sk-local-test", "small-model")
        with LoopbackServer(
            lambda url: create_purple_app(team_for_shape("star"), "writer", url, pace=0, llm=backend)
        ) as url:
            async with Messenger(timeout=30) as messenger:
                reply = await messenger.send(url, "Draft the launch plan.")
        assert reply.text.startswith("Writer (writer, small-model):") and "the model's draft" in reply.text
        (body,) = llm.requests
        assert body["model"] == "small-model" and "Draft the launch plan." in body["messages"][0]["content"]
        assert llm.headers[0]["authorization"] == "Bearer sk-local-test"
        llm.behaviour = "error"
        with (
            caplog.at_level(logging.WARNING, logger="coordbench.purple.llm"),
            LoopbackServer(
                lambda url: create_purple_app(team_for_shape("star"), "writer", url, pace=0, llm=backend)
            ) as url,
        ):
            async with Messenger(timeout=30) as messenger:
                fallback = await messenger.send(url, "Draft the launch plan.")
        assert fallback.text.startswith("Draft (writer):")  # the rules answered
        assert "failed" in caplog.text and "answering by the rules" in caplog.text
        assert "sk-local-test" not in caplog.text and "sk-local-test" not in fallback.text
    finally:
        llm.stop()
    assert LLMBackend.from_env({}) is None
    assert LLMBackend.from_env({"PURPLE_LLM_BASE_URL": "http://x/v1", "PURPLE_LLM_API_KEY": "k"}) is not None


@pytest.mark.parametrize(
    ("timeout", "said"),
    [
        ("soon", "PURPLE_LLM_TIMEOUT must be a number of seconds, not 'soon'"),
        ("0", "PURPLE_LLM_TIMEOUT must be between 0 and 86400 seconds, not '0'"),
        ("nan", "PURPLE_LLM_TIMEOUT must be between 0 and 86400 seconds, not 'nan'"),
        ("1e9", "PURPLE_LLM_TIMEOUT must be between 0 and 86400 seconds"),
    ],
)
def test_the_model_endpoint_is_read_in_one_place_and_a_bad_timeout_is_named(timeout: str, said: str) -> None:
    from coordbench.errors import ConfigurationError
    from coordbench.evals.config import JudgeConfig
    from coordbench.llmendpoint import LLMEndpoint
    from coordbench.purple.llm import LLMBackend

    env = {"PURPLE_LLM_BASE_URL": "http://127.0.0.1:1/v1", "PURPLE_LLM_API_KEY": "k", "PURPLE_LLM_TIMEOUT": timeout}
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        LLMBackend.from_env(env)
    backend = LLMBackend.from_env({**env, "PURPLE_LLM_TIMEOUT": "12.5", "PURPLE_LLM_MODEL": " qwen "})
    assert backend is not None and (backend.timeout, backend.model) == (12.5, "qwen")
    # the judge reads its endpoint the same way, under its own prefix
    judge = JudgeConfig.from_env({"AGENTBEATS_LLM_API_KEY": "j", "AGENTBEATS_LLM_MODEL": "m"})
    assert (judge.model, judge.api_key is not None, judge.base_url) == ("m", True, "https://api.openai.com/v1")
    assert LLMEndpoint.from_env("AGENTBEATS_LLM", {}, default_model="d").api_key is None


@pytest.mark.parametrize("tokens", ["0", "4097", "many", "-3", "1.5"])
def test_a_bad_token_budget_for_the_members_model_is_named(tokens: str) -> None:
    from coordbench.errors import ConfigurationError
    from coordbench.purple.llm import LLMBackend

    env = {"PURPLE_LLM_BASE_URL": "http://127.0.0.1:1/v1", "PURPLE_LLM_API_KEY": "k", "PURPLE_LLM_MAX_TOKENS": tokens}
    with pytest.raises(
        ConfigurationError,
        match=re.escape(f"PURPLE_LLM_MAX_TOKENS must be a whole number from 1 to 4096, got {tokens!r}"),
    ):
        LLMBackend.from_env(env)
    backend = LLMBackend.from_env({**env, "PURPLE_LLM_MAX_TOKENS": "96"})
    assert backend is not None and backend.max_tokens == 96
    assert LLMBackend.from_env({**env, "PURPLE_LLM_MAX_TOKENS": ""}).max_tokens == 400  # pyright: ignore[reportOptionalMemberAccess]
