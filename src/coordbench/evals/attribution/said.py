"""What each agent said and heard, in order: the conversation attribution reads a trace as.

A trace holds three kinds of utterance, each at the span that shows it:

- a **request**: what a caller asked (its A2A CLIENT span, at the call's start);
- an **answer**: what the callee replied (its A2A SERVER span, else the CLIENT span, at the
  call's end); a failed call's answer is its error;
- a **step**: what an agent produced in its own work, a model call or its reasoning (the step's
  span, at its end; :func:`coordbench.evals.dependency.steps_of`), with what it was given.

**Content units** are what attribution follows from one utterance to another: an utterance's
word trigrams that are not function words alone, and its words that hold a digit (figures,
dates, ids), which weigh :data:`FIGURE_WEIGHT` times as much: a wrong figure is the commonest
wrong fact. Every utterance is read once; text is bounded by the evaluators' limit
(:data:`~coordbench.evals.calls.MESSAGE_TEXT_LIMIT`).
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from coordbench.evals.dependency import request_steps
from coordbench.evals.evidence import TeamCall, TeamTrace, is_cut
from coordbench.evals.textcache import per_text, words
from coordbench.sketch import fingerprint
from coordbench.spans import SpanData
from coordbench.spantree import is_agent_call, is_agent_server_span

__all__ = ["FIGURE_WEIGHT", "Conversation", "Said", "Unit", "excerpt", "units"]

Unit = tuple[str, ...]
FIGURE_WEIGHT = 3.0
"""How much a word holding a digit weighs against a trigram, as a content unit."""
_FUNCTION_TEXT = (
    "a an the and or but if of to in on at by for with from as is are was were be been it its this that these "
    "those i we you he she they them our your their my me us not no so then than there here what which who will "
    "would can could should may might do does did has have had into about over after before next now please "
    "part task answer asked ask"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())
EXCERPT = 160
"""Most characters of an utterance quoted as evidence."""


_DIGIT = re.compile(r"\d")


@per_text
def units(text: str | None) -> frozenset[Unit]:
    """The content units of ``text``: trigrams not made of function words alone, and words holding a digit.

    Example:
        >>> sorted(units("the budget is 40 million"))
        [('40',), ('budget', 'is', '40'), ('is', '40', 'million'), ('the', 'budget', 'is')]
        >>> sorted(units("it is in the"))
        []
    """
    if not text:
        return frozenset()
    said = words(text)
    grams = set(zip(said, said[1:], said[2:], strict=False))  # the sliding windows of three
    found: set[Unit] = {g for g in grams if not _FUNCTION_WORDS.issuperset(g)}
    if _DIGIT.search(text) is not None:
        found.update((w,) for w in said if _DIGIT.search(w) is not None)
    return frozenset(found)


def weight(found: Collection[Unit]) -> float:
    """The weight of some units: a figure counts :data:`FIGURE_WEIGHT`, a trigram 1."""
    figures = sum(1 for u in found if len(u) == 1)
    return len(found) + (FIGURE_WEIGHT - 1.0) * figures


def excerpt(text: str | None, around: Iterable[Unit] = ()) -> str:
    """At most :data:`EXCERPT` characters of ``text``, around the first of ``around`` it holds; one line."""
    if not text:
        return ""
    flat = " ".join(text.split())
    lowered = flat.lower()
    at = -1
    for unit in around:
        found = lowered.find(" ".join(unit))
        if found >= 0 and (at < 0 or found < at):
            at = found
    start = max(0, at - EXCERPT // 3) if at >= 0 else 0
    cut = flat[start : start + EXCERPT]
    return ("…" if start else "") + cut + ("…" if start + EXCERPT < len(flat) else "")


@dataclass(eq=False, slots=True)
class Said:
    """One utterance.

    Attributes:
        agent: Who said it.
        span: The span that shows it.
        kind: ``request``, ``answer`` or ``step``.
        time: When it was said (ns): a request at its call's start, an answer at its end, a step at its end.
        text: Its captured text (``None``: not captured).
        heard: What the agent had been given for it, when captured: a step's input; an answer's
            request and the answers of the calls its agent made while serving it.
        call: The A2A call it belongs to (``None`` for a step).
        to: Who it was said to (a request's callee, an answer's caller; ``None`` for a step).
        cut: Its text was cut short.
        units: Its content units (:func:`units`).
        captured: Its text was captured (else it is a failed call's error type, or there is none).
        print: Its fingerprint (:mod:`coordbench.sketch`), when recorded: what is followed when
            its text was not captured.
        heard_print: The fingerprint of what it was given, when recorded.
    """

    agent: str
    span: SpanData
    kind: Literal["request", "answer", "step"]
    time: int
    text: str | None
    heard: str | None
    call: TeamCall | None
    to: str | None
    cut: bool = False
    units: frozenset[Unit] = field(default_factory=frozenset[Unit])
    captured: bool = True
    print: tuple[int, ...] | None = None
    heard_print: tuple[int, ...] | None = None


class Conversation:
    """Every utterance of a trace by time (then span id), the team's answer, and who could have heard whom.

    Args:
        trace: The classified calls.
        final_text: The team's answer when known from elsewhere (the assessor's record); default:
            the last answer the entry gave, else the last thing the top agent said.
        unreachable: Members the assessor could not reach, with why.
    """

    def __init__(self, trace: TeamTrace, final_text: str | None = None,
                 unreachable: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self.trace = trace
        self.unreachable = dict(unreachable or {})
        said: list[Said] = []
        for c in trace.calls:
            request = c.call.request_text
            said.append(Said(c.call.caller, c.span, "request", c.span.start_time_unix_nano, request, None, c,
                             c.call.callee, cut=bool(request and is_cut(request)),
                             print=c.call.request_fingerprint or None))  # fmt: skip
            answer = c.reply_text if not c.one_way else None
            stated = bool(answer)
            if not c.ok and not answer:
                answer = c.call.error_type or (f"task {c.call.state}" if c.call.state else None)
            shown = c.server if c.server is not None else c.span
            below = trace.by_request.get(c.server.span_id, []) if c.server is not None else []
            heard = "\n".join([request or "", *(d.reply_text or "" for d in below)]) if below else request
            said.append(Said(c.call.callee, shown, "answer", c.span.end_time_unix_nano, answer, heard, c,
                             c.call.caller, cut=bool(answer and is_cut(answer)), captured=stated,
                             print=None if c.one_way else c.reply_print,
                             heard_print=c.call.request_fingerprint or None))  # fmt: skip
        for request in self._requests():
            agent = trace.tree.agent_of(request) or request.service_name
            if agent in trace.hosts:
                continue
            for step in request_steps(trace, request):
                text = step.output_text
                if step.silent:
                    continue
                said.append(Said(agent or "?", step.span, "step", step.span.end_time_unix_nano, text, step.input_text,
                                 None, None, cut=bool(text and is_cut(text)), print=step.output_print,
                                 heard_print=step.input_print))  # fmt: skip
        said.sort(key=lambda s: (s.time, 0 if s.kind == "request" else 1, s.span.span_id))
        for s in said:
            s.units = units(s.text)
        self.said = said
        self.entry, self.final = self._final(final_text)
        self._edges = sorted(
            [(c.span.start_time_unix_nano, c.call.caller, c.call.callee) for c in trace.calls]
            + [(c.span.end_time_unix_nano, c.call.callee, c.call.caller) for c in trace.calls],
        )
        self._edge_times = [e[0] for e in self._edges]
        self._by_edge: dict[tuple[int, str, str], TeamCall] = {}  # each edge's call (the first, when two coincide)
        for c in trace.calls:
            self._by_edge.setdefault((c.span.start_time_unix_nano, c.call.caller, c.call.callee), c)
            self._by_edge.setdefault((c.span.end_time_unix_nano, c.call.callee, c.call.caller), c)

    def _requests(self) -> list[SpanData]:
        """The spans agents worked under: their A2A SERVER spans, and the roots of processes that serve none."""
        tree = self.trace.tree
        servers = [s for s in tree.ordered() if is_agent_server_span(s)]
        roots = [s for s in tree.ordered() if s.parent_span_id is None and not is_agent_call(s)]
        return servers + [s for s in roots if not is_agent_server_span(s)]

    def _final(self, final_text: str | None) -> tuple[str | None, Said | None]:
        """The agent that gave the team's answer, and that answer as an utterance."""
        host_calls = [c for c in self.trace.calls if c.by_host]
        if host_calls:
            last = max(host_calls, key=lambda c: (c.span.end_time_unix_nano, c.id))
            answer = next(s for s in self.said if s.kind == "answer" and s.call is last)
            if final_text:
                printed = answer.print or fingerprint(final_text)
                answer = Said(answer.agent, answer.span, "answer", answer.time, final_text, answer.heard, last,
                              answer.to, cut=is_cut(final_text), units=units(final_text), print=printed,
                              heard_print=answer.heard_print)  # fmt: skip
            return last.call.callee, answer
        called = {c.call.callee for c in self.trace.calls}
        top = [s for s in self.said if s.agent not in called and s.agent not in self.trace.hosts]
        spoken = [s for s in top if s.kind != "request" and (s.text or s.print)] or [
            s for s in self.said if s.text or s.print
        ]
        if not spoken:
            return (top[0].agent if top else None), None
        last = spoken[-1]
        if final_text:
            last = Said(last.agent, last.span, last.kind, last.time, final_text, last.heard, last.call, last.to,
                        cut=is_cut(final_text), units=units(final_text), print=last.print or fingerprint(final_text),
                        heard_print=last.heard_print)  # fmt: skip
        return last.agent, last

    @property
    def agents(self) -> list[str]:
        """The agents that took part (hosts left out), sorted."""
        return sorted({s.agent for s in self.said if s.agent not in self.trace.hosts})

    def reached(self, agent: str, since: int) -> dict[str, tuple[int, list[TeamCall]]]:
        """Who could have heard what ``agent`` said from ``since`` on: each agent, when, and through which calls.

        A request carries what its caller knew to the callee when it starts; an answer (or the
        failure of the call: a member that was down reaches its caller that way) carries what
        the callee knew back to the caller when it ends. Read once over the calls in time
        order (linear in the calls).
        """
        by_call = self._by_edge
        out: dict[str, tuple[int, list[TeamCall]]] = {agent: (since, [])}
        for edge in self._edges[bisect.bisect_left(self._edge_times, since) :]:
            time, sender, receiver = edge
            if sender in out and out[sender][0] <= time and receiver not in out:
                out[receiver] = (time, [*out[sender][1], by_call[edge]])
        return out

    def first_with(self, wanted: frozenset[Unit], *, before: int | None = None) -> dict[int, frozenset[Unit]]:
        """For each utterance (by index) the units of ``wanted`` it said first, up to ``before`` (exclusive)."""
        left = set(wanted)
        out: dict[int, frozenset[Unit]] = {}
        for i, s in enumerate(self.said):
            if not left or (before is not None and s.time >= before):
                break
            if self.is_final(s) or (s.call is not None and s.call.by_host and s.kind == "request"):
                continue
            new = s.units & left
            if new:
                out[i] = frozenset(new)
                left -= new
        return out

    def is_final(self, s: Said) -> bool:
        """``s`` is the team's answer (the utterance, or the recorded answer that stands for it)."""
        final = self.final
        return final is not None and (s is final or (s.span is final.span and s.kind == final.kind))

    def by_agent(self) -> dict[str, list[Said]]:
        """Each agent's utterances, in order."""
        out: dict[str, list[Said]] = defaultdict(list)
        for s in self.said:
            out[s.agent].append(s)
        return dict(out)

    def task_text(self) -> str:
        """What the team was asked: the hosts' requests (else the first request made, or the first step's input)."""
        hosted = [s.text or "" for s in self.said if s.kind == "request" and s.call is not None and s.call.by_host]
        if hosted:
            return "\n".join(hosted)
        first = next((s for s in self.said if s.kind == "request" or (s.kind == "step" and s.heard)), None)
        if first is None:
            return ""
        return (first.text if first.kind == "request" else first.heard) or ""
