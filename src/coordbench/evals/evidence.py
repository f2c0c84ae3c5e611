"""What a trace shows about how a team worked: each A2A call placed and classified.

The coordination score (:mod:`coordbench.evals.coordination`) rests on these facts, all read
from spans, never from the agents:

- **where a call belongs**: the request its caller was serving when it made it (the
  caller's A2A SERVER span, :meth:`~coordbench.spantree.SpanTree.request_of`) and the
  callee's SERVER span that answered it (:meth:`~coordbench.spantree.SpanTree.server_of`,
  through HTTP or proxy spans in between);
- **duplicate**: the same request (same callee and message digest, or the same captured
  text) as an earlier call that succeeded, whoever sent it: the callee did that work already;
  a repeat after a *failed* call is a retry, which is recovery, not waste;
- **late**: the call ended after the request it was made for had been answered, so its
  result cannot have been used;
- **relay hop**: a call into an agent that passed the work on to one other agent and added
  nothing: its reply brings (almost) no words that agent's replies did not, or, without
  captured text, it forwarded the very message it received (same digest). An agent that asks
  several agents and combines their answers is coordinating, not relaying; one that handed on
  work of its own (a handoff) is not relaying either;
- **one way**: a message whose response carried no text; a message the callee sent back while
  serving it stands as its answer;
- **dependent**: a call made after another finished that carries what the other one
  returned (a pipeline step), so the two could not have run side by side (this module reads
  the direct case; :mod:`coordbench.evals.dependency` adds the caller's own steps in between
  and intermediate calls). At least
  :data:`DEPENDENCY_CONTAINMENT` of the word trigrams the earlier reply added (those not
  already in its own request) appear in the later request: counted exactly on captured text,
  estimated on the messages' fingerprints (:mod:`coordbench.sketch`, recorded by default)
  when the text was not captured. When neither tells (no text, no fingerprint, or too small a
  sample), the dependency is *unknown*: the calls are given the benefit of the doubt (not
  counted as serialised work), and the parts that rest on it report a lower confidence.
  Message sizes never decide it: an answer's envelope (task, history, artifacts) can weigh ten
  times its text, and a later request may carry a summary of it.

Everything is ordered by start time, then span id, so the same spans give the same facts.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from coordbench import semconv
from coordbench.evals.calls import MESSAGE_TEXT_LIMIT, Call, calls_of
from coordbench.evals.textcache import per_text, words
from coordbench.evals.textsim import TEXT_KERNELS
from coordbench.sketch import containment, novelty
from coordbench.spans import SpanData
from coordbench.spantree import SpanTree, is_agent_call, is_agent_server_span

__all__ = [
    "COMPARED",
    "DEPENDENCY_CONTAINMENT",
    "FINGERPRINT_CONFIDENCE",
    "HANDED_ON",
    "MIN_SAMPLE",
    "OVERLAP_SLACK",
    "RELAY_NOVELTY",
    "UNKNOWN",
    "Judged",
    "TeamCall",
    "TeamTrace",
    "added_trigrams",
    "apart",
    "carried",
    "depends_on",
    "interval",
    "is_cut",
    "python_trigrams",
    "serialisation",
    "trigrams",
]

DEPENDENCY_CONTAINMENT = 0.25
"""Share of an earlier reply's new trigrams a later request must carry to depend on it."""
OVERLAP_SLACK = 0.2
"""Share of the shorter call two calls may run apart and still count as side by side.

Calls launched together never start at the same instant, and on a busy machine (other work
on the cores) the second may start well after the first: a fifth of the shorter call is
forgiven as jitter. Measured: a team run beside two CPU-bound processes started its parallel
calls up to 12% of their length apart (``docs/scoring.md``)."""
MIN_SAMPLE = 4
"""Sampled hashes an estimate from fingerprints needs before it decides anything."""
FINGERPRINT_CONFIDENCE = 0.85
"""How far a judgement from fingerprints is trusted, against 1 for one from captured text."""
COMPARED = 256
"""A call is compared with at most this many calls started just before it (bounds the work on huge fan-outs)."""
HANDED_ON = 0.25
"""Share of new trigrams in what an agent passed on (against what it was asked) that makes it its own work."""
RELAY_NOVELTY = 0.1
"""A reply with fewer new words than this share (against its callees' replies) is a relay's."""
CUT_MARK = "...[truncated]"
"""What the instrumentation appends to a message text it cut at its limit."""
_FAILED_STATES = frozenset({"failed", "rejected", "canceled", "cancelled", "auth-required", "unknown"})


