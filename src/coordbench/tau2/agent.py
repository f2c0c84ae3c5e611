"""``a2a_agent``: a tau2 agent that is a remote A2A agent.

tau2 builds one agent per simulation (one task, one trial) through its registry, with the
signature of its ``LLMAgent`` (tools, policy, model, ``llm_args``), which is the only one its
runner accepts for a registered agent. :class:`A2AAgent` therefore subclasses ``LLMAgent`` and
reads its settings from ``llm_args`` (:data:`~coordbench.tau2.config.LLM_ARGS_KEYS`); the
token and the run's metrics book come from the run it belongs to (:func:`open_run`).

Each simulation is one A2A conversation: a context id of its own, kept across its turns and
never shared with another task, also when tau2 runs tasks side by side. Tools run in tau2:
the agent only names them. When the agent asks for a tool that does not exist or gives
arguments that are not a JSON object, it is told so in the same conversation and asked again
(at most :data:`MAX_CORRECTIONS` times). When the exchange itself fails, the simulation ends
with an ``agent_stop`` whose message says why, and tau2 scores what was done (an agent that
did nothing gets reward 0), instead of the run crashing.
"""

# tau2 ships no type information: its classes and fields are untyped to pyright.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false, reportUnknownParameterType=false, reportIncompatibleMethodOverride=false
# pyright: reportUnknownLambdaType=false

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.types import Part
from opentelemetry import context as otel_context
from tau2.agent.llm_agent import LLMAgent, LLMAgentState
from tau2.data_model.message import AssistantMessage, Message, MultiToolMessage, ToolMessage, UserMessage
from tau2.environment.tool import Tool

from coordbench.a2a import AgentCallError, Reply
from coordbench.redaction import redact_urls_in
from coordbench.tau2.bridge import BRIDGE
from coordbench.tau2.config import TOKEN_ENV, A2AConfig
from coordbench.tau2.metrics import MetricsBook, RequestMetrics
from coordbench.tau2.translate import ParsedReply, encode_request, instructions_text, parse_reply

__all__ = [
    "AGENT_NAME",
    "MAX_CORRECTIONS",
    "A2AAgent",
    "A2AAgentState",
    "Run",
    "close_run",
    "open_run",
    "register",
]

logger = logging.getLogger(__name__)

AGENT_NAME = "a2a_agent"
"""The agent's name in tau2's registry (``--agent a2a_agent``)."""
MAX_CORRECTIONS = 2
"""How many times one turn tells the agent its tool call cannot be used and asks again."""

_FAILED_STATES = {"failed", "rejected", "canceled"}


@dataclass
class Run:
    """One tau2 run through ``a2a_agent``: its token, metrics and trace.

    Attributes:
        run_id: Passed to the agents in ``llm_args["a2a_run"]``.
        token: The bearer token (kept out of tau2's configs and results).
        book: Where the agents record each request.
        parent: The OpenTelemetry context the A2A spans of the run belong to.
    """

    run_id: str
    token: str | None = None
    book: MetricsBook = field(default_factory=MetricsBook)
    parent: otel_context.Context | None = None


_RUNS: dict[str, Run] = {}
_RUNS_LOCK = threading.Lock()
_DEFAULT_RUN = Run("default")


def open_run(token: str | None = None, parent: otel_context.Context | None = None) -> Run:
    """Start a run; put ``run.run_id`` in ``llm_args_agent["a2a_run"]``."""
    run = Run(uuid.uuid4().hex, token, parent=parent)
    with _RUNS_LOCK:
        _RUNS[run.run_id] = run
    return run


def close_run(run: Run) -> None:
    """Forget a run (its agents can no longer find it)."""
    with _RUNS_LOCK:
        _RUNS.pop(run.run_id, None)


def _run_of(llm_args: dict[str, Any]) -> Run:
    with _RUNS_LOCK:
        return _RUNS.get(str(llm_args.get("a2a_run", "")), _DEFAULT_RUN)


