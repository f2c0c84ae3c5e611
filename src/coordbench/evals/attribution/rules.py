"""The evidence rules of failure attribution: each reads the conversation and proposes findings.

A finding names an agent, the span where its fault shows, how strongly the rule points at it
(:data:`STRENGTH`), and the evidence in words. ``docs/attribution.md`` lists every rule.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from coordbench.evals.attribution.said import Conversation, Said, Unit, excerpt, units, weight
from coordbench.evals.evidence import FINGERPRINT_CONFIDENCE, MIN_SAMPLE, TeamCall
from coordbench.evals.textsim import tokens
from coordbench.sketch import containment, fingerprint
from coordbench.spans import SpanData, StatusCode
from coordbench.spantree import is_agent_call, is_agent_server_span

__all__ = ["STRENGTH", "Finding", "findings"]

STRENGTH: Mapping[str, float] = {
    "failed_call": 0.8,
    "member_down": 0.75,
    "member_silent": 0.3,
    "failed_step": 0.45,
    "wrong_content": 0.9,
    "lost_content": 0.75,
    "relay_changed": 0.65,
    "gave_up": 0.55,
    "declined": 0.5,
    "guessed": 0.4,
    "repeats_itself": 0.45,
    "repeated_request": 0.45,
    "ended_early": 0.45,
    "unasked_member": 0.4,
    "ignored_answer": 0.35,
    "answer_origin": 0.3,
    "never_said": 0.5,
}
"""Each rule's strength at full evidence (scaled down by how much of it there is; see each rule)."""
RECOVERED = 0.4
"""Factor on a failed call whose request was retried successfully (the team recovered)."""
IN_ANSWER = 0.6
"""Factor on what the team's answer itself says (an admission there is a symptom more often than a cause)."""
IN_REQUEST = 0.7
"""Factor on words an agent first said in a request it sent (it may ask, not admit)."""
PASSED_ON = 0.5
"""Share of the units an agent heard that an utterance must hold to pass them on."""
EXTRA = 0.4
"""Factor on following words of the answer beyond the expected one when no figure differs (it may only say more)."""
LOOKED_AHEAD = 8
"""Later utterances of a caller read for an answer's uptake (bounds the work on long traces)."""
REPEAT = 0.8
"""Share of an answer found in its agent's own earlier answers above which it repeats itself."""
LOST = 0.25
"""Share of the expected answer (beyond the task) the team's answer must lack, when no figure is lost, to follow it."""

_GAVE_UP = re.compile(
    r"\b(could ?n[o']t|was ?n[o']t able|were ?n[o']t able|unable to|failed to|not able to (?:find|access|get|"
    r"determine|complete)|can(?:no|')t (?:find|access|determine|complete|locate|retrieve)|no (?:relevant )?"
    r"(?:results|information|data|records) (?:was |were )?(?:found|available)|i do ?n[o']t know|"
    r"i (?:do ?n[o']t|did ?n[o']t) (?:have|find)|gave up|give up|not found)\b",
    re.IGNORECASE,
)
_DECLINED = re.compile(
    r"\b(i (?:can(?:no|')t|won't|will not|must not) (?:help|assist|do that|comply|provide)|i must decline|"
    r"i (?:refuse|decline)|as an ai\b|i'm sorry, but|i am sorry, but)",
    re.IGNORECASE,
)
_GUESSED = re.compile(
    r"\b(i assume|assuming|i guess|my best guess|i(?:'m| am) not sure|not certain|presumably|i (?:think|believe) "
    r"(?:it|the|that)|hypothetical|placeholder|made[- ]up|for illustration|cannot verify|could not verify|"
    r"unverified|without verif\w+|roughly estimate|i estimate)",
    re.IGNORECASE,
)
MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (("gave_up", _GAVE_UP), ("declined", _DECLINED),
                                                    ("guessed", _GUESSED))  # fmt: skip
"""An agent that gave up, declined, or guessed, as its own words say it (first match wins)."""