@dataclass(eq=False)
class TeamCall:
    """One A2A message and what the trace says about it.

    Attributes:
        call: The message, from the caller's CLIENT span.
        span: That CLIENT span.
        server: The callee's SERVER span that answered it (``None``: it never arrived).
        request: The caller's SERVER span it was made for (``None``: the caller was not
            serving a traced request, a host for instance).
        by_host: The caller is a host (the assessor).
        ok: It succeeded: no error status and no failed task state.
        duplicate_of: Span id of the earlier successful call it repeats.
        retry_of: Span id of the earlier failed call it repeats.
        late: It ended after the request it was made for was answered.
        relay: The callee passed the work on and added nothing (see the module docstring).
        delegated: The callee called other agents while answering it.
        reply_text: The answer's text: the response's, or, for a one-way message (a response
            with no text), the text of the message the callee sent back to the caller while
            serving it (a reply sent as a call of its own).
        reply_print: The answer's fingerprint, likewise.
        one_way: The response carried no text: the message is one way.
        id: The client span id (``call.span_id``), set once: comparisons read it millions of times.
    """

    call: Call
    span: SpanData
    server: SpanData | None
    request: SpanData | None
    by_host: bool
    ok: bool
    duplicate_of: str | None = None
    retry_of: str | None = None
    late: bool = False
    relay: bool = False
    delegated: bool = False
    reply_text: str | None = None
    reply_print: tuple[int, ...] | None = None
    one_way: bool = False
    id: str = field(init=False)

    def __post_init__(self) -> None:
        self.id = self.call.span_id

    @property
    def work(self) -> bool:
        """It did work the team needed done: it succeeded and repeats no earlier successful call."""
        return self.ok and self.duplicate_of is None

    @property
    def useful(self) -> bool:
        """A contribution the trace shows: work, answered by a callee whose span arrived, in time, not relayed.

        A call whose callee's spans never arrived is not counted: the trace cannot show what
        the callee did (it might have been a relay), so an incomplete trace is never read in
        the team's favour.
        """
        return self.work and self.server is not None and not self.late and not self.relay


