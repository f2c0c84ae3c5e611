"""The coordination score: how well the team worked together, judged from evidence in the trace.

The agent graph's shape (star, chain, mesh...) is described by the graph evaluator and never
scored by itself: a hub that delegates in parallel and merges the answers is doing its job.
The score instead rests on what the trace shows the team *did*, in parts that each have a
formula and name the calls and agents behind them (``docs/scoring.md`` has the worked
examples)::

    score   = outcome_factor * participation * process
    outcome_factor = 0.4 + 0.6 * outcome                      (1 when there is no team outcome)
    process = 0.25 efficiency + 0.20 parallelism + 0.15 bottleneck
              + 0.30 robustness + 0.10 information_flow

- **outcome**: 0 when the team gave no answer; else 1, or ``0.5 + 0.5 * min(1, s / 0.4)``
  when the scenario has reference texts, ``s`` the answer's similarity to them (mean of
  TF-IDF cosine and ROUGE-L). With no answer the score is at most 0.4, below any passing mark.
- **participation**: members that contributed / declared members. A member contributed when
  it answered a useful call and its span shows it (or, never called itself, made one). A member never used costs
  its whole share; a hub costs nothing unless the bottleneck evidence below fires.
- **efficiency**: useful calls / the agents' calls. Not useful: failed, duplicate (the same
  request as an earlier successful one), late (its result arrived after the request it was
  for had been answered), or into a relay that added nothing.
- **parallelism**: ``1 - Σ serialisation / calls`` over the work calls of every request: a
  call's serialisation is how far it ran after a call of the same request it did not depend
  on (1 one after the other, 0 side by side, overlaps of 90% or more forgiven as start-up jitter:
  :func:`~coordbench.evals.evidence.serialisation`).
- **bottleneck**: ``1 - worst hub penalty``; a hub (an agent delegating to, or serving, two or
  more agents) is penalised only by evidence: it serialised its independent calls (as in
  parallelism), requests from different callers queued on it, its own time dominates the
  work it waited for (own share above 0.6: ``(share - 0.6) / 0.4``), or failures concentrate
  on it (two or more of its requests failed: its failed share of the requests it was sent,
  repeats of a request it had answered left out).
- **robustness**: ``(1 - (failed + unverified) / calls) * (0.75 if the trace is incomplete)``;
  unverified: calls whose callee's span never arrived and requests whose caller's span never
  did. Duplicates and relay hops that succeeded are not counted as calls here (adding them
  must not dilute the failures).
- **information_flow**: ``1 - relay hops / delegating hops``: of the calls into agents that
  passed work on, how many came back with nothing added.

Every part is 1 when there is nothing to fault (no calls to pair, no hub...), so leaving a
part out never raises a score, and each moves one way with each kind of evidence.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.base import TIER_JUDGEMENT, EvalContext, Evaluator
from coordbench.evals.evidence import COMPARED, TeamCall, TeamTrace, apart, depends_on, serialisation
from coordbench.evals.text import reference_similarity
from coordbench.graph.agentgraph import HOST
from coordbench.spans import SpanData, StatusCode

__all__ = [
    "PROCESS_WEIGHTS",
    "CoordinationEvaluator",
    "CoordinationResult",
    "Part",
    "assess_coordination",
]

PROCESS_WEIGHTS: dict[str, float] = {
    "efficiency": 0.25,
    "parallelism": 0.20,
    "bottleneck": 0.15,
    "robustness": 0.30,
    "information_flow": 0.10,
}
"""Weights of the process parts (they sum to 1)."""
OUTCOME_FLOOR = 0.4
"""The outcome factor when the team gave no answer: the score cannot reach 0.4."""
GOOD_REFERENCE_SIMILARITY = 0.4
"""Similarity to the references at which an answer counts as fully matching them."""
DOMINANCE_THRESHOLD = 0.6
"""Share of a hub's requests spent in its own work above which it limits the team."""
INCOMPLETE_FACTOR = 0.75
"""Robustness factor for a trace that was incomplete when evaluated."""
_LIST = 8


