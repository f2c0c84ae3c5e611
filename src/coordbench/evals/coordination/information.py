"""The information-flow part: relays, what answers add, uptake and repetition, from text or fingerprints."""

from __future__ import annotations

from collections import defaultdict

from coordbench.evals.coordination.model import (
    ECHO_NOVELTY,
    PROCESS_WEIGHTS,
    REPEAT,
    UPTAKE,
    Part,
    call_ids,
    call_order,
    names,
)
from coordbench.evals.evidence import (
    FINGERPRINT_CONFIDENCE,
    MIN_SAMPLE,
    TeamCall,
    TeamTrace,
    carried,
)
from coordbench.evals.textsim import tokens
from coordbench.sketch import containment


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
    for c in sorted(answered, key=call_order):
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


def information_part(trace: TeamTrace) -> Part:
    """The mean of what can be measured of the messages: relays, what answers add, uptake, repetition."""
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
            evidence.append(f"{said}: {names(c.call.callee for c in calls)}")
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
        calls=call_ids(sorted({c.id: c for c in behind}.values(), key=call_order)),
    )