@dataclass(eq=False)
class Finding:
    """What one rule found: an agent, the span where it shows, how strongly, and why.

    Attributes:
        rule: The rule's name (:data:`STRENGTH`).
        agent: The agent it points at.
        span: The span where the fault shows (``None``: the agent left none, a member that was down).
        time: When it happened (ns), for ordering causes before symptoms.
        strength: How strongly it points at the agent, in [0, 1].
        evidence: What the trace shows, in words.
        failure: It is a visible failure (not only where the assumed-wrong answer came from).
        trail: The content units the fault carried (followed into the team's answer), if any.
    """

    rule: str
    agent: str
    span: SpanData | None
    time: int
    strength: float
    evidence: str
    failure: bool = True
    trail: frozenset[Unit] = field(default_factory=frozenset[Unit])


def _quote(s: Said, around: frozenset[Unit] = frozenset()) -> str:
    return f"“{excerpt(s.text, sorted(around))}”"


def _why(c: TeamCall) -> str:
    if c.call.error_type:
        return c.call.error_type
    return f"task {c.call.state}" if c.call.state else "error status"


def _failed_calls(conv: Conversation) -> list[Finding]:
    """Failed calls where the failure began (nothing failed below the callee, or it was down); silent members."""
    trace = conv.trace
    out: list[Finding] = []
    recovered = {c.retry_of for c in trace.calls if c.retry_of is not None and c.ok}
    answered = conv.final is not None and conv.final.call is not None and conv.final.call.ok
    for c in trace.calls:
        if c.ok:
            continue
        factor = RECOVERED if c.id in recovered else (0.75 if answered else 1.0)
        if c.server is None:
            out.append(Finding("member_down", c.call.callee, c.span, c.span.start_time_unix_nano,
                               STRENGTH["member_down"] * factor,
                               f"{c.call.caller} → {c.call.callee} failed ({_why(c)}) and no span of "
                               f"{c.call.callee} arrived: it was down or unreachable"))  # fmt: skip
            continue
        below = [d for d in trace.by_request.get(c.server.span_id, []) if not d.ok]
        if below:
            continue  # it failed because a call it made failed: the cause is further down
        out.append(Finding("failed_call", c.call.callee, c.server, c.server.start_time_unix_nano,
                           STRENGTH["failed_call"] * factor,
                           f"{c.call.callee} failed the request from {c.call.caller} ({_why(c)})"
                           + (", which was retried successfully" if c.id in recovered else "")))  # fmt: skip
    for c in trace.calls:
        if c.ok and c.server is None and not c.one_way:
            out.append(Finding("member_silent", c.call.callee, c.span, c.span.start_time_unix_nano,
                               STRENGTH["member_silent"],
                               f"{c.call.callee} answered {c.call.caller} but none of its spans arrived: what it did "
                               "cannot be shown", failure=False))  # fmt: skip
    shown = {f.agent for f in out if f.rule == "member_down"}
    for member, why in sorted(conv.unreachable.items()):
        if member in shown:
            continue  # the failed call to it shows it, at its span
        out.append(Finding("member_down", member, None, 0, STRENGTH["member_down"],
                           f"{member} could not be reached ({why})"))  # fmt: skip
    return out


def _failed_steps(conv: Conversation) -> list[Finding]:
    """An agent's own step (a tool call, a model call) that ended in error, where the error began."""
    tree = conv.trace.tree
    out: list[Finding] = []
    for span in tree.ordered():
        if span.status_code is not StatusCode.ERROR or is_agent_call(span) or is_agent_server_span(span):
            continue
        if any(child.status_code is StatusCode.ERROR for child in tree.children_of(span.span_id)):
            continue  # the error began below it
        agent = tree.agent_of(span)
        if agent is None or agent in conv.trace.hosts or tree.request_of(span) is None:
            continue
        error = span.attribute_str("error.type") or span.status_message or "error"
        out.append(Finding("failed_step", agent, span, span.start_time_unix_nano, STRENGTH["failed_step"],
                           f"{agent}'s step {span.name!r} failed ({error[:120]})"))  # fmt: skip
        if len(out) >= 64:
            break
    return out


