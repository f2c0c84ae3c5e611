r"""A team built with Google ADK: an LLM coordinator whose members are remote ADK agents served over A2A.

Each member is an ADK ``LlmAgent`` served by ADK's ``to_a2a``; the coordinator is an ADK
``LlmAgent`` whose tools are its members, each an ``AgentTool`` over a ``RemoteA2aAgent`` reading
the member's card. Every agent thinks through one model reached by LiteLLM at an
OpenAI-compatible endpoint (``PURPLE_LLM_BASE_URL``, ``PURPLE_LLM_API_KEY``, ``PURPLE_LLM_MODEL``,
as the rule-based purple reads them); small models that write their tool calls as JSON text are
understood (ADK's LiteLLM adapter reads them).

Run each agent in its own process under the drop-in instrumentation, so the trace holds ADK's
own spans (``invoke_agent``, ``call_llm``, ``execute_tool``) beside ours (one span per A2A call)::

    opentelemetry-instrument python -m coordbench.purple.adk member researcher --port 9101
    opentelemetry-instrument python -m coordbench.purple.adk member writer --port 9102
    opentelemetry-instrument python -m coordbench.purple.adk coordinator --port 9100 \
        --member researcher=http://127.0.0.1:9101/ --member writer=http://127.0.0.1:9102/

Needs the ``adk`` extra (``google-adk[a2a]``).
"""

# ADK ships partial type information.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false, reportPrivateImportUsage=false

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from coordbench.errors import ConfigurationError
from coordbench.llmendpoint import LLMEndpoint
from coordbench.purple.llm import max_tokens_from_env
from coordbench.purple.roles import ROLES

__all__ = ["COORDINATOR_TOKENS", "coordinator_agent", "main", "member_agent", "model_from_env", "serve_app"]

logger = logging.getLogger(__name__)

_FORMS = {
    "researcher": "List the facts the task rests on as short bullet points, in your own words.",
    "analyst": "From what you are given, name the key terms, figures and risks as a numbered list, in new words.",
    "writer": "From the findings you are given, write the answer: a title line, then one short paragraph per "
    "point, in new words.",
    "reviewer": "Critique the draft you are given: what it covers and what it misses, as two short lists.",
}
"""What each role writes: a form of its own, so a small model adds to what it is given rather than copy it."""
COORDINATOR_TOKENS = 320
"""The fewest tokens the coordinator's model calls may take: a tool call carries the last answer on."""
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
"""ADK agent names are Python identifiers (they become tool names)."""


def model_from_env(env: Mapping[str, str] | None = None, *, least_tokens: int = 1) -> Any:
    """The LiteLLM model ``PURPLE_LLM_*`` name (``openai/<model>`` at the base URL).

    Args:
        env: Where to read ``PURPLE_LLM_*`` (default the process environment).
        least_tokens: The fewest tokens an answer may take, whatever ``PURPLE_LLM_MAX_TOKENS``
            says (a coordinator's tool call carries the last answer on: cut, it is no call).

    Raises:
        ConfigurationError: If ``PURPLE_LLM_BASE_URL`` or ``PURPLE_LLM_API_KEY`` is not set: an
            ADK agent cannot think without a model.
    """
    endpoint = LLMEndpoint.from_env("PURPLE_LLM", env, default_model="gpt-4o-mini")
    if endpoint.base_url is None or endpoint.api_key is None:
        raise ConfigurationError("an ADK team needs a model: set PURPLE_LLM_BASE_URL and PURPLE_LLM_API_KEY")
    max_tokens = max(max_tokens_from_env(env), least_tokens)
    from google.adk.models.lite_llm import LiteLlm

    return LiteLlm(
        model=f"openai/{endpoint.model}",
        api_base=endpoint.base_url,
        api_key=endpoint.api_key.get_secret_value(),
        temperature=0,
        max_tokens=max_tokens,
        timeout=endpoint.timeout if endpoint.timeout is not None else 600.0,
    )


def _checked(name: str) -> str:
    if not _NAME.match(name):
        raise ConfigurationError(f"an ADK agent's name must be a Python identifier (letters, digits, _), got {name!r}")
    return name


def member_agent(name: str, model: Any, role: str | None = None) -> Any:
    """A member: an ADK ``LlmAgent`` that does its part of what it is asked.

    Args:
        name: Its name (a Python identifier); also its role when ``role`` is not given and
            the name is one of the purple roles.
        model: The ADK model it thinks with (:func:`model_from_env`).
        role: What it does: a purple role (researcher, analyst, writer, reviewer...).
    """
    from google.adk.agents import LlmAgent

    role = role or name
    duty = ROLES.get(role, "contribute your part")
    return LlmAgent(
        name=_checked(name),
        model=model,
        description=f"The team's {role}: {duty}.",
        instruction=f"You are the {role} of a team. " + _FORMS.get(role, f"You {duty}. Answer in your own words."),
    )