class Part(BaseModel):
    """One part of the coordination score.

    Attributes:
        value: In [0, 1]; 1 when there is nothing to fault. ``None``: cannot be judged (the
            outcome in ground-truth mode).
        weight: Its weight (within the process parts, or ``None`` for the factors).
        formula: How the value was computed, with the figures filled in.
        figures: The numbers in the formula.
        fired: Names of the evidence that lowered it.
        evidence: What the trace shows, in words naming the agents and calls.
        agents: The agents behind the evidence, sorted.
        calls: Span ids of the calls behind the evidence (at most eight), by start time.
    """

    model_config = ConfigDict(frozen=True)

    value: float | None
    weight: float | None = None
    formula: str
    figures: dict[str, float | int] = Field(default_factory=dict[str, float | int])
    fired: list[str] = Field(default_factory=list[str])
    evidence: list[str] = Field(default_factory=list[str])
    agents: list[str] = Field(default_factory=list[str])
    calls: list[str] = Field(default_factory=list[str])


class CoordinationResult(BaseModel):
    """The coordination score of a scenario and its parts.

    Attributes:
        score: ``outcome_factor * participation * process``, in [0, 1].
        coordination_quality: ``participation * process``: how well the agents worked
            together, apart from the answer.
        outcome_factor: ``0.4 + 0.6 * outcome`` (1 without a team outcome).
        process: The weighted mean of the process parts.
        parts: Each part, by name.
        hubs: Agents that delegated to, or served, two or more agents.
        members: The members the participation is counted over.
        fired: Every piece of evidence that lowered the score, by part.
        strengths: What went well, from parts that scored full marks with something to judge.
        weaknesses: What lowered the score, largest loss first.
    """

    model_config = ConfigDict(frozen=True)

    score: float
    coordination_quality: float
    outcome_factor: float
    process: float
    parts: dict[str, Part]
    hubs: list[str]
    members: list[str]
    fired: list[str]
    strengths: list[str]
    weaknesses: list[str]


def _names(agents: Iterable[str]) -> str:
    return ", ".join(sorted(set(agents)))


def _ids(calls: Iterable[TeamCall]) -> list[str]:
    return [c.id for c in calls][:_LIST]


def _outcome(ctx: EvalContext) -> Part:
    if ctx.outcome is None:
        return Part(value=None, formula="no team outcome (ground-truth mode): not judged")
    if not ctx.outcome.succeeded:
        why = ctx.outcome.error or f"the task ended {ctx.outcome.state} without an answer"
        return Part(
            value=0.0,
            formula="0: the team did not deliver an answer",
            fired=["no_answer"],
            evidence=[f"the team did not deliver an answer ({why})"],
        )
    refs = [r for r in ctx.scenario.references if r.strip()]
    if not refs:
        return Part(value=1.0, formula="1: the team answered (no reference texts to compare with)")
    similarity = reference_similarity(ctx.outcome.output, refs)
    closeness = min(1.0, similarity / GOOD_REFERENCE_SIMILARITY)
    value = 0.5 + 0.5 * closeness
    fired = ["far_from_references"] if closeness < 1 else []
    return Part(
        value=value,
        formula=f"0.5 + 0.5 * min(1, {similarity:.3f} / {GOOD_REFERENCE_SIMILARITY}) = {value:.3f}",
        figures={"reference_similarity": similarity, "references": len(refs)},
        fired=fired,
        evidence=[f"the answer's similarity to the {len(refs)} reference text(s) is {similarity:.2f}"],
    )


def _members(ctx: EvalContext) -> list[str]:
    if ctx.participants:
        return sorted(ctx.participants)
    roles: Iterable[tuple[str, str]] = ctx.graph.nodes(data="role", default=None)  # pyright: ignore[reportAssignmentType]
    return sorted(n for n, role in roles if role != HOST)


