"""The bottleneck part: hubs that held the team up (queued requests, concentrated failures)."""

from __future__ import annotations

from collections import defaultdict

from coordbench.evals.coordination.model import (
    NOISE_FLOOR,
    PROCESS_WEIGHTS,
    Part,
    call_ids,
    call_order,
    floored,
    names,
)
from coordbench.evals.dependency import Dependencies, dependencies_of
from coordbench.evals.evidence import COMPARED, OVERLAP_SLACK, TeamCall, TeamTrace
from coordbench.spans import SpanData


def hubs_of(trace: TeamTrace) -> list[str]:
    """Agents that delegated to, or served, two or more agents."""
    partners_out: dict[str, set[str]] = defaultdict(set)
    partners_in: dict[str, set[str]] = defaultdict(set)
    for c in trace.team_calls:
        if c.call.caller != c.call.callee:
            partners_out[c.call.caller].add(c.call.callee)
            partners_in[c.call.callee].add(c.call.caller)
    agents = set(partners_out) | set(partners_in)
    return sorted(
        a for a in agents - trace.hosts if len(partners_out.get(a, ())) >= 2 or len(partners_in.get(a, ())) >= 2
    )


def _union(intervals: list[tuple[int, int]]) -> int:
    covered, cursor = 0, None
    for start, end in sorted(intervals):
        if cursor is None or start > cursor:
            covered += end - start
            cursor = end
        elif end > cursor:
            covered += end - cursor
            cursor = end
    return covered


def _makespan(work: list[TeamCall], dependencies: Dependencies) -> int:
    """The shortest time the work calls could take: the longest chain of calls that (may) depend on each other."""
    chains: list[int] = []
    for i, b in enumerate(work):
        first = max(0, i - COMPARED)
        before = [
            chains[first + j]
            for j, a in enumerate(work[first:i])
            if b.span.start_time_unix_nano >= a.span.end_time_unix_nano and dependencies.of(b, a).value is not False
        ]
        chains.append(b.span.end_time_unix_nano - b.span.start_time_unix_nano + max(before, default=0))
    return max(chains, default=0)


def _dominance(trace: TeamTrace, requests: list[SpanData]) -> tuple[float, int]:
    """The hub's own time over its own time plus the shortest time of the work it waited for."""
    own = needed = 0
    for request in requests:
        work = sorted((c for c in trace.by_request.get(request.span_id, []) if c.work), key=call_order)
        busy = _union([(c.span.start_time_unix_nano, c.span.end_time_unix_nano) for c in work])
        own += max(0, request.end_time_unix_nano - request.start_time_unix_nano - busy)
        needed += _makespan(work, dependencies_of(trace, request.span_id))
    return (own / (own + needed) if own + needed > 0 else 0.0), own


def _queued(a: TeamCall, b: TeamCall) -> bool:
    """Whether the hub served ``b`` only once it had finished ``a``: the signature of a queue.

    The hub's two SERVER spans do not overlap, and ``b``'s starts as ``a``'s ends (within a
    fifth of the shorter, :data:`~coordbench.evals.evidence.OVERLAP_SLACK`). Spans that overlap
    were served side by side, however slowly; a ``b`` that started later than that was held up
    elsewhere (on a busy machine, its caller may take long to send it), not in the hub's queue.
    """
    assert a.server is not None and b.server is not None  # noqa: S101 - the caller filtered them
    first, second = (
        (a.server, b.server)
        if a.server.start_time_unix_nano <= b.server.start_time_unix_nano
        else (
            b.server,
            a.server,
        )
    )
    gap = second.start_time_unix_nano - first.end_time_unix_nano
    shorter = min(first.end_time_unix_nano - first.start_time_unix_nano, second.end_time_unix_nano
                  - second.start_time_unix_nano)  # fmt: skip
    return 0 <= gap <= OVERLAP_SLACK * shorter


