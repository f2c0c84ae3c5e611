"""The coordination score: how well the team worked together, judged from evidence in the trace.

The agent graph's shape (star, chain, mesh...) is described by the graph evaluator and never
scored by itself: a hub that delegates in parallel and merges the answers is doing its job.
The score instead rests on what the trace shows the team *did*, in parts that each have a
formula, a confidence, and the calls and agents behind them (``docs/scoring.md`` has the
worked examples)::

    score                = outcome_factor * coordination_quality
    outcome_factor       = 0.4 + 0.6 * answer_quality          (1 when there is no team outcome)
    coordination_quality = 0.22 participation + 0.18 efficiency + 0.14 parallelism
                           + 0.10 bottleneck + 0.16 robustness + 0.20 information_flow

Two numbers, two meanings: **answer quality** (the outcome part) says how good the team's
answer was; **coordination quality** says how well the agents worked together to get it. No
part multiplies the others: a member that did nothing costs its share of participation, not
the whole score.

- **outcome** (answer quality): 0 when the team gave no answer; else 1, or
  ``0.5 + 0.5 * min(1, s / 0.4)`` when the scenario has reference texts, ``s`` the answer's
  similarity to them (mean of TF-IDF cosine and ROUGE-L). With no answer the score is at most
  0.4, below any passing mark.
- **participation**: ``1 - (needed idle + 0.5 * other idle) / members``. A member contributed
  when it answered a useful call (or, never called itself, made one). An idle member counts
  fully when the trace shows the team needed it (it was called, it was down, or the task or a
  message between agents named it as a word; a peers directory names nobody), half otherwise:
  declared but not asked for.
- **efficiency**: useful calls / (the agents' calls + members that were down + needed members
  no agent ever called: work the team could not, or did not, hand out). Not
  useful: failed, duplicate (the same request as an earlier successful one), late (its
  result arrived after the request it was for had been answered), into a relay that added
  nothing, or unverified.
- **parallelism**: ``1 - max(0, s - 0.05) / 0.95`` with ``s = Σ serialisation / calls`` over
  the work calls of every request: a call's serialisation is how far it ran after a call of
  the same request it did not depend on (1 one after the other, 0 side by side, a fifth of the
  shorter call forgiven as jitter: :func:`~coordbench.evals.evidence.serialisation`); the
  first 5% is the noise floor. A hub that serialised its calls is named here.
- **bottleneck**: ``1 - worst hub penalty``; a hub (an agent delegating to, or serving, two or
  more agents) is penalised only by evidence that it held the team up: requests from different
  callers queued on it (the share of its concurrent requests it served strictly one after the
  other, :func:`_queued`; beyond the same 5% floor), or failures concentrate on it (two or more of
  its requests failed: its failed share). A hub that ran independent calls one after another is
  named by parallelism. Each delegating agent's own share of its requests' time is reported as
  a figure (``<agent>.own_share``) and not scored (:data:`OWN_SHARE_NOTE`).
- **robustness**: ``1 - (failed + unverified + down) / (calls + down)``, ``* 0.75`` if the
  trace is incomplete; unverified: calls whose callee's span never arrived and requests whose
  caller's span never did; down: members the assessor could not reach.
- **information_flow**: the mean of what can be measured of the messages' content: relays
  (``1 - (relay hops + unshown) / (delegating hops + unshown)``, unshown: work handed to an
  agent whose spans never arrived), what answers add (leaf work: the share of an answer's
  word trigrams not in its request, full marks from 0.1 up), uptake (delegating work: whether
  an agent's answer carries what its callees told it), and repetition (answers that repeat the
  agent's own earlier answers). Measured on captured text, else on fingerprints
  (:mod:`coordbench.sketch`), at a lower confidence.

Every part is 1 when there is nothing to fault (no calls to pair, no hub...), so leaving a
part out never raises a score, and each moves one way with each kind of evidence. Each part's
``confidence`` says how far its evidence was established (1: observed; less where it rests on
fingerprints, or where a dependency could not be told and was given the benefit of the doubt).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.base import TIER_JUDGEMENT, EvalContext, Evaluator
from coordbench.evals.evidence import (
    COMPARED,
    FINGERPRINT_CONFIDENCE,
    MIN_SAMPLE,
    OVERLAP_SLACK,
    TeamCall,
    TeamTrace,
    carried,
    depends_on,
    serialisation,
)
from coordbench.evals.text import reference_similarity
from coordbench.evals.textsim import tokens
from coordbench.graph.agentgraph import HOST
from coordbench.sketch import containment
from coordbench.spans import SpanData, StatusCode

__all__ = [
    "NOISE_FLOOR",
    "PROCESS_WEIGHTS",
    "CoordinationEvaluator",
    "CoordinationResult",
    "Part",
    "assess_coordination",
]

PROCESS_WEIGHTS: dict[str, float] = {
    "participation": 0.22,
    "efficiency": 0.18,
    "parallelism": 0.14,
    "bottleneck": 0.10,
    "robustness": 0.16,
    "information_flow": 0.20,
}
"""Weights of the coordination parts (they sum to 1)."""
OUTCOME_FLOOR = 0.4
"""The outcome factor when the team gave no answer: the score cannot reach 0.4."""
GOOD_REFERENCE_SIMILARITY = 0.4
"""Similarity to the references at which an answer counts as fully matching them."""
OWN_SHARE_NOTE = (
    "An agent's own share (its requests' time outside the work it waited for) is reported, not scored: "
    "it is the agent's own processing, and beside two CPU-bound processes the same star's coordinator "
    "went from 0.25 to 0.43 of its time."
)
"""Why ``<agent>.own_share`` is a figure of the bottleneck part and never a penalty."""
INCOMPLETE_FACTOR = 0.75
"""Robustness factor for a trace that was incomplete when evaluated."""
NOISE_FLOOR = 0.05
"""Share of serialisation (and of queueing) no timing evidence is read from: what a busy machine adds."""
UNNEEDED_IDLE = 0.5
"""What an idle member the trace shows no need for costs, in members (a needed one costs 1)."""
ECHO_NOVELTY = 0.1
"""An answer adding less than this share of new word trigrams to its request only echoes it."""
UPTAKE = 0.25
"""Share of what its callees added an agent's answer must carry to have taken their work up."""
REPEAT = 0.8
"""Share of an answer found in the agent's own earlier answers above which it repeats itself."""
_LIST = 8