def _markers(conv: Conversation) -> list[Finding]:
    """An agent that gave up, declined or guessed, in its own words: the first utterance that says them.

    Words an agent passes on (a request or an answer quoting another's) were said first by that
    other one: each clause counts once, where it first appears. In a request it counts
    :data:`IN_REQUEST` (what an agent asks for is not what it did).
    """
    out: list[Finding] = []
    seen: set[str] = set()
    for s in conv.said:
        if not s.text or s.agent in conv.trace.hosts or (s.call is not None and not s.call.ok and s.kind == "answer"):
            continue
        final = s is conv.final or (conv.final is not None and s.span is conv.final.span and s.kind == "answer")
        found: tuple[str, int] | None = None
        for rule, pattern in MARKERS:
            for match in pattern.finditer(s.text):
                clause = " ".join(s.text[match.start() : match.start() + 80].split()).lower()[:48]
                if clause in seen:
                    continue
                seen.add(clause)
                if found is None:
                    found = (rule, match.start())
        if found is None:
            continue
        rule, at = found
        words = " ".join(s.text[max(0, at - 60) : at + 100].split())
        factor = IN_ANSWER if final else (IN_REQUEST if s.kind == "request" else 1.0)
        said = {"answer": "its answer", "request": "a request it sent", "step": "its own step"}[s.kind]
        said = "the team's answer" if final else said
        out.append(Finding(rule, s.agent, s.span, s.time, STRENGTH[rule] * factor,
                           f"{s.agent} {rule.replace('_', ' ')} in {said}: “…{words}…”"))  # fmt: skip
    return out


def _task_units(conv: Conversation) -> frozenset[Unit]:
    return units(conv.task_text())


def _origins(conv: Conversation, expected: str | None) -> list[Finding]:
    """Where the team's answer came from: the first utterances that said what it carries.

    With an expected answer, only what the answer carries beyond it (the wrong part) is
    followed, and the finding is a visible failure (``wrong_content``). Without one, the whole
    answer is followed under the assumption that it is wrong (``answer_origin``), weakly.
    """
    final = conv.final
    if final is None or not final.units:
        return []
    foreign = final.units - _task_units(conv) - (units(expected) if expected else frozenset())
    strength = 1.0
    if expected:
        figures = frozenset(u for u in foreign if len(u) == 1)
        if figures:  # a figure the expected answer does not hold: follow it, and the words around it
            foreign = figures | frozenset(u for u in foreign if any((w,) in figures for w in u))
        else:  # only words beyond the expected answer: an answer says more than its gist; weak unless it lacks it
            wanted = units(expected) - _task_units(conv)
            covered = weight(wanted & final.units) / weight(wanted) if wanted else 1.0
            if covered >= 0.9:
                return []
            strength = EXTRA
    total = weight(foreign)
    if total < 3:
        return []
    firsts = conv.first_with(foreign, before=final.time + 1)
    said_before = frozenset(u for found in firsts.values() for u in found)
    groups: list[tuple[Said, frozenset[Unit]]] = [(conv.said[i], found) for i, found in firsts.items()]
    own = foreign - said_before
    if own:
        groups.append((final, frozenset(own)))
    rule = "wrong_content" if expected else "answer_origin"
    out: list[Finding] = []
    for s, found in groups:
        share = weight(found) / total
        if share < 0.15:
            continue
        found_strength = strength * STRENGTH[rule] * ((0.5 + 0.5 * share) if expected else share)
        where = "the team's answer itself" if s is final else f"its {s.kind}"
        what = "not in the expected answer" if expected else "of the team's answer"
        out.append(Finding(rule, s.agent, s.span, s.time, found_strength,
                           f"{s.agent} first said {share:.0%} of what the team's answer carries {what}, in {where}: "
                           f"{_quote(s, found)}", failure=bool(expected) and strength == 1.0,
                           trail=found))  # fmt: skip
    return out


def _share(part: tuple[int, ...] | None, whole: tuple[int, ...] | None, minus: tuple[int, ...] = ()) -> float | None:
    """How much of ``part`` (less ``minus``) lies in ``whole``, estimated on fingerprints (``None``: cannot tell)."""
    if not part or not whole:
        return None
    estimate = containment(part, whole, minus=minus)
    return estimate.value if estimate is not None and estimate.sample >= MIN_SAMPLE else None