@dataclass
class TeamTrace:
    """A trace's calls, classified, with the indexes the coordination parts read.

    Build it with :meth:`build`.

    Attributes:
        tree: The spans.
        hosts: Host agents (their calls hand out the task; they are not team members).
        calls: Every A2A call, by start time.
        orphan_servers: A2A SERVER spans whose caller's span never arrived.
        by_request: Work calls per request (the caller's SERVER span id), by start time.
    """

    tree: SpanTree
    hosts: frozenset[str]
    calls: list[TeamCall]
    orphan_servers: list[SpanData]
    by_request: dict[str, list[TeamCall]] = field(default_factory=dict[str, list[TeamCall]])
    memo: dict[tuple[str, str], object] = field(default_factory=dict[tuple[str, str], object], repr=False)
    """Readings derived from the trace, kept once computed (:func:`coordbench.evals.dependency.dependencies_of`)."""

    @classmethod
    def build(cls, tree: SpanTree, hosts: Iterable[str], *, calls: Iterable[Call] | None = None) -> TeamTrace:
        """Place and classify every call of ``tree``.

        Args:
            tree: The spans.
            hosts: The host agents.
            calls: ``calls_of(tree)``, when already read (an :class:`~coordbench.evals.base.EvalContext`'s).
        """
        host_set = frozenset(hosts)
        team_calls: list[TeamCall] = []
        for call in calls_of(tree) if calls is None else calls:
            span = tree.get(call.span_id)
            assert span is not None  # noqa: S101 - calls_of reads the tree's own spans
            state_failed = (call.state or "").lower() in _FAILED_STATES
            team_calls.append(
                TeamCall(
                    call=call,
                    span=span,
                    server=tree.server_of(span),
                    request=tree.request_of(span),
                    by_host=call.caller in host_set,
                    ok=call.ok and not state_failed,
                    reply_text=call.response_text or None,
                    reply_print=call.response_fingerprint or None,
                    one_way=_one_way(call),
                )
            )
        answered = {c.server.span_id for c in team_calls if c.server is not None}
        orphans = [
            s for s in tree.ordered() if is_agent_server_span(s) and s.span_id not in answered and _no_caller(tree, s)
        ]
        trace = cls(tree=tree, hosts=host_set, calls=team_calls, orphan_servers=orphans)
        trace._classify()
        return trace

    def _classify(self) -> None:
        earlier: dict[tuple[str, str], TeamCall] = {}
        failed_before: dict[tuple[str, str], TeamCall] = {}
        for c in self.calls:
            key = _request_key(c)
            if key is not None:
                first_ok = earlier.get(key)
                if first_ok is not None:
                    c.duplicate_of = first_ok.id
                elif key in failed_before:
                    c.retry_of = failed_before[key].id
                if c.ok and first_ok is None:
                    earlier[key] = c
                elif not c.ok:
                    failed_before.setdefault(key, c)
            if c.request is not None and c.span.end_time_unix_nano > c.request.end_time_unix_nano:
                c.late = True
        by_request: dict[str, list[TeamCall]] = defaultdict(list)
        for c in self.calls:
            if c.request is not None and not c.by_host:
                by_request[c.request.span_id].append(c)
        self.by_request = dict(by_request)
        for c in self.calls:
            if c.server is None:
                continue
            if c.one_way:
                back = next(
                    (d for d in self.by_request.get(c.server.span_id, []) if d.call.callee == c.call.caller), None
                )
                if back is not None:
                    c.reply_text, c.reply_print = back.call.request_text or None, back.call.request_fingerprint or None
            below = [d for d in self.by_request.get(c.server.span_id, []) if d.work]
            c.delegated = bool(below)
            if below and c.ok:
                c.relay = _is_relay(c, below)

    def requests_of(self, agent: str) -> list[SpanData]:
        """The SERVER spans of the requests ``agent`` answered that made calls, by start time."""
        return list(self._requests_by_agent.get(agent, ()))

    @functools.cached_property
    def _requests_by_agent(self) -> dict[str, list[SpanData]]:
        """:meth:`requests_of` every agent, read in one pass over the requests (not one pass per agent)."""
        seen: dict[str, dict[str, SpanData]] = defaultdict(dict)
        for calls in self.by_request.values():
            request = calls[0].request
            if request is not None:
                seen[calls[0].call.caller][request.span_id] = request
        return {
            agent: sorted(requests.values(), key=lambda s: (s.start_time_unix_nano, s.span_id))
            for agent, requests in seen.items()
        }

    @functools.cached_property
    def relay_requests(self) -> frozenset[str]:
        """SERVER span ids of the requests relays answered (they passed the work on, adding nothing)."""
        return frozenset(c.server.span_id for c in self.calls if c.relay and c.server is not None)

    @functools.cached_property
    def team_calls(self) -> list[TeamCall]:
        """The calls agents made to each other (the hosts' left out); read once, as the calls are classified once."""
        return [c for c in self.calls if not c.by_host]


def _no_caller(tree: SpanTree, server: SpanData) -> bool:
    """The server span's caller is lost: walking up its process, the parent it names never arrived."""
    current = server
    while True:
        parent = tree.parent(current)
        if parent is None:
            return current.parent_span_id is not None
        if is_agent_call(parent) or is_agent_server_span(parent) or parent.resource != server.resource:
            return False
        current = parent


def _one_way(call: Call) -> bool:
    """The response carried no text: counted 0 characters, or the request's text was captured and the response's not.

    The instrumentation captures both ends' text or neither, so a captured request beside no
    response text is a message that was answered with none (an acknowledgement).
    """
    if call.response_text or call.response_fingerprint:
        return False
    return call.response_text_chars == 0 or call.request_text is not None


def _request_key(c: TeamCall) -> tuple[str, str] | None:
    content = c.call.digest or (f"text:{c.call.request_text}" if c.call.request_text else None)
    return None if content is None else (c.call.callee, content)