class Part(BaseModel):
    """One part of the coordination score.

    Attributes:
        value: In [0, 1]; 1 when there is nothing to fault. ``None``: cannot be judged (the
            outcome in ground-truth mode).
        weight: Its weight in coordination quality (``None`` for the outcome).
        confidence: How far its evidence was established, in [0, 1]: 1 when observed; lower
            where it rests on fingerprints or gave a dependency the benefit of the doubt.
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
    confidence: float = 1.0
    formula: str
    figures: dict[str, float | int] = Field(default_factory=dict[str, float | int])
    fired: list[str] = Field(default_factory=list[str])
    evidence: list[str] = Field(default_factory=list[str])
    agents: list[str] = Field(default_factory=list[str])
    calls: list[str] = Field(default_factory=list[str])


class CoordinationResult(BaseModel):
    """The coordination score of a scenario and its parts.

    Attributes:
        score: ``outcome_factor * coordination_quality``, in [0, 1].
        answer_quality: The outcome part (``None`` in ground-truth mode): how good the answer was.
        coordination_quality: The weighted mean of the coordination parts: how well the agents
            worked together, apart from the answer.
        outcome_factor: ``0.4 + 0.6 * answer_quality`` (1 without a team outcome).
        confidence: The parts' confidences, weighted as the parts are.
        parts: Each part, by name.
        hubs: Agents that delegated to, or served, two or more agents.
        members: The members the participation is counted over.
        fired: Every piece of evidence that lowered the score, by part.
        strengths: What went well, from parts that scored full marks with something to judge.
        weaknesses: What lowered the score, largest loss first.
    """

    model_config = ConfigDict(frozen=True)

    score: float
    answer_quality: float | None = None
    coordination_quality: float
    outcome_factor: float
    confidence: float = 1.0
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


def _floored(share: float) -> float:
    """``share`` with the noise floor taken off and the rest scaled back to [0, 1]."""
    return max(0.0, share - NOISE_FLOOR) / (1.0 - NOISE_FLOOR)


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


def _needs(ctx: EvalContext, trace: TeamTrace, members: list[str]) -> dict[str, str]:
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


def _participation(trace: TeamTrace, members: list[str], needs: dict[str, str]) -> Part:
    weight = PROCESS_WEIGHTS["participation"]
    if not members:
        return Part(value=1.0, weight=weight, formula="1: no members declared or seen")
    called = {c.call.callee for c in trace.calls}
    contributed = {c.call.callee for c in trace.calls if c.useful}
    contributed |= {c.call.caller for c in trace.team_calls if c.useful and c.call.caller not in called}
    idle = [m for m in members if m not in contributed]
    needed = [m for m in idle if m in needs]
    spare = [m for m in idle if m not in needs]
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
        evidence.append(f"not used, and nothing in the trace asked for them (half a member each): {_names(spare)}")
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
        },
        fired=fired,
        evidence=evidence,
        agents=sorted(idle),
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


def _unasked(needs: dict[str, str], members: list[str], trace: TeamTrace, down: dict[str, str]) -> list[str]:
    """Needed members no agent ever called or heard from (and not down): work the team never handed out."""
    seen = {c.call.callee for c in trace.calls} | {c.call.caller for c in trace.calls}
    return [m for m in members if m in needs and m not in seen and m not in down]


def _efficiency(trace: TeamTrace, down: dict[str, str], unasked: list[str]) -> Part:
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
    if down:
        fired.append("members_down")
        evidence.append(f"work that could not be given to members that were down: {_names(down)}")
    if unasked:
        fired.append("work_not_given")
        evidence.append(f"work never given to members the team needed: {_names(unasked)} (see participation)")
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
        calls=_ids(sorted(behind, key=_order)),
    )


def _counted(counter: Counter[str]) -> str:
    return ", ".join(f"{k} *{n}" if n > 1 else k for k, n in sorted(counter.items()))


def _order(c: TeamCall) -> tuple[int, str]:
    return c.span.start_time_unix_nano, c.id


def _serialised(trace: TeamTrace, requests: Iterable[str]) -> tuple[int, float, list[TeamCall], float]:
    """Work calls of these requests, their serialisation, the calls behind it, and the judgements' confidence.

    The confidence is the mean over the pairs compared (0 for a pair whose dependency could not be told).

    A call's serialisation is the largest :func:`~coordbench.evals.evidence.serialisation`
    with any call of the same request that started before it and that it does not depend
    on (0 for the first call). A relay's own requests are left out: the call into the relay
    stands for the work it passed on.
    """
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    trust, judged = 0.0, 0
    relayed = trace.relay_requests
    for request in requests:
        if request in relayed:
            continue
        work = sorted((c for c in trace.by_request.get(request, []) if c.work), key=_order)
        for i, b in enumerate(work):
            count += 1
            worst = 0.0
            for a in reversed(work[max(0, i - COMPARED) : i]):  # the latest first: one after another shows at once
                value, confidence = serialisation(a, b)
                trust += confidence
                judged += 1
                if value is not None and value > worst:
                    worst = value
                    if worst >= 1.0:
                        break
            serial += worst
            if worst > 0:
                behind.append(b)
    return count, serial, sorted(behind, key=_order), (trust / judged if judged else 1.0)


def _parallelism(trace: TeamTrace) -> Part:
    weight = PROCESS_WEIGHTS["parallelism"]
    count, serial, behind, confidence = _serialised(trace, sorted(trace.by_request))
    share = serial / count if count else 0.0
    value = 1.0 - _floored(share)
    figures: dict[str, float | int] = {"calls": count, "serialisation": serial}
    if value >= 1.0:
        formula = (
            f"1: no call waited for one it could have run beside (serialisation {share:.3f}, within the "
            f"{NOISE_FLOOR} noise floor)"
            if serial
            else "1: no call waited for one it could have run beside"
        )
        return Part(value=1.0, weight=weight, confidence=confidence, formula=formula, figures=figures)
    callers = Counter(c.call.caller for c in behind)
    return Part(
        value=value,
        weight=weight,
        confidence=confidence,
        formula=f"1 - max(0, {serial:.3f} serialised / {count} calls - {NOISE_FLOOR}) / {1 - NOISE_FLOOR:g}"
        f" = {value:.3f}",
        figures=figures,
        fired=["serialised_work"],
        evidence=[
            f"calls that waited for others they did not depend on (serialisation {serial:.2f} over {count} calls): "
            + ", ".join(f"{caller} ran {n} call(s) one after another" for caller, n in sorted(callers.items()))
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
    """The shortest time the work calls could take: the longest chain of calls that (may) depend on each other."""
    chains: list[int] = []
    for i, b in enumerate(work):
        first = max(0, i - COMPARED)
        before = [
            chains[first + j]
            for j, a in enumerate(work[first:i])
            if b.span.start_time_unix_nano >= a.span.end_time_unix_nano and depends_on(b, a).value is not False
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


def _queueing(trace: TeamTrace, hub: str) -> tuple[int, float, list[TeamCall]]:
    """Concurrent requests to the hub from different requests, and the share it served one after the other."""
    incoming = sorted((c for c in trace.calls if c.call.callee == hub and c.server is not None and c.ok), key=_order)
    count, serial = 0, 0.0
    behind: list[TeamCall] = []
    pairs = ((a, b) for j, b in enumerate(incoming) for a in incoming[max(0, j - COMPARED) : j])
    for a, b in pairs:
        same_request = a.request is not None and b.request is not None and a.request.span_id == b.request.span_id
        concurrent = b.span.start_time_unix_nano < a.span.end_time_unix_nano
        if same_request or not concurrent:
            continue
        count += 1
        if _queued(a, b):
            serial += 1.0
            behind.append(b)
    return count, (serial / count if count else 0.0), behind


def _bottleneck(trace: TeamTrace, hubs: list[str]) -> Part:
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
    worst, worst_hub = 0.0, ""
    fired: set[str] = set()
    evidence: list[str] = []
    agents: set[str] = set()
    behind: list[TeamCall] = []
    for hub in hubs:
        penalties: list[float] = []
        queued_pairs, queued, queued_calls = _queueing(trace, hub)
        figures[f"{hub}.queued"] = queued
        if _floored(queued) > 0:
            penalties.append(_floored(queued))
            fired.add("requests_queue")
            evidence.append(
                f"concurrent requests queued on {hub} ({queued:.2f} over {queued_pairs} pairs, beyond the "
                f"{NOISE_FLOOR} noise floor)"
            )
            behind += queued_calls
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
    formula = f"1 - {worst:.3f} (worst hub: {worst_hub})" if worst_hub else "1: no hub held the team up"
    if not evidence:
        evidence.append(f"hub(s) {_names(hubs)}: no evidence that they held the team up")
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


class _Content:
    """What the messages' content shows: echoes, uptake, repetition (each judged call with its confidence)."""

    def __init__(self) -> None:
        self.echoes: list[TeamCall] = []
        self.leaves = 0
        self.ignored: list[TeamCall] = []
        self.delegating = 0
        self.repeats: list[TeamCall] = []
        self.answers = 0
        self.trust: list[float] = []


