"""tau2 evaluations offered over A2A: a Google ADK agent with the tools ``list_domains`` and ``run_tau2_evaluation``.

Served with ADK's ``to_a2a`` (``coordbench tau2 serve``, :func:`service_app`) or by ADK's own
``adk api_server --a2a`` / ``adk web --a2a`` from the shipped folder
``coordbench/tau2/adk_agents`` (:data:`AGENTS_DIR`). ADK maps each A2A context id to an ADK
session; each request runs in its own invocation, and each evaluation writes its own files.

Without a model the agent routes by rule, so the service works without a key: a data part (or
JSON text) ``{"tool": "run_tau2_evaluation", "args": {...}}`` or ``{"tool": "list_domains"}``,
or plain text (``list domains``; ``evaluate http://agent:9019/ on mock``). With
``COORDBENCH_TAU2_SERVICE_LLM`` (a litellm model name, with ``..._API_BASE``), a model chooses
the tools instead. An evaluation of an A2A agent runs tau2's ``a2a_agent``
(:func:`coordbench.tau2.runner.evaluate`); the run reports progress while it goes, and its
result comes back as an artifact with one data part: rewards, pass^k, per-task results and the
protocol metrics.

Secrets stay out of requests, which are kept in sessions, traces and tau2's results: the user
simulator's key comes from the service's environment, where litellm reads it
(``OPENAI_API_KEY``...; tau2 would write a key given in its arguments into its results), and the
target agent's token is named by one of the service's environment variables (``agent_token_env``).
"""

# ADK and tau2 ship partial or no type information.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false, reportIncompatibleMethodOverride=false, reportPrivateImportUsage=false

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from a2a.types import AgentCard, AgentSkill
from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types

from coordbench.a2a import AgentCallError, build_agent_card
from coordbench.errors import ConfigurationError
from coordbench.jsontext import integral_ints
from coordbench.redaction import redact_url
from coordbench.tau2.config import A2AConfig

__all__ = [
    "AGENTS_DIR",
    "SERVICE_NAME",
    "EvaluationRequestError",
    "Tau2ServiceAgent",
    "build_agent",
    "list_domains",
    "quiet_experimental_warnings",
    "run_tau2_evaluation",
    "service_app",
    "service_card",
]

logger = logging.getLogger(__name__)

SERVICE_NAME = "tau2_evaluator"
"""The agent's name: its ADK app name and the name on its card."""
AGENTS_DIR = Path(__file__).parent / "adk_agents"
"""The folder for ``adk api_server --a2a`` / ``adk web --a2a``."""
RESULTS_ENV = "COORDBENCH_TAU2_RESULTS_DIR"
"""Where evaluations write tau2's files (default ``output/tau2``)."""
USER_LLM_ENV = "COORDBENCH_TAU2_USER_LLM"
"""The user simulator's model when a request names none."""
SERVICE_LLM_ENV = "COORDBENCH_TAU2_SERVICE_LLM"
"""A litellm model name: when set, a model routes requests to the tools instead of the rules."""
PROGRESS_INTERVAL = 1.0
"""Seconds between progress reports of a running evaluation."""
MAX_TRIALS = 10


class EvaluationRequestError(ConfigurationError):
    """A request to the service cannot be run as given."""


def list_domains() -> dict[str, Any]:
    """List the tau2 domains that can be evaluated, with their task sets.

    Returns:
        ``{"domains": [...], "task_sets": [...]}``.
    """
    from tau2.run import get_options

    options = get_options()
    return {"domains": list(options.domains), "task_sets": list(options.task_sets)}


def _count_saved(results: Path) -> int:
    try:
        return len(json.loads(results.read_text(encoding="utf-8")).get("simulations", []))
    except (OSError, ValueError):
        return 0


def _secret_from(env: str | None, what: str) -> str | None:
    if not env:
        return None
    value = os.environ.get(env)
    if not value:
        raise EvaluationRequestError(f"{what}: the service's environment has no variable {env!r}")
    return value


