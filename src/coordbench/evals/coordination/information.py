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
    COMPARED,
    FINGERPRINT_CONFIDENCE,
    MIN_SAMPLE,
    TeamCall,
    TeamTrace,
    carried,
    trigrams,
)
from coordbench.sketch import Estimate, containment


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
        self.senders: dict[str, str] = {}  # call id -> the agent that said it, for one-way messages (the caller)


class _Said:
    """One message an agent sent: an answer (the callee's), or a one-way message (the caller's)."""

    __slots__ = ("call", "grams", "print", "sender", "time")

    def __init__(self, call: TeamCall, sender: str, text: str | None, printed: tuple[int, ...] | None,
                 time: int) -> None:  # fmt: skip
        self.call, self.sender, self.time = call, sender, time
        self.grams: frozenset[tuple[str, ...]] | None = None
        if text is not None:  # its word trigrams: none for a message of fewer than three words
            grams = trigrams(text)
            self.grams = grams if not grams or len(next(iter(grams))) == 3 else frozenset[tuple[str, ...]]()
        self.print = printed


def _added(c: TeamCall) -> tuple[float, float] | None:
    """The share of an answer's word trigrams not in its request, and the confidence of that figure."""
    reply, request = c.reply_text, c.call.request_text
    if reply is not None and request is not None:
        grams = trigrams(reply)
        return (len(grams - trigrams(request)) / len(grams), 1.0) if grams else None
    printed, asked_print = c.reply_print, c.call.request_fingerprint
    if printed and asked_print is not None:
        inside = containment(printed, asked_print)
        if inside is not None and inside.sample >= MIN_SAMPLE:
            return 1.0 - inside.value, FINGERPRINT_CONFIDENCE
    return None


def _messages(trace: TeamTrace) -> list[_Said]:
    """Every message an agent sent with content: answers, and one-way messages (a reply with no text).

    In the order their calls started (then span id): the order a team's requests were made,
    which a busy machine does not reorder as it does the order answers come back in.
    """
    said: list[_Said] = []
    for c in trace.team_calls:
        if not c.ok:
            continue
        if c.one_way and (c.call.request_text is not None or c.call.request_fingerprint):
            said.append(_Said(c, c.call.caller, c.call.request_text, c.call.request_fingerprint,
                              c.span.start_time_unix_nano))  # fmt: skip
        elif c.work and c.server is not None and not c.relay and not c.one_way:
            said.append(_Said(c, c.call.callee, c.reply_text, c.reply_print, c.span.start_time_unix_nano))
    said.sort(key=lambda s: (s.time, s.call.id))
    return said


