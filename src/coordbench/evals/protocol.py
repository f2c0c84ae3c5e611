"""Tier 1: protocol facts per agent: calls, failures, retries, states, sizes, tokens, cost."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from coordbench.evals.base import TIER_GRAPH, EvalContext, Evaluator
from coordbench.evals.calls import Call

__all__ = ["AgentProtocol", "ProtocolEvaluator", "ProtocolResult", "summarise_calls"]


class AgentProtocol(BaseModel):
    """What one agent's A2A traffic looked like.

    Attributes:
        requests: Messages it received.
        failed: Of those, how many failed (error status, failed task, transport error).
        sent: Messages it sent.
        retries: Messages it sent that repeated an earlier one to the same callee (same digest).
        states: Final task states of the requests it received, counted.
        error_types: ``error.type`` of its failed requests, counted.
        bytes_in: Request bytes it received.
        bytes_out: Response bytes it sent back.
        tokens_in: Tokens in the requests it received (reported or estimated).
        tokens_out: Tokens in its replies.
        cost: Cost it reported for its requests, summed (``None``: none reported).
    """

    model_config = ConfigDict(frozen=True)

    requests: int = 0
    failed: int = 0
    sent: int = 0
    retries: int = 0
    states: dict[str, int]
    error_types: dict[str, int]
    bytes_in: int = 0
    bytes_out: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None


class ProtocolResult(BaseModel):
    """Protocol figures of a scenario.

    Attributes:
        calls: A2A messages (the host's included).
        failed: Failed messages.
        success_rate: ``1 - failed / calls`` (``None`` without calls).
        retries: Messages that repeated an earlier one (same caller, callee and content digest).
        agents: Per agent, by name.
    """

    model_config = ConfigDict(frozen=True)

    calls: int
    failed: int
    success_rate: float | None
    retries: int
    agents: dict[str, AgentProtocol]


def summarise_calls(calls: Iterable[Call]) -> ProtocolResult:
    """Aggregate calls per agent (see :class:`ProtocolResult`).

    Example:
        Two identical messages A → B, the second failing: 2 calls, 1 failed, 1 retry,
        ``success_rate`` 0.5; B received 2 and failed 1.
    """
    received: dict[str, list[Call]] = defaultdict(list)
    sent: Counter[str] = Counter()
    retries: Counter[str] = Counter()
    seen: set[tuple[str, str, str]] = set()
    total = failed = 0
    for call in calls:
        total += 1
        failed += not call.ok
        received[call.callee].append(call)
        sent[call.caller] += 1
        if call.digest is not None:
            key = (call.caller, call.callee, call.digest)
            if key in seen:
                retries[call.caller] += 1
            seen.add(key)
    agents: dict[str, AgentProtocol] = {}
    for name in sorted(set(received) | set(sent)):
        mine = received.get(name, [])
        costs = [c.cost for c in mine if c.cost is not None]
        agents[name] = AgentProtocol(
            requests=len(mine),
            failed=sum(1 for c in mine if not c.ok),
            sent=sent[name],
            retries=retries[name],
            states=dict(sorted(Counter(c.state or "none" for c in mine).items())),
            error_types=dict(sorted(Counter([c.error_type for c in mine if c.error_type is not None]).items())),
            bytes_in=sum(c.request_bytes for c in mine),
            bytes_out=sum(c.response_bytes for c in mine),
            tokens_in=sum(c.input_tokens for c in mine),
            tokens_out=sum(c.output_tokens for c in mine),
            cost=sum(costs) if costs else None,
        )
    return ProtocolResult(
        calls=total,
        failed=failed,
        success_rate=(1 - failed / total) if total else None,
        retries=sum(retries.values()),
        agents=agents,
    )


class ProtocolEvaluator(Evaluator):
    """How the agents used A2A: per-call status, errors, retries, sizes and tokens, per agent."""

    name = "protocol"
    tier = TIER_GRAPH
    blocking = True  # computes only: run on a worker thread
    order = 10
    description = "Per-agent A2A calls, failures, retries, task states, bytes, tokens and cost."

    async def evaluate(self, ctx: EvalContext) -> ProtocolResult:
        """Aggregate every A2A message of the trace, the host's included."""
        return summarise_calls(ctx.calls)

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """The share of messages that succeeded (``None`` when there were none)."""
        return result.success_rate if isinstance(result, ProtocolResult) else None
