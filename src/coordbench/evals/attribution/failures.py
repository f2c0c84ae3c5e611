"""Failure attribution's rules about failures: failed calls and steps, members down or silent, admissions.

An admission: an agent that gave up, declined or guessed, in its own words.
"""

from __future__ import annotations

import re

from coordbench.evals.attribution.finding import IN_ANSWER, IN_REQUEST, RECOVERED, STRENGTH, Finding
from coordbench.evals.attribution.said import Conversation
from coordbench.evals.evidence import TeamCall
from coordbench.spans import StatusCode
from coordbench.spantree import is_agent_call, is_agent_server_span

__all__ = ["MARKERS", "failed_calls", "failed_steps", "markers"]

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


def _why(c: TeamCall) -> str:
    if c.call.error_type:
        return c.call.error_type
    return f"task {c.call.state}" if c.call.state else "error status"


def failed_calls(conv: Conversation) -> list[Finding]:
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


def failed_steps(conv: Conversation) -> list[Finding]:
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


def markers(conv: Conversation) -> list[Finding]:
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