def _content(trace: TeamTrace) -> _Content:
    found = _Content()
    answered = [c for c in trace.team_calls if c.work and c.server is not None and not c.relay and not c.one_way]
    for c in sorted(answered, key=call_order):
        assert c.server is not None  # noqa: S101 - filtered above
        below = [d for d in trace.by_request.get(c.server.span_id, []) if d.work]
        if below:  # delegating work: does its answer carry what its callees told it?
            judged = [
                carried(d.reply_text, d.reply_print, into_text=c.reply_text, into_print=c.reply_print,
                        asked_text=d.call.request_text, asked_print=d.call.request_fingerprint, threshold=UPTAKE)
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
    if any(c.one_way for c in trace.team_calls):
        _one_way_echoes(trace, found)
    by_agent: dict[str, _History] = defaultdict(_History)
    to_whom: dict[tuple[str, str], _History] = defaultdict(_History)
    for message in _messages(trace):
        # a message to one agent repeats what was said to that agent (the same words to others is a broadcast)
        one_way = message.call.one_way
        earlier = to_whom[message.sender, message.call.call.callee] if one_way else by_agent[message.sender]
        repeated = earlier.repeats(message)
        if repeated is not None:
            found.answers += 1
            found.trust.append(repeated[1])
            if repeated[0]:
                found.repeats.append(message.call)
                found.senders[message.call.id] = message.sender
        by_agent[message.sender].add(message)
        to_whom[message.sender, _audience(message)].add(message)
    return found


def _audience(message: _Said) -> str:
    """Who a message was said to: the callee of a one-way message, the caller of an answer."""
    return message.call.call.callee if message.call.one_way else message.call.call.caller


def _one_way_echoes(trace: TeamTrace, found: _Content) -> None:
    """One-way messages that add under :data:`ECHO_NOVELTY` new trigrams to what their sender had been told.

    An agent is told a message when it is sent to it, and an answer when it arrives.
    """
    heard: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    events: list[tuple[int, int, str, TeamCall]] = []  # (time, 0 answer heard / 1 message sent, id, call)
    for c in trace.team_calls:
        if not c.ok:
            continue
        if c.call.request_text is not None:
            events.append((c.span.start_time_unix_nano, 1, c.id, c))
        if c.reply_text is not None and not c.one_way:
            events.append((c.span.end_time_unix_nano, 0, c.id, c))
    events.sort(key=lambda e: e[:3])
    for _, sent, _, c in events:
        if not sent:
            heard[c.call.caller] |= trigrams(c.reply_text or "")
            continue
        grams = trigrams(c.call.request_text or "")
        if c.one_way and grams and heard[c.call.caller]:
            found.leaves += 1
            found.trust.append(1.0)
            if len(grams - heard[c.call.caller]) / len(grams) < ECHO_NOVELTY:
                found.echoes.append(c)
                found.senders[c.id] = c.call.caller
        heard[c.call.callee] |= grams


class _History:
    """What an agent said before (to everyone, or to one agent): read once, so each message costs its own size.

    The trigrams of every earlier message, united as they come (when every one of them has its
    text); otherwise their fingerprints, each distinct one once, in the order first said: the
    :data:`~coordbench.evals.evidence.COMPARED` said most lately (a message is compared with at
    most that many, as every pairwise measure is bounded, so a participant sending thousands of
    different messages without text costs linear time).
    """

    __slots__ = ("count", "grams", "prints", "texts")

    def __init__(self) -> None:
        self.count = 0
        self.texts = True  # every earlier message had its text
        self.grams: set[tuple[str, ...]] = set()
        self.prints: dict[tuple[int, ...], None] = {}

    def add(self, message: _Said) -> None:
        self.count += 1
        if message.grams is None:
            self.texts = False
        elif self.texts:
            self.grams |= message.grams
        if message.print and message.print not in self.prints:
            self.prints[message.print] = None
            if len(self.prints) > COMPARED:
                del self.prints[next(iter(self.prints))]  # the one first said longest ago

    def repeats(self, message: _Said) -> tuple[bool, float] | None:
        """Whether ``message`` is mostly these earlier messages (and the confidence).

        On text: the share of its trigrams said before. On fingerprints: its largest estimated
        containment in one earlier message (a fingerprint said twice gives the same estimate, and
        none exceeds 1, so the first reaching it ends the search).
        """
        if not self.count:
            return None
        if message.grams is not None and self.texts:
            if not message.grams:
                return None
            return len(message.grams & self.grams) / len(message.grams) >= REPEAT, 1.0
        printed = message.print
        if not printed or not self.prints:
            return None
        best: Estimate | None = None
        best_value = -1.0
        for earlier in self.prints:
            estimate = containment(printed, earlier)
            value = -1.0 if estimate is None else estimate.value
            if value > best_value:  # the first of equal estimates, as max() keeps it
                best, best_value = estimate, value
                if value >= 1.0:
                    break
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
            who = [content.senders.get(c.id, c.call.callee) for c in calls]
            evidence.append(f"{said}: {names(who)}")
            agents.update(who)
            behind.extend(calls)

    if hops or unshown:
        measures["relays"] = 1.0 - (len(relays) + len(unshown)) / (len(hops) + len(unshown))
        found("relays_add_nothing", relays, "passed work on and added nothing")
        found("content_unshown", unshown,
              "work handed to agents whose spans never arrived, so what they added cannot be shown")  # fmt: skip
    if content.leaves:
        measures["added"] = 1.0 - len(content.echoes) / content.leaves
        found(
            "echoes",
            content.echoes,
            f"messages that only echoed what they were asked or told (under {ECHO_NOVELTY:.0%} new)",
        )
    if content.delegating:
        measures["uptake"] = 1.0 - len(content.ignored) / content.delegating
        found("ignores_inputs", content.ignored, "answers that carried none of what the agents' callees told them")
    if content.answers:
        measures["repetition"] = 1.0 - len(content.repeats) / content.answers
        found("repeats_itself", content.repeats, "messages that repeated the agent's own earlier messages")
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
