"""Failure attribution's rules about conduct: early answers, members nobody asked, repeats, changed relays."""

from __future__ import annotations

import re
from collections import defaultdict

from coordbench.evals.attribution.finding import PASSED_ON, REPEAT, STRENGTH, Finding, quote, share
from coordbench.evals.attribution.said import Conversation, Unit, excerpt, units, weight
from coordbench.evals.evidence import FINGERPRINT_CONFIDENCE, TeamCall
from coordbench.evals.textsim import tokens

__all__ = ["ended_early", "relays", "repeats"]


def ended_early(conv: Conversation, task: str, members: list[str]) -> list[Finding]:
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


def repeats(conv: Conversation) -> list[Finding]:
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
            known = [v for v in (share(s.print, p) for p in printed[s.agent][-64:]) if v is not None]
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
                               f"{quote(s)}"))  # fmt: skip
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


def relays(conv: Conversation) -> list[Finding]:
    """An agent that passed work or an answer on to or from one other agent and changed it on the way."""
    trace = conv.trace
    out: list[Finding] = []
    for c in trace.calls:
        if c.server is None or not c.ok:
            continue
        below = [d for d in trace.by_request.get(c.server.span_id, []) if d.work]
        if len(below) != 1:
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