def coordinator_agent(members: Mapping[str, str], model: Any, name: str = "coordinator") -> Any:
    """The coordinator: an ADK ``LlmAgent`` whose tools are its members, reached over A2A.

    Args:
        members: Each member's name and A2A base URL (its card at ``/.well-known/agent-card.json``).
        model: The ADK model it thinks with.
        name: Its own name.
    """
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
    from google.adk.agents import LlmAgent
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
    from google.adk.tools.agent_tool import AgentTool

    if not members:
        raise ConfigurationError("an ADK coordinator needs at least one member")
    tools: list[Any] = [
        AgentTool(
            RemoteA2aAgent(
                name=_checked(member),
                description=f"The team's {member}: {ROLES.get(member, 'a member of the team')}.",
                agent_card=url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH,
            )
        )
        for member, url in members.items()
    ]
    ledger = _Ledger(list(members))
    return LlmAgent(
        name=_checked(name),
        model=model,
        description="Coordinates the team: asks each member in turn and answers with their work.",
        instruction=ledger,
        before_model_callback=ledger.finish,
        tools=tools,
    )


class _Ledger:
    """The coordinator's instruction for its next model call: who has answered, whom to ask now.

    A planner with a ledger (as Magentic-One's orchestrator keeps one): the model is told the
    state of the work and decides the call itself; it makes the call, writes its request and
    reads the answers.
    """

    def __init__(self, members: list[str]) -> None:
        self.members = members

    @staticmethod
    def _answers(context: Any) -> list[Any]:
        """This invocation's answers from members so far (function responses), oldest first."""
        return [
            response
            for event in context.session.events
            if event.invocation_id == context.invocation_id
            for response in event.get_function_responses()
        ]

    def __call__(self, context: Any) -> str:
        answered = [response.name for response in self._answers(context)]
        waiting = [m for m in self.members if m not in answered]
        head = "You are the coordinator of a team. You never do the work yourself: your team's tools do it. "
        if not waiting:  # not asked: finish() answers without the model
            return head + "Every member has answered. Reply with the last answer."
        done = f"Already answered: {', '.join(answered)}. " if answered else ""
        return (
            head
            + done
            + (
                f"Now call the tool {waiting[0]} once. Its request must state the user's task"
                + (" and carry what the last member answered." if answered else ".")
            )
        )

    def finish(self, callback_context: Any, llm_request: Any) -> Any:
        """Once every member has answered, the team's answer is the last one (no model call).

        ADK calls this before each model call; returning a response skips the model.
        """
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        del llm_request  # ADK passes it; the answer does not depend on it
        answers = self._answers(callback_context)
        if {a.name for a in answers} < set(self.members) or not answers:
            return None
        last = answers[-1].response or {}
        text = str(last.get("result", last)) if isinstance(last, dict) else str(last)
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def serve_app(agent: Any, url: str) -> Any:
    """The agent as an ASGI app (ADK's ``to_a2a``) with its card's address at ``url``."""
    from urllib.parse import urlsplit

    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    from coordbench.tau2.service import quiet_experimental_warnings

    quiet_experimental_warnings()
    parts = urlsplit(url)
    return to_a2a(agent, host=parts.hostname or "127.0.0.1", port=parts.port or 80, lifespan=_close_model_clients)


@contextlib.asynccontextmanager
async def _close_model_clients(_app: Any) -> AsyncGenerator[None]:
    """At shutdown, close the HTTP sessions litellm opened on this server's event loop."""
    try:
        yield
    finally:
        import litellm

        await litellm.close_litellm_async_clients()


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {value!r}")
    return int(value)


def _member(value: str) -> tuple[str, str]:
    name, sep, url = value.partition("=")
    if not sep or not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"expected NAME=URL (an http(s) URL), got {value!r}")
    return name, url


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m coordbench.purple.adk member NAME --port P`` or ``coordinator --member NAME=URL ...``."""
    summary = (__doc__ or "").splitlines()[0]
    parser = argparse.ArgumentParser(prog="python -m coordbench.purple.adk", description=summary)
    sub = parser.add_subparsers(dest="kind", required=True)
    member = sub.add_parser("member", help="serve one member")
    member.add_argument("name")
    member.add_argument("--role", help="its role (default: its name)")
    coordinator = sub.add_parser("coordinator", help="serve the coordinator")
    coordinator.add_argument("--name", default="coordinator")
    coordinator.add_argument("--member", type=_member, action="append", required=True, metavar="NAME=URL")
    for each in (member, coordinator):
        each.add_argument("--host", default="127.0.0.1")
        each.add_argument("--port", type=_port, default=0, help="default: a free port")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.kind == "member":
            agent = member_agent(args.name, model_from_env(), args.role)
        else:
            agent = coordinator_agent(dict(args.member), model_from_env(least_tokens=COORDINATOR_TOKENS), args.name)
    except ConfigurationError as exc:
        parser.exit(2, f"error: {exc}\n")
    import socket

    import uvicorn

    from coordbench.server.loopback import AnnouncingServer

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        parser.exit(2, f"error: cannot bind {args.host}:{args.port}: {exc.strerror or exc}\n")
    url = f"http://{args.host}:{sock.getsockname()[1]}/"

    def announce() -> None:
        print(f"READY {url}", flush=True)  # whoever started it reads it

    server = AnnouncingServer(uvicorn.Config(serve_app(agent, url), log_level="warning"), announce=announce)
    server.run(sockets=[sock])
    sys.exit(0 if server.started else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