def _queueing(into: list[TeamCall]) -> tuple[int, float, list[TeamCall]]:
    """Concurrent requests to the hub from different requests, and the share it served one after the other.

    ``into``: every call to the hub, by start time.
    """
    incoming = [c for c in into if c.server is not None and c.ok]
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    # each call is compared with the up to COMPARED calls before it that were still open when it began: a
    # call ended before one began ended before every later one began too, so it leaves the sweep for good
    open_calls: list[tuple[int, TeamCall]] = []
    for j, b in enumerate(incoming):
        start = b.span.start_time_unix_nano
        open_calls = [(i, a) for i, a in open_calls if i >= j - COMPARED and start < a.span.end_time_unix_nano]
        for _, a in open_calls:
            if a.request is not None and b.request is not None and a.request.span_id == b.request.span_id:
                continue
            count += 1
            if _queued(a, b):
                serial += 1.0
                behind.append(b)
        open_calls.append((j, b))
    return count, (serial / count if count else 0.0), behind


def bottleneck_part(trace: TeamTrace, hubs: list[str]) -> Part:
    """``1 - worst hub penalty``: hubs that queued requests from different callers, or on which failures concentrate."""
    weight = PROCESS_WEIGHTS["bottleneck"]
    delegators = {c.call.caller for c in trace.team_calls if c.work} - trace.hosts
    figures: dict[str, float | int] = {}
    for agent in sorted(delegators):  # described, not scored: see OWN_SHARE_NOTE
        figures[f"{agent}.own_share"] = _dominance(trace, trace.requests_of(agent))[0]
    if not hubs:
        return Part(
            value=1.0, weight=weight, figures=figures, formula="1: no agent delegated to or served two or more agents"
        )
    failed_all = [c for c in trace.calls if not c.ok]
    to_hub: dict[str, list[TeamCall]] = {hub: [] for hub in hubs}
    for c in trace.calls:  # by start time: one pass for every hub
        calls = to_hub.get(c.call.callee)
        if calls is not None:
            calls.append(c)
    worst, worst_hub = 0.0, ""
    fired: set[str] = set()
    evidence: list[str] = []
    agents: set[str] = set()
    behind: list[TeamCall] = []
    for hub in hubs:
        penalties: list[float] = []
        queued_pairs, queued, queued_calls = _queueing(sorted(to_hub[hub], key=call_order))
        figures[f"{hub}.queued"] = queued
        if floored(queued) > 0:
            penalties.append(floored(queued))
            fired.add("requests_queue")
            evidence.append(
                f"concurrent requests queued on {hub} ({queued:.2f} over {queued_pairs} pairs, beyond the "
                f"{NOISE_FLOOR} noise floor)"
            )
            behind += queued_calls
        into = [c for c in to_hub[hub] if not c.ok or c.duplicate_of is None]
        failed_into = [c for c in into if not c.ok]
        if len(failed_into) >= 2:
            penalties.append(len(failed_into) / len(into))
            fired.add("failures_concentrate")
            evidence.append(
                f"{len(failed_into)} of the {len(into)} requests to {hub} failed "
                f"({len(failed_into)} of the {len(failed_all)} failed calls)"
            )
            behind += failed_into
        penalty = max(penalties, default=0.0)
        if penalty > 0:
            agents.add(hub)
        if penalty > worst:
            worst, worst_hub = penalty, hub
    value = 1.0 - min(1.0, worst)
    formula = f"1 - {worst:.3f} (worst hub: {worst_hub})" if worst_hub else "1: no hub held the team up"
    if not evidence:
        evidence.append(f"hub(s) {names(hubs)}: no evidence that they held the team up")
    return Part(
        value=value,
        weight=weight,
        formula=f"{formula} = {value:.3f}",
        figures=figures,
        fired=sorted(fired),
        evidence=evidence,
        agents=sorted(agents),
        calls=call_ids(sorted({c.id: c for c in behind}.values(), key=call_order)),
    )