def _lost_by_print(conv: Conversation, expected: str) -> list[Finding]:
    """:func:`_lost` when the team's answer's text was not captured: on fingerprints (at their confidence)."""
    final = conv.final
    wanted = fingerprint(expected)
    if final is None or final.print is None or not wanted:
        return []
    held = _share(wanted, final.print)
    if held is None or held >= 1 - LOST:
        return []
    trust = FINGERPRINT_CONFIDENCE
    source = next((s for s in conv.said if not conv.is_final(s) and (_share(wanted, s.print) or 0.0) >= PASSED_ON
                   and not (s.call is not None and s.call.by_host and s.kind == "request")), None)  # fmt: skip
    if source is None:
        if conv.entry is None:
            return []
        return [Finding("never_said", conv.entry, final.span, final.time, STRENGTH["never_said"] * trust,
                        f"no agent's message holds the expected answer (estimated from fingerprints: the team's "
                        f"answer holds {held:.0%} of it), and {conv.entry} answered without it")]  # fmt: skip
    share = _share(wanted, source.print) or 0.0

    def holds(s: Said) -> bool:
        return (_share(wanted, s.print) or 0.0) >= PASSED_ON * share

    dropped = _dropped(conv, source, holds)
    if dropped is None:
        return []
    holder, answer, via = dropped
    shown = answer or via
    return [Finding("lost_content", holder, shown.span, shown.time, STRENGTH["lost_content"] * trust,
                    f"{source.agent}'s {source.kind} holds {share:.0%} of the expected answer (estimated from "
                    f"fingerprints); {holder} had it and did not pass it on")]  # fmt: skip


def _dropped(conv: Conversation, source: Said, holds: Callable[[Said], bool]) -> tuple[str, Said | None, Said] | None:
    """Who had what ``source`` said and did not pass it on: the agent, what it said next, where it got it.

    ``None`` when it reached the team's answer (nothing was lost on the way).
    """
    holder, since, via = (source.agent, source.time, source) if source.kind == "step" or source.to is None \
        else (source.to, source.time, source)  # fmt: skip
    for _ in range(64):
        passed = next((s for s in conv.said if s.time > since and s.agent == holder and holds(s)), None)
        if passed is None:
            answer = next((s for s in conv.said if s.time > since and s.agent == holder and s.kind != "request"), None)
            return holder, answer, via
        if conv.is_final(passed) or (passed.to is None and passed.kind != "step"):
            return None
        holder, since, via = (passed.agent if passed.kind == "step" else passed.to or passed.agent), passed.time, passed
    return None


def _lost(conv: Conversation, expected: str) -> list[Finding]:
    """What the expected answer holds that an agent had, and the agent that did not pass it on."""
    final = conv.final
    if final is None:
        return []
    if final.text is None:
        return _lost_by_print(conv, expected)
    wanted = units(expected) - _task_units(conv)
    missing = wanted - final.units
    figures = any(len(u) == 1 for u in missing)
    if not wanted or weight(missing) < 3 or (not figures and weight(missing) < LOST * weight(wanted)):
        return []  # a figure lost, or a share of the rest: an answer may word the gist its own way
    firsts = conv.first_with(missing, before=final.time)
    if not firsts:
        if conv.entry is None:
            return []
        share = weight(missing) / weight(wanted)
        return [Finding("never_said", conv.entry, final.span, final.time, STRENGTH["never_said"],
                        f"no agent said {share:.0%} of the expected answer (“{excerpt(expected)}”), and "
                        f"{conv.entry} answered without it", trail=missing)]  # fmt: skip
    index, found = max(firsts.items(), key=lambda item: (weight(item[1]), -item[0]))
    source = conv.said[index]
    need = PASSED_ON * weight(found)
    dropped = _dropped(conv, source, lambda s: weight(s.units & found) >= need)
    if dropped is None:
        return []
    holder, answer, via = dropped
    shown = answer or via
    return [Finding("lost_content", holder, shown.span, shown.time, STRENGTH["lost_content"],
                    f"{source.agent} said {_quote(source, found)} ({weight(found) / weight(wanted):.0%} of "
                    f"the expected answer); {holder} had it and did not pass it on"
                    + (f": {'its answer' if answer.kind == 'answer' else 'what it said next'} "
                       f"{_quote(answer)}" if answer is not None else ""),
                    trail=found)]  # fmt: skip


def _read(s: Said, kept: dict[int, frozenset[Unit]]) -> frozenset[Unit]:
    """What an utterance shows its agent had read: its own words, and a step's input (once per utterance)."""
    if s.kind != "step":
        return s.units
    found = kept.get(id(s))
    if found is None:
        found = kept[id(s)] = s.units | units(s.heard)
    return found


