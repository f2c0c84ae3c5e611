"""An optional model behind a purple agent: any OpenAI-compatible endpoint, the rules when it fails.

Configured by ``PURPLE_LLM_BASE_URL``, ``PURPLE_LLM_API_KEY`` and ``PURPLE_LLM_MODEL`` (a local
server needs no real key: any non-empty value). Each call is an LLM step in the trace. Whatever
goes wrong (unreachable, timeout, HTTP error, empty answer) is logged with the reason and the
agent answers by its rules instead, so a team never fails because its model did.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from coordbench.errors import ConfigurationError
from coordbench.instrument import llm_step
from coordbench.llmendpoint import LLMEndpoint
from coordbench.purple.roles import ROLES, Work
from coordbench.redaction import redact, register_secret

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = ["DEFAULT_MAX_TOKENS", "LLMBackend", "max_tokens_from_env"]

logger = logging.getLogger(__name__)

_MAX_PROMPT = 12_000
DEFAULT_MAX_TOKENS = 400
"""Most tokens a member's contribution may take unless ``PURPLE_LLM_MAX_TOKENS`` says otherwise."""


def max_tokens_from_env(env: Mapping[str, str] | None = None) -> int:
    """``PURPLE_LLM_MAX_TOKENS`` (1 to 4096), else :data:`DEFAULT_MAX_TOKENS`.

    Raises:
        ConfigurationError: (a ValueError) If it is set and not a whole number from 1 to 4096.
    """
    raw = (os.environ if env is None else env).get("PURPLE_LLM_MAX_TOKENS", "").strip()
    if raw and not (raw.isdigit() and 1 <= int(raw) <= 4096):
        raise ConfigurationError(f"PURPLE_LLM_MAX_TOKENS must be a whole number from 1 to 4096, got {raw!r}")
    return int(raw) if raw else DEFAULT_MAX_TOKENS


class LLMBackend:
    """Writes a role's contribution with a model.

    Args:
        base_url: The OpenAI-compatible endpoint (``.../v1``).
        api_key: Its key.
        model: The model name.
        timeout: Seconds per call.
        max_tokens: Most tokens a contribution may take.
    """

    def __init__(
        self, base_url: str, api_key: str, model: str, *, timeout: float = 60.0, max_tokens: int = 400
    ) -> None:
        self.base_url = base_url
        self.max_tokens = max_tokens
        self._api_key = api_key
        register_secret(api_key)  # providers may echo the key into an error message
        self.model = model
        self.timeout = timeout

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LLMBackend | None:
        """The backend ``PURPLE_LLM_*`` configure, or ``None`` (rules only).

        ``PURPLE_LLM_BASE_URL`` and ``PURPLE_LLM_API_KEY`` turn it on; ``PURPLE_LLM_MODEL``
        (default ``gpt-4o-mini``) and ``PURPLE_LLM_TIMEOUT`` (seconds per call, default 60: a
        local server with one slot answers a team's calls one at a time) and ``PURPLE_LLM_MAX_TOKENS``
        (most tokens a contribution may take, 1 to 4096, default 400) tune it.

        Raises:
            ConfigurationError: (a ValueError) If ``PURPLE_LLM_TIMEOUT`` is not a number of seconds
                in (0, 86400], or ``PURPLE_LLM_MAX_TOKENS`` not a whole number from 1 to 4096.
        """
        endpoint = LLMEndpoint.from_env("PURPLE_LLM", env, default_model="gpt-4o-mini")
        if endpoint.base_url is None or endpoint.api_key is None:
            return None
        timeout = endpoint.timeout if endpoint.timeout is not None else 60.0
        return cls(endpoint.base_url, endpoint.api_key.get_secret_value(), endpoint.model, timeout=timeout,
                   max_tokens=max_tokens_from_env(env))  # fmt: skip

    async def contribute(self, role: str, name: str, work: Work) -> str | None:
        """The model's contribution, or ``None`` after logging why it could not give one."""
        prompt = (
            f"You are {name}, the {role} of a team of agents: you {ROLES.get(role, 'contribute')}.\n"
            f"Task: {work.task}\nYou were asked: {work.asked}\n"
            + "".join(f"\nFrom {agent}:\n{text}\n" for agent, text in work.inputs.items())
            + "".join(f"\nEarlier in this conversation:\n{text}\n" for text in work.context)
        )[:_MAX_PROMPT]
        text = await self._ask(prompt, self.max_tokens, name, "answering")
        if text == "":
            logger.warning("%s: the model at %s answered nothing: answering by the rules", name, redact(self.base_url))
        if not text:
            return None
        return f"{role.capitalize()} ({name}, {self.model}):\n{text}"

    async def choose(self, name: str, task: str, seen: list[str], candidates: list[str]) -> str | None:
        """The member the model picks to ask next, on what the conversation holds; ``None`` if it cannot tell.

        One LLM step, recording the prompt and the answer as the instrumentation records messages.
        """
        prompt = (
            f"You are {name}, coordinating a team of agents on this task: {task}\n"
            + "".join(f"\n{text}\n" for text in seen[1:])
            + f"\nWho should work next? Answer with one name only, one of: {', '.join(candidates)}."
        )[-_MAX_PROMPT:]
        said = (await self._ask(prompt, 16, name, "choosing") or "").lower()
        found = sorted((said.find(c.lower()), c) for c in candidates if c.lower() in said)
        return found[0][1] if found else None

    async def _ask(self, prompt: str, max_tokens: int, name: str, fallback: str) -> str | None:
        """One LLM step: the model's answer to ``prompt`` ("" if empty), ``None`` after logging why it failed."""
        import openai

        client = openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
        try:
            async with llm_step(self.model) as step:
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=cast("Any", [{"role": "user", "content": prompt}]),
                    temperature=0,
                    max_tokens=max_tokens,
                )
                usage = response.usage
                if usage is not None:
                    step.set_usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
                step.record_messages(prompt, _text(response))
        except openai.OpenAIError as exc:
            logger.warning("%s: the model at %s failed (%s): %s by the rules", name, redact(self.base_url),
                           redact(str(exc)), fallback)  # fmt: skip
            return None
        finally:
            await client.close()
        return _text(response)


def _text(response: ChatCompletion) -> str:
    """The first choice's text of a chat completion, stripped ("" when there is none)."""
    return (response.choices[0].message.content or "").strip() if response.choices else ""