def _participation(trace: TeamTrace, members: list[str]) -> Part:
    if not members:
        return Part(value=1.0, formula="1: no members declared or seen")
    called = {c.call.callee for c in trace.calls}
    contributed = {c.call.callee for c in trace.calls if c.useful}
    contributed |= {c.call.caller for c in trace.team_calls if c.useful and c.call.caller not in called}
    used = [m for m in members if m in contributed]
    idle = [m for m in members if m not in contributed]
    value = len(used) / len(members)
    evidence: list[str] = []
    never = [m for m in idle if m not in called]
    if never:
        evidence.append(f"never used: {_names(never)}")
    nothing = [m for m in idle if m in called]
    if nothing:
        evidence.append(f"called but contributed nothing (failed, duplicate, late or relayed): {_names(nothing)}")
    return Part(
        value=value,
        formula=f"{len(used)} contributing / {len(members)} members = {value:.3f}",
        figures={"members": len(members), "contributing": len(used)},
        fired=["idle_members"] if idle else [],
        evidence=evidence,
        agents=idle,
    )


def _efficiency(trace: TeamTrace) -> Part:
    calls = trace.team_calls
    if not calls:
        return Part(
            value=1.0, formula="1: the agents sent each other no messages", weight=PROCESS_WEIGHTS["efficiency"]
        )
    useful = [c for c in calls if c.useful]
    duplicates = [c for c in calls if c.duplicate_of is not None]
    late = [c for c in calls if c.late]
    relayed = [c for c in calls if c.relay and c.work]
    failed = [c for c in calls if not c.ok]
    value = len(useful) / len(calls)
    total_bytes = sum(c.call.request_bytes + c.call.response_bytes for c in calls)
    figures: dict[str, float | int] = {
        "messages": len(calls),
        "useful": len(useful),
        "duplicates": len(duplicates),
        "late": len(late),
        "relay_hops": len(relayed),
        "failed": len(failed),
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
        evidence.append("the same request sent again after it had succeeded: " + _counted(pairs))
        behind += duplicates
    if late:
        fired.append("late_calls")
        pairs = Counter(f"{c.call.caller} → {c.call.callee}" for c in late)
        evidence.append("results that arrived after the request they were for had been answered: " + _counted(pairs))
        behind += late
    if relayed:
        fired.append("relay_hops")
        evidence.append(f"calls into agents that only passed the work on: {_names(c.call.callee for c in relayed)}")
        behind += relayed
    if failed:
        evidence.append(f"{len(failed)} failed call(s) did no useful work (see robustness)")
    return Part(
        value=value,
        weight=PROCESS_WEIGHTS["efficiency"],
        formula=f"{len(useful)} useful / {len(calls)} messages = {value:.3f}",
        figures=figures,
        fired=fired,
        evidence=evidence,
        agents=sorted({c.call.caller for c in behind}),
        calls=_ids(sorted(behind, key=_order)),
    )


def _counted(counter: Counter[str]) -> str:
    return ", ".join(f"{k} *{n}" if n > 1 else k for k, n in sorted(counter.items()))


def _order(c: TeamCall) -> tuple[int, str]:
    return c.span.start_time_unix_nano, c.id


def _serialised(trace: TeamTrace, requests: Iterable[str]) -> tuple[int, float, list[TeamCall]]:
    """Work calls of these requests, how far each was run after one it could have run beside, and those calls.

    A call's serialisation is the largest :func:`~coordbench.evals.evidence.serialisation`
    with any call of the same request that started before it and that it does not depend
    on (0 for the first call). A relay's own requests are left out: the call into the relay
    stands for the work it passed on.
    """
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    relayed = trace.relay_requests
    for request in requests:
        if request in relayed:
            continue
        work = sorted((c for c in trace.by_request.get(request, []) if c.work), key=_order)
        for i, b in enumerate(work):
            count += 1
            worst = 0.0
            for a in reversed(work[max(0, i - COMPARED) : i]):  # the latest first: one after another shows at once
                s = serialisation(a, b)
                if s is not None and s > worst:
                    worst = s
                    if worst >= 1.0:
                        break
            serial += worst
            if worst > 0:
                behind.append(b)
    return count, serial, sorted(behind, key=_order)


def _parallelism(trace: TeamTrace) -> Part:
    weight = PROCESS_WEIGHTS["parallelism"]
    count, serial, behind = _serialised(trace, sorted(trace.by_request))
    if serial == 0:
        formula = "1: no call waited for one it could have run beside"
        return Part(value=1.0, weight=weight, formula=formula, figures={"calls": count, "serialisation": 0.0})
    value = 1.0 - serial / count
    callers = Counter(c.call.caller for c in behind)
    return Part(
        value=value,
        weight=weight,
        formula=f"1 - {serial:.3f} serialised / {count} calls = {value:.3f}",
        figures={"calls": count, "serialisation": serial},
        fired=["serialised_work"],
        evidence=[
            f"calls that waited for others they did not depend on (serialisation {serial:.2f} over {count} calls), "
            "made by: " + _counted(callers)
        ],
        agents=sorted(callers),
        calls=_ids(behind),
    )


def _hubs(trace: TeamTrace) -> list[str]:
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


def _makespan(work: list[TeamCall]) -> int:
    """The shortest time the work calls could take: the longest chain of calls that depend on each other."""
    chains: list[int] = []
    for i, b in enumerate(work):
        first = max(0, i - COMPARED)
        before = [
            chains[first + j]
            for j, a in enumerate(work[first:i])
            if b.span.start_time_unix_nano >= a.span.end_time_unix_nano and depends_on(b, a)
        ]
        chains.append(b.span.end_time_unix_nano - b.span.start_time_unix_nano + max(before, default=0))
    return max(chains, default=0)


def _dominance(trace: TeamTrace, requests: list[SpanData]) -> tuple[float, int]:
    """The hub's own time over its own time plus the shortest time of the work it waited for."""
    own = needed = 0
    for request in requests:
        work = sorted((c for c in trace.by_request.get(request.span_id, []) if c.work), key=_order)
        busy = _union([(c.span.start_time_unix_nano, c.span.end_time_unix_nano) for c in work])
        own += max(0, request.end_time_unix_nano - request.start_time_unix_nano - busy)
        needed += _makespan(work)
    return (own / (own + needed) if own + needed > 0 else 0.0), own


def _queueing(trace: TeamTrace, hub: str) -> tuple[int, float, list[TeamCall]]:
    """Concurrent requests to the hub from different requests, and how far it served them one at a time."""
    incoming = sorted((c for c in trace.calls if c.call.callee == hub and c.server is not None and c.ok), key=_order)
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    pairs = ((a, b) for j, b in enumerate(incoming) for a in incoming[max(0, j - COMPARED) : j])
    for a, b in pairs:
        same_request = a.request is not None and b.request is not None and a.request.span_id == b.request.span_id
        concurrent = b.span.start_time_unix_nano < a.span.end_time_unix_nano
        if same_request or not concurrent:
            continue
        assert a.server is not None and b.server is not None  # noqa: S101 - filtered above
        overlap = max(
            0,
            min(a.server.end_time_unix_nano, b.server.end_time_unix_nano)
            - max(a.server.start_time_unix_nano, b.server.start_time_unix_nano),
        )
        s = apart(
            a.server.end_time_unix_nano - a.server.start_time_unix_nano,
            b.server.end_time_unix_nano - b.server.start_time_unix_nano,
            overlap,
        )
        count += 1
        serial += s
        if s > 0:
            behind.append(b)
    return count, (serial / count if count else 0.0), behind


def _bottleneck(trace: TeamTrace, hubs: list[str]) -> Part:
    weight = PROCESS_WEIGHTS["bottleneck"]
    if not hubs:
        return Part(value=1.0, weight=weight, formula="1: no agent delegated to or served two or more agents")
    failed_all = [c for c in trace.calls if not c.ok]
    worst, worst_hub = 0.0, ""
    fired: set[str] = set()
    evidence: list[str] = []
    agents: set[str] = set()
    behind: list[TeamCall] = []
    figures: dict[str, float | int] = {}
    for hub in hubs:
        penalties: list[float] = []
        requests = trace.requests_of(hub)
        calls, serial, serial_calls = _serialised(trace, [r.span_id for r in requests])
        if serial > 0:
            penalties.append(serial / calls)
            fired.add("hub_serialises")
            evidence.append(f"{hub} ran independent calls one after another (serialisation {serial:.2f} of {calls})")
            behind += serial_calls
        queued_pairs, queued, queued_calls = _queueing(trace, hub)
        if queued > 0:
            penalties.append(queued)
            fired.add("requests_queue")
            evidence.append(f"concurrent requests queued on {hub} ({queued:.2f} over {queued_pairs} pairs)")
            behind += queued_calls
        share, own_ns = _dominance(trace, requests)
        figures[f"{hub}.own_share"] = share
        if share > DOMINANCE_THRESHOLD:
            penalties.append((share - DOMINANCE_THRESHOLD) / (1 - DOMINANCE_THRESHOLD))
            fired.add("hub_dominates")
            evidence.append(
                f"{hub}'s own time ({own_ns / 1e6:.1f} ms) is {share:.0%} of its requests' work: the team waited on it"
            )
        into = [c for c in trace.calls if c.call.callee == hub and (not c.ok or c.duplicate_of is None)]
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
    formula = f"1 - {worst:.3f} (worst hub: {worst_hub})" if worst_hub else "1: no hub limited the team"
    if not evidence:
        evidence.append(f"hub(s) {_names(hubs)}: no evidence that they limited the team")
    return Part(
        value=value,
        weight=weight,
        formula=f"{formula} = {value:.3f}",
        figures=figures,
        fired=sorted(fired),
        evidence=evidence,
        agents=sorted(agents),
        calls=_ids(sorted({c.id: c for c in behind}.values(), key=_order)),
    )


def _robustness(trace: TeamTrace, ctx: EvalContext) -> Part:
    weight = PROCESS_WEIGHTS["robustness"]
    counted = [c for c in trace.calls if not c.ok or not (c.duplicate_of is not None or c.relay)]
    failed = [c for c in counted if not c.ok]
    unverified = [c for c in counted if c.ok and c.server is None]
    orphans = trace.orphan_servers
    slots = len(counted) + len(orphans)
    bad = len(failed) + len(unverified) + len(orphans)
    base = 1.0 - bad / slots if slots else 1.0
    # the store's verdict when it tracked the trace (it knows which spans are still open); else the tree's
    incomplete = not ctx.completeness.complete if ctx.completeness is not None else bool(ctx.tree.orphans)
    value = base * (INCOMPLETE_FACTOR if incomplete else 1.0)
    fired: list[str] = []
    evidence: list[str] = []
    if failed:
        fired.append("failed_calls")
        kinds = Counter(f"{c.call.caller} → {c.call.callee} ({_why(c)})" for c in failed)
        evidence.append(f"{len(failed)} of {slots} calls failed: " + _counted(kinds))
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
            + (f" (to {_names(c.call.callee for c in unverified)})" if unverified else "")
            + f", {len(orphans)} request(s) whose caller's span never arrived"
        )
    if incomplete:
        fired.append("incomplete_trace")
        evidence.append("the trace was incomplete when evaluated")
    formula = f"1 - ({len(failed)} failed + {len(unverified) + len(orphans)} unverified) / {slots} calls"
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
            "retries": len(retries),
            "incomplete": int(incomplete),
        },
        fired=fired,
        evidence=evidence,
        agents=sorted({c.call.callee for c in behind}),
        calls=_ids(sorted(behind, key=_order)),
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