def _is_relay(c: TeamCall, below: Sequence[TeamCall]) -> bool:
    if len({d.call.callee for d in below}) != 1:
        return False  # asking several agents and combining their answers is a coordinator's job
    reply = c.reply_text
    answers = [d.reply_text for d in below if d.reply_text]
    if reply and answers:
        replied = set(words(reply))
        if not replied:
            return False
        known = {w for text in answers for w in words(text)}
        return len(replied - known) / len(replied) < RELAY_NOVELTY and not _handed_own_work(c, below)
    printed = c.reply_print
    prints = [d.reply_print for d in below if d.reply_print]
    if printed and prints:
        added = novelty(printed, prints)
        if added is not None and added.sample >= MIN_SAMPLE:
            return added.value < RELAY_NOVELTY and not _handed_own_work(c, below)
    incoming = c.call.digest or (c.server.attribute_str(semconv.A2A_MESSAGE_DIGEST) if c.server is not None else None)
    return len(below) == 1 and incoming is not None and below[0].call.digest == incoming


def _handed_own_work(c: TeamCall, below: Sequence[TeamCall]) -> bool:
    """The agent put work of its own into what it passed on, and its callee's answer carries it.

    An answer that repeats the callee's words is a relay's, unless those words are the agent's
    own: a member that does its part and hands it on (a handoff) is answered with its own work
    built on, or copied back, downstream. What the agent added to the request it forwarded
    (beyond what it was asked) must show up, at least :data:`DEPENDENCY_CONTAINMENT` of it, in
    the callee's answer.
    """
    for d in below:
        judged = carried(d.call.request_text, d.call.request_fingerprint, into_text=d.reply_text,
                         into_print=d.reply_print, asked_text=c.call.request_text,
                         asked_print=c.call.request_fingerprint, threshold=DEPENDENCY_CONTAINMENT)  # fmt: skip
        if judged.value or _mostly_new(d, c):
            return True
    return False


def _mostly_new(forwarded: TeamCall, incoming: TeamCall) -> bool:
    """Most of the request the agent passed on is new against what it was asked: it handed on work of its own.

    A relay passes on (nearly) what it received; a member that did its part hands that part on.
    """
    sent, asked = forwarded.call.request_text, incoming.call.request_text
    if sent is not None and asked is not None:
        grams = trigrams(sent)
        return bool(grams) and len(grams - trigrams(asked)) / len(grams) >= HANDED_ON
    sent_print, asked_print = forwarded.call.request_fingerprint, incoming.call.request_fingerprint
    if sent_print and asked_print:
        added = novelty(sent_print, [asked_print])
        return added is not None and added.sample >= MIN_SAMPLE and added.value >= HANDED_ON
    return False


@per_text
def trigrams(text: str) -> frozenset[tuple[str, ...]]:
    """The word trigrams of ``text`` (its words themselves when it has fewer than three); cached per text.

    The C loop (``_text.c``) when built, else :func:`python_trigrams`: the same set.
    """
    said = words(text)
    native = TEXT_KERNELS
    found = native.trigrams(said) if native is not None else None
    return found if found is not None else python_trigrams(said)


