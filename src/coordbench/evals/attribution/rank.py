"""From findings to an attribution: causes before symptoms, candidates ranked, the chain of evidence.

- **Causes before symptoms**: a finding on an agent that could already have heard of an earlier
  finding on another agent whose fault travels on (:data:`CAUSES`; through the calls between
  them, in time order) is more likely its consequence: its strength is multiplied by :data:`SYMPTOM`.
- **Candidates**: each agent's findings combined as independent evidence, ``1 - Π(1 - s)`` over
  its rules (each rule's strongest finding: a rule firing again is the same evidence); the
  responsible agent is the strongest (ties: the earlier finding, then the name). Its decisive
  span is its earliest finding at least :data:`DECISIVE` of its strongest, among its findings of
  a visible failure when it has any (where its answer came from is not a fault by itself).
- **Confidence**: ``top * (1 - 0.5 * second / top)``, at most :data:`ASSUMED` when no failure is
  visible (the run was only assumed to fail), times :data:`CUT` when the texts read were cut.
- **Chain**: from the decisive span, the calls through which what it said could reach the team's
  answer (in time order), each with what it carried.
"""

from __future__ import annotations

from collections import defaultdict

from coordbench.evals.attribution.model import Attribution, Candidate, Link
from coordbench.evals.attribution.rules import Finding
from coordbench.evals.attribution.said import Conversation, Unit, excerpt, units, weight
from coordbench.evals.evidence import TeamCall

__all__ = ["ASSUMED", "CAUSES", "CUT", "DECISIVE", "SYMPTOM", "rank"]

CAUSES = frozenset({"failed_call", "member_down", "failed_step", "wrong_content", "lost_content", "relay_changed",
                    "gave_up", "declined", "guessed"})  # fmt: skip
"""Findings whose fault travels on in what the agent passes (a failure, wrong or lost content, an admission).

An agent ignoring an answer, repeating a request or answering early faults its own work; what it
passes on is not made worse for others by it, so a later finding elsewhere is not its symptom.
"""
SYMPTOM = 0.5
"""Factor on a finding downstream of an earlier finding on another agent."""
DECISIVE = 0.6
"""Share of an agent's strongest finding its earliest finding needs to be its decisive span."""
ASSUMED = 0.35
"""Most confidence when the trace shows no failure (the run was only assumed to fail)."""
CUT = 0.8
"""Factor on the confidence when a text the rules read was cut short."""
CANDIDATES = 8
"""Candidates listed."""
FINDINGS = 200
"""Findings ordered for causes and symptoms (the strongest; bounds the work on huge traces)."""


def _discounted(conv: Conversation, found: list[Finding]) -> list[tuple[Finding, float, str | None]]:
    """Each finding with its strength after causes and symptoms, and the cause it follows, if any."""
    kept = sorted(found, key=lambda f: -f.strength)[:FINDINGS]
    kept.sort(key=lambda f: (f.time, f.rule, f.agent))
    reach: dict[tuple[str, int], dict[str, tuple[int, list[TeamCall]]]] = {}
    out: list[tuple[Finding, float, str | None]] = []
    causes: list[Finding] = []
    for f in kept:
        after: str | None = None
        for cause in causes:
            if cause.agent == f.agent or cause.time > f.time:
                continue
            key = (cause.agent, cause.time)
            if key not in reach:
                reach[key] = conv.reached(cause.agent, cause.time)
            heard = reach[key].get(f.agent)
            if heard is not None and heard[0] <= f.time:
                after = f"{cause.agent}'s {cause.rule.replace('_', ' ')}"
                break
        out.append((f, f.strength * (SYMPTOM if after else 1.0), after))
        if f.failure and f.rule in CAUSES:
            causes.append(f)
    return out


