"""Attributing one scenario's failure: the conversation read, the rules applied, the candidates ranked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from coordbench import semconv
from coordbench.evals.attribution.model import Attribution
from coordbench.evals.attribution.rank import rank
from coordbench.evals.attribution.rules import findings
from coordbench.evals.attribution.said import Conversation
from coordbench.evals.base import EvalContext
from coordbench.evals.evidence import TeamTrace
from coordbench.spantree import SpanTree, is_agent_call, is_agent_server_span

__all__ = ["attribute", "attribute_trace", "outside_hosts"]


def attribute_trace(
    tree: SpanTree,
    *,
    hosts: Iterable[str] = (),
    members: Iterable[str] = (),
    answer: str | None = None,
    expected: str | None = None,
    unreachable: Mapping[str, str] | None = None,
    trace: TeamTrace | None = None,
) -> Attribution:
    """Which agent and which span made the run in ``tree`` fail (it is assumed to have failed).

    Args:
        tree: The spans.
        hosts: The host agents (the assessor; the agent a trace without one starts in): those that
            only hand out the task are never blamed (:func:`outside_hosts`).
        members: The agents expected to take part.
        answer: The team's answer as recorded elsewhere (default: read from the trace).
        expected: The correct answer, when known: what the team's answer carries beyond it is
            followed back to where it came from, and what it lacks to who lost it.
        unreachable: Members that could not be reached, with why.
        trace: The calls already classified (:meth:`TeamTrace.build` of ``tree`` and the hosts
            outside the team); built here otherwise.

    Returns:
        The attribution; ``agent`` is ``None`` with the reason when none can be named.
    """
    outside = outside_hosts(tree, hosts)
    if trace is None or trace.hosts != outside:
        trace = TeamTrace.build(tree, outside)
    expected = expected.strip() if expected and expected.strip() else None
    conv = Conversation(trace, answer if answer and answer.strip() else None, unreachable)
    agents = set(conv.agents) | set(unreachable or {})
    if not any(not c.by_host for c in trace.calls) and not unreachable:
        return Attribution(agent=None, span_id=None, confidence=0.0, failure_visible=False,
                           reason="the trace has no call between agents: there is no team to attribute a "
                           f"failure within ({len(agents)} agent{'s' if len(agents) != 1 else ''} seen)")  # fmt: skip
    if len(agents) < 2:
        return Attribution(agent=None, span_id=None, confidence=0.0, failure_visible=False,
                           reason="the trace shows a single agent: no team to attribute a failure within")  # fmt: skip
    found = findings(conv, expected=expected, members=sorted(set(members) - set(trace.hosts)))
    return rank(conv, found, expected=expected is not None)


def outside_hosts(tree: SpanTree, hosts: Iterable[str]) -> frozenset[str]:
    """The hosts that stand outside the team: they hand out the task and do nothing else.

    A trace with no assessor starts in the team's own entry agent, which the agent graph reads as
    the host; an orchestrator that reasons (spans of its own with message text) or delegates to two
    or more agents is a member that can be at fault, and attribution keeps it in the team. The
    assessor asks one entry and reasons in no recorded text: it stays outside.
    """
    named = set(hosts)
    if not named:
        return frozenset()
    callees: dict[str, set[str]] = {}
    for agent_call in tree.calls():
        if agent_call.caller in named:
            callees.setdefault(agent_call.caller, set()).add(agent_call.callee)
    working = {host for host, called in callees.items() if len(called) >= 2}
    for span in tree.ordered():
        if is_agent_call(span) or is_agent_server_span(span):
            continue
        if semconv.GEN_AI_OUTPUT_MESSAGES in span.attributes or semconv.GEN_AI_INPUT_MESSAGES in span.attributes:
            agent = tree.agent_of(span)
            if agent in named:
                working.add(agent)
    return frozenset(named - working)


def attribute(ctx: EvalContext, *, expected: str | None = None) -> Attribution:
    """Which agent and which span made the scenario in ``ctx`` fail (see :func:`attribute_trace`).

    ``expected`` defaults to the scenario's expected answer, when it has one.
    """
    return attribute_trace(
        ctx.tree,
        hosts=ctx.hosts,
        members=ctx.participants,
        answer=ctx.outcome.output if ctx.outcome is not None else None,
        expected=expected if expected is not None else (ctx.scenario.expected or None),
        unreachable=ctx.unreachable,
        trace=ctx.team_trace(outside_hosts(ctx.tree, ctx.hosts)),
    )
