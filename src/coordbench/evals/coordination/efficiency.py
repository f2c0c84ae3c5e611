"""The efficiency part: useful calls among all the calls the team made or could not make."""

from __future__ import annotations

from collections import Counter

from coordbench.evals.coordination.model import PROCESS_WEIGHTS, Part, call_ids, call_order, names, tally
from coordbench.evals.evidence import (
    TeamCall,
    TeamTrace,
)


def efficiency_part(trace: TeamTrace, down: dict[str, str], unasked: list[str]) -> Part:
    """Useful calls / (the agents' calls + members that were down + needed members never called)."""
    weight = PROCESS_WEIGHTS["efficiency"]
    calls = trace.team_calls
    if not calls and not down and not unasked:
        return Part(value=1.0, formula="1: the agents sent each other no messages", weight=weight)
    useful = [c for c in calls if c.useful]
    duplicates = [c for c in calls if c.duplicate_of is not None]
    late = [c for c in calls if c.late]
    relayed = [c for c in calls if c.relay and c.work]
    failed = [c for c in calls if not c.ok]
    slots = len(calls) + len(down) + len(unasked)
    value = len(useful) / slots
    total_bytes = sum(c.call.request_bytes + c.call.response_bytes for c in calls)
    figures: dict[str, float | int] = {
        "messages": len(calls),
        "useful": len(useful),
        "duplicates": len(duplicates),
        "late": len(late),
        "relay_hops": len(relayed),
        "failed": len(failed),
        "down_members": len(down),
        "unasked_members": len(unasked),
        "bytes": total_bytes,
    }
    if useful:
        figures["messages_per_useful"] = len(calls) / len(useful)
        figures["bytes_per_useful"] = total_bytes / len(useful)
    fired: list[str] = []
    evidence: list[str] = []
    behind: list[TeamCall] = []
    if duplicates:
        fired.append("duplicate_requests")
        pairs = Counter(f"{c.call.caller} → {c.call.callee}" for c in duplicates)
        evidence.append("the same request sent again after it had succeeded: " + tally(pairs))
        behind += duplicates
    if late:
        fired.append("late_calls")
        pairs = Counter(f"{c.call.caller} → {c.call.callee}" for c in late)
        evidence.append("results that arrived after the request they were for had been answered: " + tally(pairs))
        behind += late
    if relayed:
        fired.append("relay_hops")
        evidence.append(f"calls into agents that only passed the work on: {names(c.call.callee for c in relayed)}")
        behind += relayed
    if failed:
        evidence.append(f"{len(failed)} failed call(s) did no useful work (see robustness)")
    if down:
        fired.append("members_down")
        evidence.append(f"work that could not be given to members that were down: {names(down)}")
    if unasked:
        fired.append("work_not_given")
        evidence.append(f"work never given to members the team needed: {names(unasked)} (see participation)")
    unverified = [c for c in calls if c.work and not c.late and not c.relay and c.server is None]
    if unverified:
        evidence.append(f"{len(unverified)} call(s) whose callee's spans never arrived (see robustness)")
    formula = (
        f"{len(useful)} useful / ({len(calls)} messages + {len(down)} members down + {len(unasked)} needed members"
        f" never asked) = {value:.3f}"
    )
    return Part(
        value=value,
        weight=weight,
        formula=formula,
        figures=figures,
        fired=fired,
        evidence=evidence,
        agents=sorted({c.call.caller for c in behind} | set(down) | set(unasked)),
        calls=call_ids(sorted(behind, key=call_order)),
    )