def _prepare(args: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Check a ``run_tau2_evaluation`` request (reads the domain's tasks: run it off the event loop).

    Returns:
        The keyword arguments of :func:`~coordbench.tau2.runner.evaluate`, and how many
        simulations the run will make.
    """
    known = {
        "domain",
        "agent_endpoint",
        "user_llm",
        "user_llm_args",
        "agent_token_env",
        "agent_timeout",
        "num_trials",
        "task_ids",
        "num_tasks",
        "max_steps",
        "max_concurrency",
    }
    unknown = sorted(set(args) - known)
    if unknown:
        raise EvaluationRequestError(
            f"unknown argument(s) {', '.join(unknown)}; expected some of {', '.join(sorted(known))}"
        )
    domain = args.get("domain")
    domains = list_domains()["domains"]
    if not isinstance(domain, str) or domain not in domains:
        raise EvaluationRequestError(f"domain must be one of {', '.join(domains)}, not {domain!r}")
    if not args.get("agent_endpoint"):
        raise EvaluationRequestError("agent_endpoint is required: the A2A agent to evaluate (its base URL)")
    user_llm = args.get("user_llm") or os.environ.get(USER_LLM_ENV)
    if not user_llm:
        raise EvaluationRequestError(
            f"user_llm is required (a litellm model name), or set {USER_LLM_ENV} for the service"
        )
    user_llm_args = args.get("user_llm_args") or {}
    if not isinstance(user_llm_args, dict):
        raise EvaluationRequestError("user_llm_args must be a JSON object")
    if {"api_key", "key", "token"} & set(user_llm_args):
        raise EvaluationRequestError(
            "user_llm_args must not carry a key: the service's environment provides it (OPENAI_API_KEY...)"
        )
    for name, low, high in (("num_trials", 1, MAX_TRIALS), ("num_tasks", 1, 10_000), ("max_steps", 1, 1000)):
        value = args.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high):
            raise EvaluationRequestError(f"{name} must be an integer from {low} to {high}, not {value!r}")
    concurrency = args.get("max_concurrency", 1)
    if not isinstance(concurrency, int) or not 1 <= concurrency <= 8:
        raise EvaluationRequestError(f"max_concurrency must be an integer from 1 to 8, not {concurrency!r}")
    task_ids = args.get("task_ids")
    if task_ids is not None and (not isinstance(task_ids, list) or not all(isinstance(t, str) for t in task_ids)):
        raise EvaluationRequestError("task_ids must be a list of task id strings")
    from tau2.run import get_tasks

    existing = [task.id for task in get_tasks(domain)]  # the domain's tasks, read once per request
    missing = [t for t in task_ids or [] if t not in existing]
    if missing:
        raise EvaluationRequestError(f"domain {domain} has no task(s) {', '.join(missing)}")
    num_tasks = args.get("num_tasks")
    tasks = len(task_ids) if task_ids else min(num_tasks or len(existing), len(existing))
    num_trials = args.get("num_trials") or 1
    values: dict[str, Any] = {"endpoint": args["agent_endpoint"]}
    values["auth_token"] = _secret_from(args.get("agent_token_env"), "agent_token_env")
    if args.get("agent_timeout") is not None:
        values["timeout"] = args["agent_timeout"]
    prepared = {
        "config": A2AConfig.create(**values),
        "domain": domain,
        "user_llm": user_llm,
        "user_llm_args": user_llm_args,
        "task_ids": task_ids or None,
        "num_tasks": num_tasks,
        "num_trials": num_trials,
        "max_steps": args.get("max_steps") or 50,
        "max_concurrency": concurrency,
    }
    return prepared, tasks * num_trials


async def _evaluate(args: dict[str, Any], progress: asyncio.Queue[str] | None = None) -> dict[str, Any]:
    from coordbench.tau2.runner import evaluate

    prepared, total = await asyncio.to_thread(_prepare, args)
    results_dir = Path(os.environ.get(RESULTS_ENV) or "output/tau2")
    save_to = f"{prepared['domain']}_{uuid.uuid4().hex[:12]}"
    results = results_dir / f"{save_to}.json"
    job = asyncio.ensure_future(asyncio.to_thread(evaluate, results_dir=results_dir, save_to=save_to, **prepared))
    done = 0
    while not job.done():
        await asyncio.wait({job}, timeout=PROGRESS_INTERVAL)
        saved = _count_saved(results)
        if progress is not None and saved != done and not job.done():
            done = saved
            await progress.put(f"tau2 {prepared['domain']}: {done}/{total} simulations done")
    return job.result()


async def run_tau2_evaluation(
    domain: str,
    agent_endpoint: str,
    user_llm: str | None = None,
    user_llm_args: dict[str, Any] | None = None,
    num_trials: int = 1,
    task_ids: list[str] | None = None,
    num_tasks: int | None = None,
    agent_token_env: str | None = None,
) -> dict[str, Any]:
    """Evaluate an A2A agent with tau2-bench: tau2 plays the user and runs the tools, the agent answers.

    Args:
        domain: The tau2 domain (see list_domains), e.g. mock, airline, retail, telecom.
        agent_endpoint: The A2A agent's base URL (where its agent card is served).
        user_llm: The user simulator's model, a litellm name such as openai/gpt-4.1-mini.
        user_llm_args: Its settings, e.g. {"api_base": "http://host:8000/v1", "temperature": 0}.
        num_trials: Runs per task (1 to 10); pass^k is computed for k up to this.
        task_ids: The tasks to run (default: all tasks of the domain, or num_tasks of them).
        num_tasks: How many tasks to run when task_ids is not given.
        agent_token_env: Name of the service's environment variable holding the agent's bearer token.

    Returns:
        The average reward, pass^k, each task's reward and termination, and the A2A protocol metrics.
    """
    args = {k: v for k, v in locals().items() if v is not None}
    return await _evaluate(args)


_TOOLS = frozenset({"list_domains", "run_tau2_evaluation"})
_URL = re.compile(r"https?://[^\s\"'<>]+")
_DATAPART = re.compile(rb"<a2a_datapart_json>(.*?)</a2a_datapart_json>", re.S)


def _request_of(content: types.Content | None, domains: list[str]) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments a message asks for, by rule; ``None`` when it asks for neither."""
    texts: list[str] = []
    values: list[Any] = []
    for part in (content.parts if content is not None else None) or []:
        if part.text:
            texts.append(part.text)
            with contextlib.suppress(ValueError):
                values.append(json.loads(part.text))
        elif part.inline_data is not None and part.inline_data.data:
            values.extend(integral_ints(json.loads(m)) for m in _DATAPART.findall(part.inline_data.data))
    for value in values:
        if isinstance(value, dict):
            asked: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            tool = asked.get("tool")
            if tool in _TOOLS:
                arguments = asked.get("args", {})
                return str(tool), arguments if isinstance(arguments, dict) else {"invalid": arguments}
    text = " ".join(texts)
    lowered = text.lower()
    urls = _URL.findall(text)
    if urls:
        named = [d for d in domains if re.search(rf"\b{re.escape(d)}\b", lowered)]
        return "run_tau2_evaluation", {"agent_endpoint": urls[0], **({"domain": named[0]} if named else {})}
    if "domain" in lowered:
        return "list_domains", {}
    return None


_HELP = (
    "I run tau2-bench evaluations of A2A agents. Send a data part "
    '{"tool": "run_tau2_evaluation", "args": {"domain": "mock", "agent_endpoint": "http://host:port/", '
    '"user_llm": "openai/gpt-4.1-mini", "num_tasks": 2}} or {"tool": "list_domains"}, '
    "or write 'list domains' or 'evaluate http://host:port/ on mock'."
)


def _datapart(value: dict[str, Any]) -> types.Part:
    """A part ADK's A2A converter turns into an A2A data part."""
    body = json.dumps(value, sort_keys=True).encode()
    return types.Part(
        inline_data=types.Blob(mime_type="text/plain", data=b"<a2a_datapart_json>" + body + b"</a2a_datapart_json>")
    )


class Tau2ServiceAgent(BaseAgent):
    """Routes each message to ``list_domains`` or ``run_tau2_evaluation`` by rule (no model needed)."""

    def _event(self, ctx: InvocationContext, *parts: types.Part, **fields: Any) -> Event:
        content = types.Content(role="model", parts=list(parts)) if parts else None
        return Event(author=self.name, invocation_id=ctx.invocation_id, content=content, **fields)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event]:
        """Answer one message: a tool's result as a data part, progress while an evaluation runs."""
        domains = list_domains()["domains"]
        asked = _request_of(ctx.user_content, domains)
        if asked is None:
            yield self._event(ctx, types.Part(text=_HELP))
            return
        tool, args = asked
        if tool == "list_domains":
            yield self._event(ctx, types.Part(text="tau2 domains: " + ", ".join(domains)), _datapart(list_domains()))
            return
        progress: asyncio.Queue[str] = asyncio.Queue()
        job = asyncio.ensure_future(_evaluate(args, progress))
        try:
            while not job.done() or not progress.empty():
                waiter = asyncio.ensure_future(progress.get())
                await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
                if waiter.done():
                    yield self._event(ctx, types.Part(text=waiter.result()))
                else:
                    waiter.cancel()
            result = job.result()
        except (ConfigurationError, AgentCallError) as exc:
            logger.warning("refused an evaluation request: %s", exc)
            yield self._event(ctx, error_code="INVALID_ARGUMENT", error_message=str(exc))
            return
        finally:
            if not job.done():
                job.cancel()
        summary = (
            f"tau2 {result['domain']} with {result['agent']}: average reward {result['avg_reward']}, "
            f"{len(result['tasks'])} simulations"
        )
        yield self._event(ctx, types.Part(text=summary), _datapart(result))


def build_agent() -> BaseAgent:
    """The service's root agent: a model choosing the tools when ``COORDBENCH_TAU2_SERVICE_LLM`` is set, else rules."""
    model = os.environ.get(SERVICE_LLM_ENV)
    if not model:
        return Tau2ServiceAgent(name=SERVICE_NAME, description="Runs tau2-bench evaluations of A2A agents.")
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm

    llm = LiteLlm(model=model, api_base=os.environ.get(f"{SERVICE_LLM_ENV}_API_BASE"))
    return LlmAgent(
        name=SERVICE_NAME,
        model=llm,
        description="Runs tau2-bench evaluations of A2A agents.",
        instruction=(
            "You run tau2-bench evaluations. Use list_domains to say which domains exist, and "
            "run_tau2_evaluation to evaluate an A2A agent; report the average reward and pass^k."
        ),
        tools=[list_domains, run_tau2_evaluation],
    )


def service_card(url: str) -> AgentCard:
    """The service's agent card: its two tools as skills, with their parameters.

    Args:
        url: Where the service answers JSON-RPC (``http://host:port/`` for ``coordbench tau2
            serve``, ``http://host:port/a2a/tau2_evaluator`` under ``adk api_server --a2a``).
    """
    skills = [
        AgentSkill(
            id="list_domains",
            name="list_domains",
            description="List the tau2 domains (and task sets) that can be evaluated. No parameters. "
            'Call with a data part {"tool": "list_domains"}.',
            tags=["tau2", "benchmark"],
            examples=["list domains"],
        ),
        AgentSkill(
            id="run_tau2_evaluation",
            name="run_tau2_evaluation",
            description=(
                "Evaluate an A2A agent with tau2-bench (tau2 simulates the user and runs the tools). "
                'Call with a data part {"tool": "run_tau2_evaluation", "args": {...}}. Parameters: '
                "domain (string, required: mock, airline, retail, telecom...); agent_endpoint (string, "
                "required: the agent's base URL); user_llm (string: litellm model of the user simulator); "
                "user_llm_args (object: api_base, temperature...); num_trials (integer 1-10); task_ids "
                "(list of strings); num_tasks (integer); max_steps (integer); max_concurrency (integer 1-8); "
                "agent_token_env (name of the service's environment variable holding the agent's bearer token; "
                "the user LLM's key comes from the service's environment). Returns an artifact with a data part: "
                "avg_reward, pass_hat_k, tasks, protocol_metrics."
            ),
            tags=["tau2", "benchmark", "a2a"],
            examples=["evaluate http://127.0.0.1:9019/ on mock"],
        ),
    ]
    card = build_agent_card(
        SERVICE_NAME,
        url,
        description="tau2-bench evaluations of A2A agents, offered over A2A",
        skills=skills,
        streaming=True,
        trace_extensions=False,
    )
    # ADK mounts JSON-RPC only, at exactly ``url`` (``adk api_server`` redirects ``.../name/``)
    jsonrpc = [i for i in card.supported_interfaces if i.protocol_binding == "JSONRPC"]
    for interface in jsonrpc:
        interface.url = url
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(jsonrpc)
    return card


def service_app(url: str) -> Any:
    """The service as an ASGI app (ADK's ``to_a2a``) serving :func:`service_card` for ``url``."""
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    quiet_experimental_warnings()
    logger.info("tau2 evaluation service at %s", redact_url(url))
    return to_a2a(build_agent(), agent_card=service_card(url), lifespan=_close_model_clients)


@contextlib.asynccontextmanager
async def _close_model_clients(_app: Any) -> AsyncGenerator[None]:
    """At shutdown, close the HTTP sessions litellm opened on this server's event loop (model path)."""
    try:
        yield
    finally:
        if os.environ.get(SERVICE_LLM_ENV):
            import litellm

            await litellm.close_litellm_async_clients()


def quiet_experimental_warnings() -> None:
    """Silence ADK's notice, repeated on every request, that its A2A support is experimental."""
    import warnings

    warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)