def _ignored(conv: Conversation) -> list[Finding]:
    """An answer with content of its own that its caller never took up: none of its next utterances hold it."""
    out: list[Finding] = []
    later: dict[str, list[Said]] = conv.by_agent()
    times = {agent: [s.time for s in said] for agent, said in later.items()}
    reads: dict[int, frozenset[Unit]] = {}
    for s in conv.said:
        c = s.call
        if s.kind != "answer" or c is None or c.by_host or not c.work or s.cut:
            continue
        if not s.text:
            out += _ignored_by_print(s, c, later, times)
            continue
        new = s.units - units(c.call.request_text)
        if weight(new) < 3:
            continue
        caller = c.call.caller
        after = later.get(caller, [])
        start = bisect.bisect_right(times.get(caller, []), s.time)
        nxt = after[start : start + LOOKED_AHEAD]
        if not nxt or any(n.cut for n in nxt):
            continue
        need = 0.25 * weight(new)
        took = any(weight(_read(n, reads) & new) >= need for n in nxt)
        if not took:
            out.append(Finding("ignored_answer", caller, nxt[0].span, nxt[0].time, STRENGTH["ignored_answer"],
                               f"{caller} took up nothing of {c.call.callee}'s answer {_quote(s, new)} in what it "
                               f"said next", trail=new))  # fmt: skip
    return out


def _ignored_by_print(s: Said, c: TeamCall, later: dict[str, list[Said]], times: dict[str, list[int]]) -> list[Finding]:
    """:func:`_ignored` on fingerprints: what the answer added is in none of its caller's next messages or steps."""
    caller = c.call.caller
    start = bisect.bisect_right(times.get(caller, []), s.time)
    nxt = later.get(caller, [])[start : start + LOOKED_AHEAD]
    asked = c.call.request_fingerprint or ()
    shares = [_share(s.print, p, asked) for n in nxt for p in (n.print, n.heard_print) if p]
    known = [v for v in shares if v is not None]
    if not known or max(known) >= 0.25:
        return []
    return [Finding("ignored_answer", caller, nxt[0].span, nxt[0].time,
                    STRENGTH["ignored_answer"] * FINGERPRINT_CONFIDENCE,
                    f"{caller} took up nothing of {c.call.callee}'s answer in what it said next (estimated from "
                    "fingerprints)")]  # fmt: skip


def _ended_early(conv: Conversation, task: str, members: list[str]) -> list[Finding]:
    """An agent that answered before the work it asked for came back, or a needed member nobody asked."""
    trace = conv.trace
    out: list[Finding] = []
    for c in trace.calls:
        if c.late and c.ok and c.request is not None:
            out.append(Finding("ended_early", c.call.caller, c.request, c.request.end_time_unix_nano,
                               STRENGTH["ended_early"],
                               f"{c.call.caller} answered before its call to {c.call.callee} came back: "
                               f"that answer could not be used"))  # fmt: skip
    called = {c.call.callee for c in trace.calls}
    lowered = task.lower()
    entry = conv.entry
    for member in members:
        if member in called or member == entry or member in conv.unreachable or entry is None:
            continue
        if re.search(rf"(?<![\w-]){re.escape(member.lower())}(?![\w-])", lowered):
            span = conv.final.span if conv.final is not None else None
            out.append(Finding("unasked_member", entry, span, conv.final.time if conv.final else 0,
                               STRENGTH["unasked_member"],
                               f"the task named {member}, and {entry} ended without anyone asking it"))  # fmt: skip
    return out