class A2AAgentState(LLMAgentState):
    """``LLMAgentState`` plus the A2A conversation.

    Attributes:
        context_id: The task's A2A context id.
        turn: Turns sent so far.
        tool_names: Tool call ids to tool names (tool results say which tool they answer).
    """

    context_id: str
    turn: int = 0
    tool_names: dict[str, str] = {}  # noqa: RUF012 (pydantic copies field defaults)


def _usage(metadata: dict[str, Any]) -> tuple[int | None, int | None]:
    """Token counts, when the agent reports them (ADK's ``adk_usage_metadata`` or a ``usage``)."""
    adk = metadata.get("adk_usage_metadata")
    if isinstance(adk, dict):
        return _int(adk.get("promptTokenCount")), _int(adk.get("candidatesTokenCount"))
    usage = metadata.get("usage")
    if isinstance(usage, dict):
        return (
            _int(usage.get("input_tokens", usage.get("prompt_tokens"))),
            _int(usage.get("output_tokens", usage.get("completion_tokens"))),
        )
    return None, None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class A2AAgent(LLMAgent):
    """A tau2 agent whose every turn is an A2A call to the agent under test.

    Args:
        tools: The domain's tools (described to the agent, run here).
        domain_policy: The domain policy (sent as system instructions on the first turn).
        llm: Unused (tau2 passes its ``--agent-llm``).
        llm_args: tau2's ``--agent-llm-args`` with the A2A settings.

    Raises:
        ConfigurationError: No endpoint, or an invalid setting.
    """

    def __init__(
        self, tools: list[Tool], domain_policy: str, llm: str | None = None, llm_args: dict[str, Any] | None = None
    ) -> None:
        super().__init__(tools=tools, domain_policy=domain_policy, llm=llm, llm_args=llm_args)
        self.run = _run_of(self.llm_args)
        self.config = A2AConfig.from_llm_args(self.llm_args, token=self.run.token or os.environ.get(TOKEN_ENV))
        self.seed: int | None = None

    def get_init_state(self, message_history: list[Message] | None = None) -> A2AAgentState:
        """A new conversation: a context id of its own and the task's starting history."""
        history: list[Any] = list(message_history or [])
        return A2AAgentState(system_messages=[], messages=history, context_id=str(uuid.uuid4()))

    def set_seed(self, seed: int) -> None:
        """Remember the seed (the remote agent chooses its own randomness)."""
        self.seed = seed

    @classmethod
    def is_stop(cls, message: AssistantMessage) -> bool:
        """A message this agent wrote because the A2A exchange failed ends the simulation."""
        raw = message.raw_data or {}
        return bool(isinstance(raw.get("a2a"), dict) and raw["a2a"].get("stop"))

    def generate_next_message(
        self, message: UserMessage | ToolMessage | MultiToolMessage, state: A2AAgentState
    ) -> tuple[AssistantMessage, A2AAgentState]:
        """Send the turn to the agent and translate its answer (see the module docstring)."""
        started = time.perf_counter()
        history = state.messages if state.turn == 0 else []
        parts = encode_request(
            message,
            instructions=instructions_text(self.domain_policy, self.tools) if state.turn == 0 else None,
            history=list(history),
            tool_names=state.tool_names,
        )
        if isinstance(message, MultiToolMessage):
            state.messages.extend(message.tool_messages)
        else:
            state.messages.append(message)
        token = otel_context.attach(self.run.parent) if self.run.parent is not None else None
        try:
            answer = self._exchange(parts, state, started)
        finally:
            if token is not None:
                otel_context.detach(token)
        for call in answer.tool_calls or []:
            state.tool_names[call.id] = call.name
        state.messages.append(answer)
        state.turn += 1
        return answer, state

    def _exchange(self, parts: list[Part], state: A2AAgentState, started: float) -> AssistantMessage:
        tools = {tool.name for tool in self.tools}
        for attempt in range(MAX_CORRECTIONS + 1):
            metrics = RequestMetrics(turn=state.turn, context_id=state.context_id)
            try:
                reply = BRIDGE.send(self.config, parts, state.context_id, metrics)
            except AgentCallError as exc:
                return self._failed(metrics, exc.kind, str(exc), started, state)
            metrics.state = reply.state
            metrics.input_tokens, metrics.output_tokens = _usage(reply.metadata)
            if reply.context_id and reply.context_id != state.context_id:
                logger.info("the agent moved task context %s to %s", state.context_id, reply.context_id)
                state.context_id = reply.context_id
            if reply.state in _FAILED_STATES or reply.state == "auth-required":
                kind = "auth" if reply.state == "auth-required" else "agent_failed"
                return self._failed(
                    metrics, kind, f"the agent's task ended {reply.state}: {reply.text}", started, state
                )
            parsed = parse_reply(reply.text, reply.data, tools=tools, turn=state.turn)
            metrics.tool_calls = len(parsed.tool_calls)
            if parsed.problems and attempt < MAX_CORRECTIONS:
                self._record(metrics, started, parsed.problems[0].kind, parsed.problems[0].detail)
                logger.warning(
                    "turn %d of %s: expected tool calls among %s, got: %s; asking the agent again",
                    state.turn,
                    state.context_id,
                    sorted(tools),
                    "; ".join(p.detail for p in parsed.problems),
                )
                parts = _correction(parsed)
                started = time.perf_counter()
                continue
            if parsed.problems:
                return self._failed(metrics, parsed.problems[0].kind, parsed.problems[0].detail, started, state)
            if parsed.content is None and not parsed.tool_calls:
                detail = f"the reply (state {reply.state}) has no text and no tool call"
                return self._failed(metrics, "malformed_reply", detail, started, state)
            self._record(metrics, started)
            return self._message(parsed, reply, metrics, state)
        raise AssertionError("unreachable: the last attempt returns")  # pragma: no cover

    def _record(
        self, metrics: RequestMetrics, started: float, kind: str | None = None, error: str | None = None
    ) -> None:
        metrics.local_ms = round(max(0.0, (time.perf_counter() - started) * 1e3 - metrics.latency_ms), 3)
        metrics.error_kind, metrics.error = kind, error
        self.run.book.record(metrics)

    def _message(
        self, parsed: ParsedReply, reply: Reply, metrics: RequestMetrics, state: A2AAgentState
    ) -> AssistantMessage:
        usage = None
        if metrics.input_tokens is not None or metrics.output_tokens is not None:
            usage = {"prompt_tokens": metrics.input_tokens, "completion_tokens": metrics.output_tokens}
        return AssistantMessage(
            role="assistant",
            content=parsed.content,
            tool_calls=parsed.tool_calls or None,
            cost=0.0,
            usage=usage,
            raw_data={"a2a": {"context_id": state.context_id, "task_id": reply.task_id, "state": reply.state}},
        )

    def _failed(
        self, metrics: RequestMetrics, kind: str, detail: str, started: float, state: A2AAgentState
    ) -> AssistantMessage:
        detail = redact_urls_in(detail)
        self._record(metrics, started, kind, detail)
        logger.error(
            "turn %d of %s: expected an A2A reply with text or tool calls from %s, got %s: %s",
            state.turn,
            state.context_id,
            self.config.endpoint,
            kind,
            detail,
        )
        return AssistantMessage(
            role="assistant",
            content=f"[a2a_agent stopped: {kind}: {detail}]",
            cost=0.0,
            raw_data={"a2a": {"context_id": state.context_id, "stop": True, "error_kind": kind}},
        )


def _correction(parsed: ParsedReply) -> list[Part]:
    problems = [{"kind": p.kind, "detail": p.detail} for p in parsed.problems]
    text = (
        "Your tool call could not be used: "
        + "; ".join(p.detail for p in parsed.problems)
        + ". Nothing was run. Answer again, with tool calls from <tools> only."
    )
    return [new_text_part(text), new_data_part({"tool_error": problems})]


_REGISTERED = threading.Lock()


def register() -> None:
    """Add ``a2a_agent`` and ``scripted_user`` to tau2's registry (before tau2's CLI builds its parser); idempotent."""
    from tau2.registry import registry

    from coordbench.tau2.user import USER_NAME, ScriptedUser

    with _REGISTERED:
        if AGENT_NAME not in registry.get_agents():
            registry.register_agent(A2AAgent, AGENT_NAME)
        if USER_NAME not in registry.get_users():
            registry.register_user(ScriptedUser, USER_NAME)
