"""The participation part: which members contributed, and which idle ones the team needed."""

from __future__ import annotations

import re
from collections.abc import Iterable

from coordbench.evals.base import EvalContext
from coordbench.evals.coordination.model import PROCESS_WEIGHTS, UNNEEDED_IDLE, Part, names
from coordbench.evals.dependency import request_steps
from coordbench.evals.evidence import TeamTrace
from coordbench.graph.agentgraph import HOST


def members_of(ctx: EvalContext) -> list[str]:
    """The members participation is counted over: the declared participants, else the agents seen."""
    if ctx.participants:
        return sorted(ctx.participants)
    roles: Iterable[tuple[str, str]] = ctx.graph.nodes(data="role", default=None)  # pyright: ignore[reportAssignmentType]
    return sorted(n for n, role in roles if role != HOST)


def needs_of(ctx: EvalContext, trace: TeamTrace, members: list[str]) -> dict[str, str]:
    """Why the trace shows each member was needed: it was called, it was down, or a text given to the team named it."""
    reasons: dict[str, str] = {}
    for member, why in ctx.unreachable.items():
        reasons[member] = f"down: {why}"
    for c in trace.calls:
        reasons.setdefault(c.call.callee, "it was called")
    # the task, and what agents asked each other: the host's own message to the entry may list
    # every member's address (a directory, not a need), so it counts only through the task
    said = [ctx.scenario.task.lower()] + [(c.call.request_text or "").lower() for c in trace.team_calls]
    for member in members:
        if member not in reasons and any(_names_it(text, member.lower()) for text in said):
            reasons[member] = "the task or a request named it"
    return reasons


_DIRECTORY_ENTRY = re.compile(r'":\s*"https?://')
"""What follows a member's name used as a key of a JSON map of addresses (a peers directory)."""


def _names_it(text: str, name: str) -> bool:
    """``name`` appears in ``text`` as a whole word (not inside another), and not as an address book's key.

    Agents pass each other directories of their peers (``{"writer": "http://..."}``): listing a
    member's address asks nothing of it.

    Example:
        >>> _names_it("ask the writer for a draft", "writer"), _names_it("a ghostwriter", "writer")
        (True, False)
        >>> _names_it('{"peers": {"writer": "http://127.0.0.1:9/"}}', "writer")
        False
    """
    start = text.find(name)
    while start >= 0:
        before = text[start - 1] if start else " "
        end = start + len(name)
        after = text[end] if end < len(text) else " "
        listed = before == '"' and _DIRECTORY_ENTRY.match(text, end, end + 16) is not None
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_") and not listed:
            return True
        start = text.find(name, start + 1)
    return False


def routers_of(trace: TeamTrace) -> list[str]:
    """Agents that chose whom to call with a model: a model step of theirs ran before a call they made for a request.

    Such an agent picks from a roster (an LLM orchestrator, a group chat's manager selecting the
    next speaker): members it did not pick, and that nothing in the trace asked for, were not
    needed for this task.
    """
    routers: set[str] = set()
    for calls in trace.by_request.values():
        request, agent = calls[0].request, calls[0].call.caller
        if request is None or agent in routers or agent in trace.hosts:
            continue
        last = max(c.span.start_time_unix_nano for c in calls)
        if any(s.model and s.span.start_time_unix_nano < last for s in request_steps(trace, request)):
            routers.add(agent)
    return sorted(routers)


def participation_part(trace: TeamTrace, members: list[str], needs: dict[str, str]) -> Part:
    """``1 - (needed idle + 0.5 * other idle) / members``; a member a model-routed team never picked costs nothing."""
    weight = PROCESS_WEIGHTS["participation"]
    if not members:
        return Part(value=1.0, weight=weight, formula="1: no members declared or seen")
    called = {c.call.callee for c in trace.calls}
    contributed = {c.call.callee for c in trace.calls if c.useful}
    contributed |= {c.call.caller for c in trace.team_calls if c.useful and c.call.caller not in called}
    idle = [m for m in members if m not in contributed]
    needed = [m for m in idle if m in needs]
    routers = routers_of(trace)
    unpicked = [m for m in idle if m not in needs] if routers else []
    spare = [m for m in idle if m not in needs and m not in unpicked]
    lost = len(needed) + UNNEEDED_IDLE * len(spare)
    value = 1.0 - lost / len(members)
    evidence: list[str] = []
    fired: list[str] = []
    if needed:
        fired.append("idle_members")
        evidence.append(
            "needed but contributed nothing: " + "; ".join(f"{m} ({_why_idle(m, needs[m], trace)})" for m in needed)
        )
    if spare:
        fired.append("unused_members")
        evidence.append(f"not used, and nothing in the trace asked for them (half a member each): {names(spare)}")
    if unpicked:
        evidence.append(
            f"not picked, and nothing in the trace asked for them: {names(unpicked)} (chosen against by a model: "
            f"{names(routers)} picked whom to call; a roster to pick from, not a fault)"
        )
    formula = (
        f"1 - ({len(needed)} needed idle + {UNNEEDED_IDLE} * {len(spare)} other idle) / {len(members)} members"
        f" = {value:.3f}"
    )
    return Part(
        value=value,
        weight=weight,
        formula=formula,
        figures={
            "members": len(members),
            "contributing": len(members) - len(idle),
            "needed_idle": len(needed),
            "other_idle": len(spare),
            "not_picked": len(unpicked),
        },
        fired=fired,
        evidence=evidence,
        agents=sorted(needed + spare),
    )


def _why_idle(member: str, need: str, trace: TeamTrace) -> str:
    """Why a needed member gave nothing, as the trace tells it."""
    if need.startswith("down"):
        return need
    into = [c for c in trace.calls if c.call.callee == member]
    if not into:
        return f"never called, though {need.removeprefix('it ')}"
    reasons: list[str] = []
    if any(not c.ok for c in into):
        reasons.append("its calls failed")
    if any(c.relay for c in into):
        reasons.append("it only passed the work on")
    if any(c.server is None for c in into):
        reasons.append("its spans never arrived")
    if any(c.late for c in into):
        reasons.append("its answers came too late")
    if any(c.duplicate_of is not None for c in into):
        reasons.append("it was only asked again what it had answered")
    return ", ".join(reasons) or "no useful call reached it"


def unasked_members(needs: dict[str, str], members: list[str], trace: TeamTrace, down: dict[str, str]) -> list[str]:
    """Needed members no agent ever called or heard from (and not down): work the team never handed out."""
    seen = {c.call.callee for c in trace.calls} | {c.call.caller for c in trace.calls}
    return [m for m in members if m in needs and m not in seen and m not in down]