def python_trigrams(said: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """:func:`trigrams` of a text's words, in Python: what the C loop must match."""
    if len(said) < 3:
        return frozenset({said} if said else set())
    return frozenset(zip(said, said[1:], said[2:], strict=False))  # the sliding windows of three


@per_text
def _added(texts: tuple[str, str]) -> frozenset[tuple[str, ...]]:
    return trigrams(texts[0]) - trigrams(texts[1])


def added_trigrams(text: str, asked: str | None) -> frozenset[tuple[str, ...]]:
    """The trigrams of ``text`` that ``asked`` lacks: what a reply brought beyond what it was asked (once per pair)."""
    return _added((text, asked or ""))


def is_cut(text: str) -> bool:
    """The captured text was cut short (by the instrumentation's limit, or the evaluators' own).

    What a cut text lacks proves nothing: the rest was not recorded.
    """
    return CUT_MARK in text or len(text) >= MESSAGE_TEXT_LIMIT


class Judged:
    """A yes/no judgement and how far it can be trusted: 1 (captured text), 0.85 (fingerprints), 0 (unknown)."""

    __slots__ = ("confidence", "value")

    def __init__(self, value: bool | None, confidence: float) -> None:
        self.value = value
        self.confidence = confidence

    def __repr__(self) -> str:
        return f"Judged({self.value}, {self.confidence})"


UNKNOWN = Judged(None, 0.0)


def carried(text: str | None, reply_print: tuple[int, ...] | None, *, into_text: str | None,
            into_print: tuple[int, ...] | None, asked_text: str | None, asked_print: tuple[int, ...] | None,
            threshold: float) -> Judged:  # fmt: skip
    """Whether at least ``threshold`` of what a reply added (beyond what it was asked) shows up in a later message.

    Counted on captured text when both texts are there, else estimated on fingerprints; unknown otherwise.
    """
    if text is not None and into_text is not None:
        added = added_trigrams(text, asked_text)
        if not added:
            return Judged(False, 1.0)  # the reply brought nothing new that could be carried on
        if len(added & trigrams(into_text)) / len(added) >= threshold:
            return Judged(True, 1.0)
        if not is_cut(into_text):
            return Judged(False, 1.0)
        # the later message was cut short: what it carried may lie past the cut (a conversation
        # handed on grows at its end); its fingerprint, of the whole text, decides
    if reply_print is not None and into_print is not None:
        estimate = containment(reply_print, into_print, minus=asked_print or ())
        if estimate is not None and estimate.sample >= MIN_SAMPLE:
            return Judged(estimate.value >= threshold, FINGERPRINT_CONFIDENCE)
    return UNKNOWN


def depends_on(later: TeamCall, earlier: TeamCall) -> Judged:
    """Whether ``later`` carries what ``earlier`` returned (see the module docstring); ``value=None``: unknown.

    Only meaningful when ``later`` started after ``earlier`` ended.
    """
    e, lt = earlier.call, later.call
    return carried(
        earlier.reply_text,
        earlier.reply_print,
        into_text=lt.request_text,
        into_print=lt.request_fingerprint,
        asked_text=e.request_text,
        asked_print=e.request_fingerprint,
        threshold=DEPENDENCY_CONTAINMENT,
    )


def interval(c: TeamCall, *, server_side: bool) -> tuple[int, int]:
    """When the call's work ran: the callee's SERVER span if asked and present, else the CLIENT span."""
    span = c.server if server_side and c.server is not None else c.span
    return span.start_time_unix_nano, span.end_time_unix_nano


def serialisation(
    a: TeamCall, b: TeamCall, dependence: Callable[[TeamCall, TeamCall], Judged] | None = None
) -> tuple[float | None, float]:
    """How far two calls of one request that could have run side by side were run one after another.

    Returns ``(value, confidence)``. ``value`` is ``None`` when they could not have run side by
    side (``b`` started after ``a`` ended and depends on it, or the other way round), or when
    that cannot be told (the benefit of the doubt; ``confidence`` 0). ``dependence(later, earlier)``
    judges the dependency (:meth:`coordbench.evals.dependency.Dependencies.of`: through the
    caller's steps and intermediate calls too); :func:`depends_on` by default. Otherwise :func:`apart`
    of their intervals, on the callees' SERVER spans when both arrived (so a callee that queued
    concurrent requests shows as serial), else on the CLIENT spans: 0 for calls that (nearly)
    fully overlap, 1 for calls one after another.

    Example:
        Calls 0-10 ms and 5-20 ms overlap 5 ms of the shorter's 10: ``(0.5 - 0.2) / 0.8``.
    """
    if (b.span.start_time_unix_nano, b.id) < (a.span.start_time_unix_nano, a.id):
        a, b = b, a
    confidence = 1.0
    if b.span.start_time_unix_nano >= a.span.end_time_unix_nano:
        judged = (dependence or depends_on)(b, a)
        if judged.value is None or judged.value:
            return None, judged.confidence
        confidence = judged.confidence
    server_side = a.server is not None and b.server is not None
    a0, a1 = interval(a, server_side=server_side)
    b0, b1 = interval(b, server_side=server_side)
    return apart(a1 - a0, b1 - b0, max(0, min(a1, b1) - max(a0, b0))), confidence


def apart(first: int, second: int, overlap: int) -> float:
    """How far two intervals of these lengths, overlapping by ``overlap``, ran one after the other, in [0, 1].

    ``1 - overlap / shorter``, with the first :data:`OVERLAP_SLACK` of it forgiven and the rest
    scaled back to [0, 1]: calls launched together never start at the same nanosecond, and a
    few percent apart is start-up jitter, not waiting.

    Example:
        >>> apart(10, 10, 10), apart(10, 10, 0), round(apart(10, 20, 5), 4)
        (0.0, 1.0, 0.375)
    """
    shorter = min(first, second)
    if shorter <= 0:
        return 0.0
    raw = 1.0 - min(1.0, overlap / shorter)
    return max(0.0, (raw - OVERLAP_SLACK) / (1.0 - OVERLAP_SLACK))