def _information(trace: TeamTrace) -> Part:
    weight = PROCESS_WEIGHTS["information_flow"]
    hops = [c for c in trace.calls if c.delegated and c.ok]
    if not hops:
        return Part(value=1.0, weight=weight, formula="1: no agent passed work on to another")
    relays = [c for c in hops if c.relay]
    value = 1.0 - len(relays) / len(hops)
    return Part(
        value=value,
        weight=weight,
        formula=f"1 - {len(relays)} relay hops / {len(hops)} delegating hops = {value:.3f}",
        figures={"delegating_hops": len(hops), "relay_hops": len(relays)},
        fired=["relays_add_nothing"] if relays else [],
        evidence=[f"passed work on and added nothing: {_names(c.call.callee for c in relays)}"] if relays else [],
        agents=sorted({c.call.callee for c in relays}),
        calls=_ids(relays),
    )


_STRENGTHS = {
    "participation": "every member contributed",
    "efficiency": "no message between agents was wasted (failed, duplicated, late or relayed)",
    "parallelism": "independent sub-tasks ran side by side",
    "robustness": "every call succeeded and the trace is complete",
    "information_flow": "every agent that passed work on added to it",
}


def assess_coordination(ctx: EvalContext) -> CoordinationResult:
    """Score the team's coordination in ``ctx`` (see the module docstring for the formulas)."""
    trace = TeamTrace.build(ctx.tree, ctx.hosts)
    members = _members(ctx)
    hubs = _hubs(trace)
    parts: dict[str, Part] = {
        "outcome": _outcome(ctx),
        "participation": _participation(trace, members),
        "efficiency": _efficiency(trace),
        "parallelism": _parallelism(trace),
        "bottleneck": _bottleneck(trace, hubs),
        "robustness": _robustness(trace, ctx),
        "information_flow": _information(trace),
    }
    process = sum(PROCESS_WEIGHTS[name] * (parts[name].value or 0.0) for name in PROCESS_WEIGHTS)
    outcome = parts["outcome"].value
    outcome_factor = 1.0 if outcome is None else OUTCOME_FLOOR + (1 - OUTCOME_FLOOR) * outcome
    participation = parts["participation"].value or 0.0
    quality = participation * process
    score = outcome_factor * quality

    losses: list[tuple[float, str, str]] = []
    if outcome is not None and outcome < 1:
        losses.append((quality * (1 - outcome_factor), "outcome", parts["outcome"].evidence[0]))
    if participation < 1:
        losses.append(
            (outcome_factor * process * (1 - participation), "participation", parts["participation"].evidence[0])
        )
    for name, weight in PROCESS_WEIGHTS.items():
        part = parts[name]
        if part.fired:
            loss = outcome_factor * participation * weight * (1 - (part.value or 0.0))
            losses.append((loss, name, part.evidence[0]))
    losses.sort(key=lambda item: (-item[0], item[1]))
    strengths: list[str] = []
    if outcome == 1.0:
        strengths.append("the team answered the task")
    for name, text in _STRENGTHS.items():
        part = parts[name]
        if part.value == 1.0 and not part.fired and not part.formula.startswith("1: no"):
            strengths.append(text)
    if hubs and not parts["bottleneck"].fired and not parts["outcome"].fired:
        strengths.append(f"hub {_names(hubs)} coordinated without limiting the team")
    return CoordinationResult(
        score=score,
        coordination_quality=quality,
        outcome_factor=outcome_factor,
        process=process,
        parts=parts,
        hubs=hubs,
        members=members,
        fired=[f"{name}.{f}" for name, part in parts.items() for f in part.fired],
        strengths=strengths,
        weaknesses=[text for _, _, text in losses],
    )


class CoordinationEvaluator(Evaluator):
    """How well the team coordinated, judged from evidence in the trace (the score's main part)."""

    name = "coordination"
    tier = TIER_JUDGEMENT
    blocking = True  # computes only: run on a worker thread
    description = (
        "Coordination quality from trace evidence: outcome, participation, efficiency, parallelism, "
        "real bottlenecks, robustness, information flow."
    )

    async def evaluate(self, ctx: EvalContext) -> CoordinationResult:
        """Assess the scenario's trace."""
        return assess_coordination(ctx)

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """The coordination score."""
        return result.score if isinstance(result, CoordinationResult) else None
