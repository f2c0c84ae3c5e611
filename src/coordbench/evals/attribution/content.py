"""Failure attribution's rules about content: where the answer came from, what it lost, answers nobody took up.

Read on captured text, else on the messages' fingerprints.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from coordbench.evals.attribution.finding import EXTRA, LOOKED_AHEAD, LOST, PASSED_ON, STRENGTH, Finding, quote, share
from coordbench.evals.attribution.said import Conversation, Said, Unit, excerpt, units, weight
from coordbench.evals.evidence import FINGERPRINT_CONFIDENCE, TeamCall
from coordbench.sketch import fingerprint

__all__ = ["ignored", "lost", "origins"]


def _task_units(conv: Conversation) -> frozenset[Unit]:
    return units(conv.task_text())


def origins(conv: Conversation, expected: str | None) -> list[Finding]:
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
        part = weight(found) / total
        if part < 0.15:
            continue
        found_strength = strength * STRENGTH[rule] * ((0.5 + 0.5 * part) if expected else part)
        where = "the team's answer itself" if s is final else f"its {s.kind}"
        what = "not in the expected answer" if expected else "of the team's answer"
        out.append(Finding(rule, s.agent, s.span, s.time, found_strength,
                           f"{s.agent} first said {part:.0%} of what the team's answer carries {what}, in {where}: "
                           f"{quote(s, found)}", failure=bool(expected) and strength == 1.0,
                           trail=found))  # fmt: skip
    return out


def _lost_by_print(conv: Conversation, expected: str) -> list[Finding]:
    """:func:`_lost` when the team's answer's text was not captured: on fingerprints (at their confidence)."""
    final = conv.final
    wanted = fingerprint(expected)
    if final is None or final.print is None or not wanted:
        return []
    held = share(wanted, final.print)
    if held is None or held >= 1 - LOST:
        return []
    trust = FINGERPRINT_CONFIDENCE
    source = next((s for s in conv.said if not conv.is_final(s) and (share(wanted, s.print) or 0.0) >= PASSED_ON
                   and not (s.call is not None and s.call.by_host and s.kind == "request")), None)  # fmt: skip
    if source is None:
        if conv.entry is None:
            return []
        return [Finding("never_said", conv.entry, final.span, final.time, STRENGTH["never_said"] * trust,
                        f"no agent's message holds the expected answer (estimated from fingerprints: the team's "
                        f"answer holds {held:.0%} of it), and {conv.entry} answered without it")]  # fmt: skip
    source_share = share(wanted, source.print) or 0.0

    def holds(s: Said) -> bool:
        return (share(wanted, s.print) or 0.0) >= PASSED_ON * source_share

    dropped = _dropped(conv, source, holds)
    if dropped is None:
        return []
    holder, answer, via = dropped
    shown = answer or via
    return [Finding("lost_content", holder, shown.span, shown.time, STRENGTH["lost_content"] * trust,
                    f"{source.agent}'s {source.kind} holds {source_share:.0%} of the expected answer (estimated from "
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


def lost(conv: Conversation, expected: str) -> list[Finding]:
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
        part = weight(missing) / weight(wanted)
        return [Finding("never_said", conv.entry, final.span, final.time, STRENGTH["never_said"],
                        f"no agent said {part:.0%} of the expected answer (“{excerpt(expected)}”), and "
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
                    f"{source.agent} said {quote(source, found)} ({weight(found) / weight(wanted):.0%} of "
                    f"the expected answer); {holder} had it and did not pass it on"
                    + (f": {'its answer' if answer.kind == 'answer' else 'what it said next'} "
                       f"{quote(answer)}" if answer is not None else ""),
                    trail=found)]  # fmt: skip


def _read(s: Said, kept: dict[int, frozenset[Unit]]) -> frozenset[Unit]:
    """What an utterance shows its agent had read: its own words, and a step's input (once per utterance)."""
    if s.kind != "step":
        return s.units
    found = kept.get(id(s))
    if found is None:
        found = kept[id(s)] = s.units | units(s.heard)
    return found


def ignored(conv: Conversation) -> list[Finding]:
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
                               f"{caller} took up nothing of {c.call.callee}'s answer {quote(s, new)} in what it "
                               f"said next", trail=new))  # fmt: skip
    return out


def _ignored_by_print(s: Said, c: TeamCall, later: dict[str, list[Said]], times: dict[str, list[int]]) -> list[Finding]:
    """:func:`_ignored` on fingerprints: what the answer added is in none of its caller's next messages or steps."""
    caller = c.call.caller
    start = bisect.bisect_right(times.get(caller, []), s.time)
    nxt = later.get(caller, [])[start : start + LOOKED_AHEAD]
    asked = c.call.request_fingerprint or ()
    shares = [share(s.print, p, asked) for n in nxt for p in (n.print, n.heard_print) if p]
    known = [v for v in shares if v is not None]
    if not known or max(known) >= 0.25:
        return []
    return [Finding("ignored_answer", caller, nxt[0].span, nxt[0].time,
                    STRENGTH["ignored_answer"] * FINGERPRINT_CONFIDENCE,
                    f"{caller} took up nothing of {c.call.callee}'s answer in what it said next (estimated from "
                    "fingerprints)")]  # fmt: skip