def _added(c: TeamCall) -> tuple[float, float] | None:
    """The share of an answer's word trigrams not in its request, and the confidence of that figure."""
    reply, request = c.call.response_text, c.call.request_text
    if reply is not None and request is not None:
        words = tokens(reply)
        grams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)} or {tuple(words)}
        asked_words = tokens(request)
        asked = {tuple(asked_words[i : i + 3]) for i in range(len(asked_words) - 2)} or {tuple(asked_words)}
        return (len(grams - asked) / len(grams), 1.0) if words else None
    printed, asked_print = c.call.response_fingerprint, c.call.request_fingerprint
    if printed and asked_print is not None:
        inside = containment(printed, asked_print)
        if inside is not None and inside.sample >= MIN_SAMPLE:
            return 1.0 - inside.value, FINGERPRINT_CONFIDENCE
    return None


def _content(trace: TeamTrace) -> _Content:
    found = _Content()
    answered = [c for c in trace.team_calls if c.work and c.server is not None and not c.relay]
    by_agent: dict[str, list[TeamCall]] = defaultdict(list)
    for c in sorted(answered, key=_order):
        assert c.server is not None  # noqa: S101 - filtered above
        below = [d for d in trace.by_request.get(c.server.span_id, []) if d.work]
        if below:  # delegating work: does its answer carry what its callees told it?
            judged = [
                carried(d.call.response_text, d.call.response_fingerprint, into_text=c.call.response_text,
                        into_print=c.call.response_fingerprint, asked_text=d.call.request_text,
                        asked_print=d.call.request_fingerprint, threshold=UPTAKE)
                for d in below
            ]  # fmt: skip
            known = [j for j in judged if j.value is not None]
            if known:
                found.delegating += 1
                found.trust.append(min(j.confidence for j in known))
                if not any(j.value for j in known):
                    found.ignored.append(c)
        else:  # leaf work: does its answer add to what it was asked?
            added = _added(c)
            if added is not None:
                found.leaves += 1
                found.trust.append(added[1])
                if added[0] < ECHO_NOVELTY:
                    found.echoes.append(c)
        earlier = by_agent[c.call.callee]
        repeated = _repeats(c, earlier)
        if repeated is not None:
            found.answers += 1
            found.trust.append(repeated[1])
            if repeated[0]:
                found.repeats.append(c)
        earlier.append(c)
    return found