def _repeats(conv: Conversation) -> list[Finding]:
    """The same request sent again after it succeeded, and an agent answering what it had said before."""
    trace = conv.trace
    out: list[Finding] = []
    duplicates: dict[str, list[TeamCall]] = defaultdict(list)
    for c in trace.calls:
        if c.duplicate_of is not None and not c.by_host:
            duplicates[c.call.caller].append(c)
    for caller, calls in sorted(duplicates.items()):
        first = calls[0]
        strength = min(STRENGTH["repeated_request"], 0.2 + 0.1 * len(calls))
        out.append(Finding("repeated_request", caller, first.span, first.span.start_time_unix_nano, strength,
                           f"{caller} sent {len(calls)} request(s) it had already had answered "
                           f"(first: to {first.call.callee})"))  # fmt: skip
    earlier: dict[str, set[Unit]] = defaultdict(set)
    printed: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for s in conv.said:
        if s.kind != "answer" or s.call is None or not s.call.ok or s.call.duplicate_of is not None or s.cut:
            continue
        if not s.text and s.print:  # no text: on its fingerprint, against the agent's earlier answers' (the last 64)
            known = [v for v in (_share(s.print, p) for p in printed[s.agent][-64:]) if v is not None]
            if known and max(known) >= REPEAT:
                out.append(Finding("repeats_itself", s.agent, s.span, s.time,
                                   STRENGTH["repeats_itself"] * FINGERPRINT_CONFIDENCE,
                                   f"{s.agent} answered {s.call.call.caller} with what it had said before (estimated "
                                   "from fingerprints)"))  # fmt: skip
            printed[s.agent].append(s.print)
            continue
        before = earlier[s.agent]
        own = s.units
        if weight(own) >= 3 and before and weight(own & before) >= REPEAT * weight(own):
            out.append(Finding("repeats_itself", s.agent, s.span, s.time, STRENGTH["repeats_itself"],
                               f"{s.agent} answered {s.call.call.caller} with what it had said before: "
                               f"{_quote(s)}"))  # fmt: skip
        before.update(s.units)
    return out


def _changed(heard: str | None, said: str | None, others: str | None) -> tuple[frozenset[Unit], bool]:
    """The figures (and words around them) an agent put in passing ``heard`` on as ``said``, and whether it changed it.

    It changed it when it passed it on (kept :data:`PASSED_ON` of the words it was given that are
    not figures) but replaced a figure: one it was given is gone and one it was not given (nor
    ``others``) is there. Rewording is not changing; delegating a different part is not passing on.
    """
    given, passed = set(tokens(heard or "")), set(tokens(said or ""))
    words = {w for w in given if not any(ch.isdigit() for ch in w)}
    if not words or len(words & passed) < PASSED_ON * len(words):
        return frozenset(), False
    figures = {w for w in given if w not in words}
    lost = figures - passed
    new = {w for w in passed if any(ch.isdigit() for ch in w)} - figures - set(tokens(others or ""))
    trail = frozenset(u for u in units(said) if any(w in new for w in u))
    return trail, bool(lost) and bool(new)


def _relays(conv: Conversation) -> list[Finding]:
    """An agent that passed work or an answer on to or from one other agent and changed it on the way."""
    trace = conv.trace
    out: list[Finding] = []
    for c in trace.calls:
        if c.server is None or not c.ok:
            continue
        below = [d for d in trace.by_request.get(c.server.span_id, []) if d.work]
        if len({d.call.callee for d in below}) != 1 or len(below) != 1:
            continue
        d = below[0]
        agent = c.call.callee
        if c.call.request_text and d.call.request_text:
            added, changed = _changed(c.call.request_text, d.call.request_text, None)
            if changed:
                out.append(Finding("relay_changed", agent, d.span, d.span.start_time_unix_nano,
                                   STRENGTH["relay_changed"],
                                   f"{agent} passed on {c.call.caller}'s request to {d.call.callee} changed: asked "
                                   f"“{excerpt(c.call.request_text)}”, passed on “{excerpt(d.call.request_text)}”",
                                   trail=added))  # fmt: skip
                continue
        if d.reply_text and c.reply_text:
            added, changed = _changed(d.reply_text, c.reply_text, c.call.request_text)
            if changed:
                out.append(Finding("relay_changed", agent, c.server, c.span.end_time_unix_nano,
                                   STRENGTH["relay_changed"],
                                   f"{agent} passed {d.call.callee}'s answer back changed: got "
                                   f"“{excerpt(d.reply_text)}”, answered “{excerpt(c.reply_text)}”",
                                   trail=added))  # fmt: skip
    return out


def findings(conv: Conversation, *, expected: str | None, members: list[str]) -> list[Finding]:
    """Every rule's findings on ``conv`` (``docs/attribution.md``), in time order (then rule, agent)."""
    task = conv.task_text()
    found = (
        _failed_calls(conv)
        + _failed_steps(conv)
        + _markers(conv)
        + _origins(conv, expected)
        + (_lost(conv, expected) if expected else _ignored(conv))
        + _ended_early(conv, task, members)
        + _repeats(conv)
        + _relays(conv)
    )
    found.sort(key=lambda f: (f.time, f.rule, f.agent, f.span.span_id if f.span is not None else ""))
    return found