def _chain(conv: Conversation, f: Finding) -> list[Link]:
    """The decisive span, then the calls through which its fault could reach the team's answer."""
    links = [Link(span_id=f.span.span_id if f.span is not None else None, agent=f.agent, what=f.evidence)]
    final = conv.final
    if final is None or conv.entry is None:
        return links
    route = conv.reached(f.agent, f.time).get(conv.entry)
    if route is None:
        links.append(Link(span_id=final.span.span_id, agent=final.agent,
                          what=f"no call carried what {f.agent} did on to {conv.entry}"))  # fmt: skip
        return links
    trail: frozenset[Unit] = f.trail
    for c in route[1]:
        forward = c.span.start_time_unix_nano >= f.time and (c.call.caller == f.agent or c.call.caller in
                                                              {link.agent for link in links})  # fmt: skip
        if forward and c.call.request_text is not None:
            agent, span, text = c.call.caller, c.span, c.call.request_text
            how = f"{c.call.caller} asked {c.call.callee}"
        else:
            agent, span = c.call.callee, (c.server or c.span)
            text = c.reply_text
            how = (
                f"{c.call.callee} answered {c.call.caller}"
                if c.ok
                else (f"{c.call.callee} → {c.call.caller} failed too ({c.call.error_type or c.call.state or 'error'})")
            )
        what = how
        if text and trail:
            held = frozenset(u for u in trail if u in units(text))
            what += f", carrying {weight(held) / weight(trail):.0%} of it: “{excerpt(text, sorted(held))}”"
        elif text:
            what += f": “{excerpt(text, [(f.agent.lower(),)])}”"
        if span.span_id != links[-1].span_id:  # the decisive span may be the first hop's own
            links.append(Link(span_id=span.span_id, agent=agent, what=what))
    if final.span.span_id != links[-1].span_id:
        held = frozenset(u for u in trail if u in final.units)
        what = "the team's answer"
        if trail:
            what += f" carries {weight(held) / weight(trail):.0%} of it"
        around = sorted(held) if trail else [(f.agent.lower(),)]
        links.append(Link(span_id=final.span.span_id, agent=final.agent,
                          what=f"{what}: “{excerpt(final.text, around)}”"))  # fmt: skip
    return links


def rank(conv: Conversation, found: list[Finding], *, expected: bool) -> Attribution:
    """The attribution ``found`` supports on ``conv`` (see the module docstring)."""
    scored = _discounted(conv, found)
    by_agent: dict[str, list[tuple[Finding, float, str | None]]] = defaultdict(list)
    for item in scored:
        if item[1] > 0:
            by_agent[item[0].agent].append(item)
    candidates: list[tuple[float, int, str, Finding, list[tuple[Finding, float, str | None]]]] = []
    for agent, items in by_agent.items():
        strongest_by_rule: dict[str, float] = {}
        for f, strength, _ in items:  # a rule firing again on the same agent is the same evidence, not more
            strongest_by_rule[f.rule] = max(strongest_by_rule.get(f.rule, 0.0), strength)
        miss = 1.0
        for strength in strongest_by_rule.values():
            miss *= 1.0 - min(1.0, strength)
        failing = [(f, s) for f, s, _ in items if f.failure] or [(f, s) for f, s, _ in items]
        strongest_failing = max(s for _, s in failing)
        decisive = next(f for f, s in failing if s >= DECISIVE * strongest_failing)
        candidates.append((1.0 - miss, decisive.time, agent, decisive, items))
    candidates.sort(key=lambda c: (-round(c[0], 9), c[1], c[2]))
    listed = [
        Candidate(
            agent=agent,
            span_id=decisive.span.span_id if decisive.span is not None else None,
            score=round(score, 6),
            rules=list(dict.fromkeys(f.rule for f, _, _ in sorted(items, key=lambda i: -i[1]))),
            evidence=[f.evidence + (f" (after {after})" if after else "") for f, _, after in
                      sorted(items, key=lambda i: -i[1])][:4],
        )
        for score, _, agent, decisive, items in candidates[:CANDIDATES]
    ]  # fmt: skip
    visible = expected or any(f.failure for f, _, _ in scored)
    if not candidates:
        return Attribution(agent=None, span_id=None, confidence=0.0, failure_visible=False,
                           reason="the trace shows no failure and nothing to follow: no agent can be named",
                           candidates=[])  # fmt: skip
    top, _, agent, decisive, _ = candidates[0]
    second = candidates[1][0] if len(candidates) > 1 else 0.0
    confidence = top * (1.0 - 0.5 * second / top) if top > 0 else 0.0
    notes: list[str] = []
    if not visible:
        confidence = min(confidence, ASSUMED)
        notes.append("no failure is visible in the trace: the run was assumed to fail, and this is where its answer "
                     "came from, not a fault the trace shows")  # fmt: skip
    if any(s.cut for s in conv.said if s.text):
        confidence *= CUT
        notes.append("some texts were cut short by the instrumentation: what they lack proves nothing")
    if not any(s.text and s.captured for s in conv.said):
        notes.append("no message text was captured: only failures and timing could be read")
    reason = f"{agent}: {decisive.evidence}" + "".join(f"; {n}" for n in notes)
    return Attribution(
        agent=agent,
        span_id=decisive.span.span_id if decisive.span is not None else None,
        rule=decisive.rule,
        confidence=round(confidence, 6),
        failure_visible=visible,
        reason=reason,
        evidence=_chain(conv, decisive),
        candidates=listed,
    )
