"""The robustness part: failed, unverified and unreachable calls, and whether the trace is complete."""

from __future__ import annotations

from collections import Counter

from coordbench.evals.base import EvalContext
from coordbench.evals.coordination.model import (
    INCOMPLETE_FACTOR,
    PROCESS_WEIGHTS,
    Part,
    call_ids,
    call_order,
    names,
    tally,
)
from coordbench.evals.evidence import (
    TeamCall,
    TeamTrace,
)
from coordbench.spans import StatusCode


def robustness_part(trace: TeamTrace, ctx: EvalContext) -> Part:
    """``1 - (failed + unverified + down) / (calls + down)``, times 0.75 when the trace is incomplete."""
    weight = PROCESS_WEIGHTS["robustness"]
    counted = [c for c in trace.calls if not c.ok or not (c.duplicate_of is not None or c.relay)]
    failed = [c for c in counted if not c.ok]
    unverified = [c for c in counted if c.ok and c.server is None]
    orphans = trace.orphan_servers
    down = ctx.unreachable
    slots = len(counted) + len(orphans) + len(down)
    bad = len(failed) + len(unverified) + len(orphans) + len(down)
    base = 1.0 - bad / slots if slots else 1.0
    # the store's verdict when it tracked the trace (it knows which spans are still open); else the tree's
    incomplete = not ctx.completeness.complete if ctx.completeness is not None else bool(ctx.tree.orphans)
    value = base * (INCOMPLETE_FACTOR if incomplete else 1.0)
    fired: list[str] = []
    evidence: list[str] = []
    if down:
        fired.append("members_down")
        evidence.append(
            f"{len(down)} member(s) could not be reached: "
            + "; ".join(f"{m} ({why})" for m, why in sorted(down.items()))
        )
    if failed:
        fired.append("failed_calls")
        kinds = Counter(f"{c.call.caller} → {c.call.callee} ({_why(c)})" for c in failed)
        evidence.append(f"{len(failed)} of {slots} calls failed: " + tally(kinds))
        unhandled = [c for c in failed if _propagated(c, trace)]
        if unhandled:
            fired.append("unhandled_errors")
            evidence.append(f"{len(unhandled)} failure(s) left unhandled: the request they were for failed too")
    retries = [c for c in trace.calls if c.retry_of is not None and c.ok]
    if retries:
        evidence.append(f"{len(retries)} failed request(s) retried successfully")
    if unverified or orphans:
        fired.append("unverified_calls")
        evidence.append(
            f"{len(unverified)} call(s) whose callee's spans never arrived"
            + (f" (to {names(c.call.callee for c in unverified)})" if unverified else "")
            + f", {len(orphans)} request(s) whose caller's span never arrived"
        )
    if incomplete:
        fired.append("incomplete_trace")
        evidence.append("the trace was incomplete when evaluated")
    formula = (
        f"1 - ({len(failed)} failed + {len(unverified) + len(orphans)} unverified + {len(down)} down) / {slots} calls"
    )
    if incomplete:
        formula += f", * {INCOMPLETE_FACTOR} (incomplete)"
    behind = failed + unverified
    return Part(
        value=value,
        weight=weight,
        formula=f"{formula} = {value:.3f}",
        figures={
            "calls": slots,
            "failed": len(failed),
            "unverified": len(unverified) + len(orphans),
            "down": len(down),
            "retries": len(retries),
            "incomplete": int(incomplete),
        },
        fired=fired,
        evidence=evidence,
        agents=sorted({c.call.callee for c in behind} | set(down)),
        calls=call_ids(sorted(behind, key=call_order)),
    )


def _why(c: TeamCall) -> str:
    if c.call.error_type:
        return c.call.error_type
    return f"task {c.call.state}" if c.call.ok else "error status"


def _propagated(failed: TeamCall, trace: TeamTrace) -> bool:
    """The failure reached the request it was made for: that request failed too."""
    request = failed.request
    if request is None:
        return failed.by_host
    answered = [c for c in trace.calls if c.server is not None and c.server.span_id == request.span_id]
    return request.status_code is StatusCode.ERROR or any(not c.ok for c in answered)