def _repeats(c: TeamCall, earlier: list[TeamCall]) -> tuple[bool, float] | None:
    """Whether an answer is mostly the agent's own earlier answer to another request (and the confidence)."""
    if not earlier:
        return None
    reply = c.call.response_text
    if reply is not None and all(e.call.response_text is not None for e in earlier):
        words = tokens(reply)
        grams = {tuple(words[i : i + 3]) for i in range(len(words) - 2)}
        if not grams:
            return None
        before: set[tuple[str, ...]] = set()
        for e in earlier:
            w = tokens(e.call.response_text or "")
            before |= {tuple(w[i : i + 3]) for i in range(len(w) - 2)}
        return len(grams & before) / len(grams) >= REPEAT, 1.0
    printed = c.call.response_fingerprint
    prints = [e.call.response_fingerprint for e in earlier if e.call.response_fingerprint]
    if printed and prints:
        best = max((containment(printed, p) for p in prints), key=lambda e: -1 if e is None else e.value, default=None)
        if best is not None and best.sample >= MIN_SAMPLE:
            return best.value >= REPEAT, FINGERPRINT_CONFIDENCE
    return None


def _information(trace: TeamTrace) -> Part:
    weight = PROCESS_WEIGHTS["information_flow"]
    hops = [c for c in trace.calls if c.delegated and c.ok]
    relays = [c for c in hops if c.relay]
    # a call whose callee's spans never arrived: what that agent did with the work cannot be shown,
    # so it counts as a hop that added nothing (an incomplete trace is never read in the team's favour)
    unshown = [c for c in trace.team_calls if c.work and c.server is None]
    content = _content(trace)
    measures: dict[str, float] = {}
    fired: list[str] = []
    evidence: list[str] = []
    agents: set[str] = set()
    behind: list[TeamCall] = []

    def found(name: str, calls: list[TeamCall], said: str) -> None:
        """Evidence ``name`` behind ``calls``: ``said``, then the callees named."""
        if calls:
            fired.append(name)
            evidence.append(f"{said}: {_names(c.call.callee for c in calls)}")
            agents.update(c.call.callee for c in calls)
            behind.extend(calls)

    if hops or unshown:
        measures["relays"] = 1.0 - (len(relays) + len(unshown)) / (len(hops) + len(unshown))
        found("relays_add_nothing", relays, "passed work on and added nothing")
        found("content_unshown", unshown,
              "work handed to agents whose spans never arrived, so what they added cannot be shown")  # fmt: skip
    if content.leaves:
        measures["added"] = 1.0 - len(content.echoes) / content.leaves
        found("echoes", content.echoes, f"answers that only echoed what they were asked (under {ECHO_NOVELTY:.0%} new)")
    if content.delegating:
        measures["uptake"] = 1.0 - len(content.ignored) / content.delegating
        found("ignores_inputs", content.ignored, "answers that carried none of what the agents' callees told them")
    if content.answers:
        measures["repetition"] = 1.0 - len(content.repeats) / content.answers
        found("repeats_itself", content.repeats, "answers that repeated the agent's own earlier answers")
    if not measures:
        return Part(value=1.0, weight=weight, confidence=0.5 if not hops else 1.0,
                    formula="1: no agent passed work on, and no message content or fingerprint to read")  # fmt: skip
    value = sum(measures.values()) / len(measures)
    confidence = min(content.trust) if content.trust else 0.5  # relays alone: content unread
    formula = "mean(" + ", ".join(f"{k} {v:.3f}" for k, v in sorted(measures.items())) + f") = {value:.3f}"
    return Part(
        value=value,
        weight=weight,
        confidence=confidence,
        formula=formula,
        figures={
            "delegating_hops": len(hops),
            "relay_hops": len(relays),
            "unshown_hops": len(unshown),
            "leaf_answers": content.leaves,
            "echoes": len(content.echoes),
            "delegating_answers": content.delegating,
            "ignored_inputs": len(content.ignored),
            "repeated_answers": len(content.repeats),
        },
        fired=fired,
        evidence=evidence,
        agents=sorted(agents),
        calls=_ids(sorted({c.id: c for c in behind}.values(), key=_order)),
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
    needs = _needs(ctx, trace, members)
    parts: dict[str, Part] = {
        "outcome": _outcome(ctx),
        "participation": _participation(trace, members, needs),
        "efficiency": _efficiency(trace, ctx.unreachable, _unasked(needs, members, trace, ctx.unreachable)),
        "parallelism": _parallelism(trace),
        "bottleneck": _bottleneck(trace, hubs),
        "robustness": _robustness(trace, ctx),
        "information_flow": _information(trace),
    }
    quality = sum(PROCESS_WEIGHTS[name] * (parts[name].value or 0.0) for name in PROCESS_WEIGHTS)
    confidence = sum(PROCESS_WEIGHTS[name] * parts[name].confidence for name in PROCESS_WEIGHTS)
    outcome = parts["outcome"].value
    outcome_factor = 1.0 if outcome is None else OUTCOME_FLOOR + (1 - OUTCOME_FLOOR) * outcome
    score = outcome_factor * quality

    losses: list[tuple[float, str, str]] = []
    if outcome is not None and outcome < 1:
        losses.append((quality * (1 - outcome_factor), "outcome", parts["outcome"].evidence[0]))
    for name, weight in PROCESS_WEIGHTS.items():
        part = parts[name]
        if part.fired:
            loss = outcome_factor * weight * (1 - (part.value or 0.0))
            losses.extend((loss, name, text) for text in part.evidence[:2])
    losses.sort(key=lambda item: (-item[0], item[1]))
    return CoordinationResult(
        score=score,
        answer_quality=outcome,
        coordination_quality=quality,
        outcome_factor=outcome_factor,
        confidence=confidence,
        parts=parts,
        hubs=hubs,
        members=members,
        fired=[f"{name}.{f}" for name, part in parts.items() for f in part.fired],
        strengths=_strengths(parts, trace, hubs),
        weaknesses=list(dict.fromkeys(text for _, _, text in losses)),
    )


def _strengths(parts: dict[str, Part], trace: TeamTrace, hubs: list[str]) -> list[str]:
    """What went well, said only of parts at full marks with something to judge (never beside a fault it denies)."""
    strengths: list[str] = []
    if parts["outcome"].value == 1.0:
        strengths.append("the team answered the task")
    relays_anywhere = any(c.relay for c in trace.calls)
    for name, text in _STRENGTHS.items():
        part = parts[name]
        if part.value != 1.0 or part.fired or part.formula.startswith("1: no"):
            continue
        if name == "efficiency" and relays_anywhere:
            continue  # a relay on the host's own call is no waste between agents, but the claim would read as denial
        strengths.append(text)
    if hubs and not parts["bottleneck"].fired and not parts["outcome"].fired:
        strengths.append(f"hub {_names(hubs)} coordinated without holding the team up")
    return strengths


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
