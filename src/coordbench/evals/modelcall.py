"""One way to ask the configured model for JSON: the judge's and attribution's ranking call.

Any OpenAI-compatible endpoint (``AGENTBEATS_LLM_*``, :class:`~coordbench.evals.config.JudgeConfig`),
temperature 0, a fixed seed, a strict JSON schema for the answer. Everything that can go wrong
(no answer in time, an HTTP error, an unreachable endpoint, a refusal, an answer cut at the
token bound or not JSON) is one :class:`ModelUnavailableError` saying why, with no secret in it.
"""

from __future__ import annotations

from typing import Any, cast

from coordbench import jsontext
from coordbench.errors import CoordbenchError
from coordbench.evals.config import JudgeConfig
from coordbench.redaction import redact_url

__all__ = ["ModelUnavailableError", "ask_json"]


class ModelUnavailableError(CoordbenchError):
    """The model could not give a valid answer (the message says why)."""

    default_message = "the model is unavailable"


async def ask_json(config: JudgeConfig, messages: list[dict[str, str]], *, name: str, schema: dict[str, Any]) -> object:
    """The model's answer to ``messages``, parsed from JSON (not yet validated against ``schema``).

    Args:
        config: The endpoint; its key must be set.
        messages: Chat messages.
        name: The schema's name (the endpoint may show it).
        schema: The answer's JSON schema, sent in strict mode.

    Raises:
        ModelUnavailableError: If no usable JSON answer came back (the message says why).
    """
    import openai

    assert config.api_key is not None  # noqa: S101 - checked by the caller
    client = openai.AsyncOpenAI(
        api_key=config.api_key.get_secret_value(), base_url=config.base_url, timeout=config.timeout, max_retries=1
    )
    try:
        response = await client.chat.completions.create(
            model=config.model,
            messages=cast("Any", messages),
            temperature=0,
            seed=0,
            max_tokens=config.max_output_tokens,
            response_format=cast(
                "Any", {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
            ),
        )
    except openai.APITimeoutError as exc:
        raise ModelUnavailableError(f"the endpoint timed out after {config.timeout:g} s") from exc
    except openai.APIStatusError as exc:
        raise ModelUnavailableError(f"the endpoint answered HTTP {exc.status_code}") from exc
    except openai.APIConnectionError as exc:
        raise ModelUnavailableError(f"the endpoint is unreachable ({redact_url(config.base_url)})") from exc
    finally:
        await client.close()
    if not response.choices:
        raise ModelUnavailableError("the endpoint returned no choices")
    choice = response.choices[0]
    content = choice.message.content
    if not content:
        refusal = getattr(choice.message, "refusal", None)
        raise ModelUnavailableError(f"the model refused: {refusal}" if refusal else "the model returned no content")
    if choice.finish_reason == "length":
        raise ModelUnavailableError(f"the answer was cut at {config.max_output_tokens} tokens")
    try:
        return jsontext.loads(content)
    except ValueError as exc:
        raise ModelUnavailableError(f"the answer is not JSON: {exc}") from exc
