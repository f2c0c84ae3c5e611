"""Which calls of a request were decided on what earlier ones returned: order that is not waste.

Real teams are mostly sequential: an LLM orchestrator calls one agent, reads the answer, thinks,
and calls the next; a group chat hands each speaker the conversation so far. A call ``b`` made
after a call ``a`` of the same request had finished **depends** on ``a`` when the trace shows
``b`` was decided on what ``a`` returned:

- **directly**: ``b``'s request carries what ``a``'s answer added
  (:func:`~coordbench.evals.evidence.depends_on`: captured text, else fingerprints);
- **through the caller's own work**: a *step* of the caller (a model call, its own reasoning,
  a tool call: a span of its process below the request, not an A2A call) ran after ``a``
  ended and before ``b`` started and took up ``a``'s answer: its captured input holds it (then
  it counts from its start: a model call's span may stay open while the call it decided runs),
  or its output draws on it (from its end) (:func:`reads`). A step whose content shows no uptake decides
  nothing: a cosmetic span between two independent calls does not make them dependent. A
  model step that recorded no content at all (no text, no fingerprint) is read from timing
  alone, at :data:`TIMING_CONFIDENCE`;
- **through intermediate calls**: ``b`` depends on a call ``m`` that depends on ``a``
  (each answer carried into the next request of a chain, say): order through an
  intermediate is dependency.

Each judgement carries its confidence: 1 from captured text, 0.85 from fingerprints,
:data:`TIMING_CONFIDENCE` from timing alone; through an intermediate, the weakest link's.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from coordbench import jsontext, semconv
from coordbench.evals.calls import json_strings, message_text
from coordbench.evals.evidence import (
    COMPARED,
    DEPENDENCY_CONTAINMENT,
    FINGERPRINT_CONFIDENCE,
    MIN_SAMPLE,
    UNKNOWN,
    Judged,
    TeamCall,
    TeamTrace,
    added_trigrams,
    depends_on,
    is_cut,
    trigrams,
)
from coordbench.sketch import containment, fingerprint
from coordbench.spans import SpanData
from coordbench.spantree import SpanTree, is_agent_call, is_agent_server_span

__all__ = ["MODEL_OPERATIONS", "TIMING_CONFIDENCE", "Dependencies", "Step", "dependencies_of", "reads", "steps_of"]

TIMING_CONFIDENCE = 0.5
"""How far a dependency read from timing alone (a model step with no content between two calls) is trusted."""
MODEL_OPERATIONS = frozenset({semconv.OPERATION_CHAT, "generate_content", "text_completion"})
"""``gen_ai.operation.name`` values of a model call: a step that can decide what to do next."""
GEN_AI_TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
"""A tool call's arguments, when the framework captures them (Google ADK with content capture)."""
ADK_CALL_LLM = "call_llm"
ADK_SYSTEM = "gcp.vertex.agent"
"""Google ADK's legacy model-call span (telemetry schema 1, before the GenAI conventions): its name and system."""
MIN_SHARED = 2
"""Trigrams a step's own output must share with an answer (and a quarter of the smaller set) to draw on it."""
QUOTED = 3
"""Content trigrams a step's own output shares with an answer that show it drew on it, however long both are."""
_FUNCTION_TEXT = (
    "a an the and or but if of to in on at by for with from as is are was were be been it its this that "
    "these those i we you he she they them our your their my me us not no so then than there here what "
    "which who will would can could should may might do does did has have had into about over after "
    "before next now"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_TEXT.split())


@dataclass(frozen=True, slots=True)
class Step:
    """A caller's own work inside a request, between its calls: a model call, its reasoning, a tool call.

    Attributes:
        span: The step's span.
        model: A model call or the agent's own reasoning (it can decide the next call); a tool
            call otherwise.
        input_text: What it was given, when captured (a model's input messages, a tool's parameters).
        output_text: What it produced, when captured.
        input_print: The fingerprint of its input, when recorded.
        output_print: The fingerprint of its output, when recorded.
    """

    span: SpanData
    model: bool
    input_text: str | None
    output_text: str | None
    input_print: tuple[int, ...] | None
    output_print: tuple[int, ...] | None

    @property
    def silent(self) -> bool:
        """It recorded no content at all: no text and no fingerprint."""
        return not (self.input_text or self.output_text or self.input_print or self.output_print)


def _fingerprint(span: SpanData, key: str) -> tuple[int, ...] | None:
    value = span.attributes.get(key)
    if not isinstance(value, list | tuple):
        return None
    hashes = sorted({v for v in value if isinstance(v, int) and not isinstance(v, bool) and v >= 0})  # pyright: ignore[reportUnknownVariableType]
    return tuple(hashes[:48]) or None


def _text(span: SpanData, key: str) -> str | None:
    value = span.attributes.get(key)
    return value if isinstance(value, str) and value not in ("", "{}") else None


def _adk_text(span: SpanData, key: str, field: str) -> str | None:
    """The strings of ADK's legacy JSON record of a model request (``contents``) or response (``content``)."""
    raw = _text(span, key)
    if raw is None:
        return None
    try:
        record = jsontext.loads(raw)
    except ValueError:
        return None
    found = json_strings(record.get(field) if isinstance(record, dict) else None)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return found or None


def _step(span: SpanData) -> Step | None:
    """``span`` as a step, or ``None`` when it is not one (HTTP, framework and workflow spans)."""
    operation = span.attributes.get(semconv.GEN_AI_OPERATION_NAME)
    input_text = message_text(span.attributes.get(semconv.GEN_AI_INPUT_MESSAGES))
    output_text = message_text(span.attributes.get(semconv.GEN_AI_OUTPUT_MESSAGES))
    if operation == semconv.OPERATION_EXECUTE_TOOL:
        model = False
        input_text = input_text or _text(span, semconv.A2A_TOOL_PARAMETERS) or _text(span, GEN_AI_TOOL_ARGUMENTS)
    elif operation in MODEL_OPERATIONS:
        model = True
    elif operation is None and span.name == ADK_CALL_LLM and span.attributes.get("gen_ai.system") == ADK_SYSTEM:
        # Google ADK's legacy telemetry (schema 1): the model call's request and response as JSON
        model = True
        input_text = input_text or _adk_text(span, "gcp.vertex.agent.llm_request", "contents")
        output_text = output_text or _adk_text(span, "gcp.vertex.agent.llm_response", "content")
    elif operation is None and (input_text or output_text):
        model = True  # an agent's own reasoning, recorded as an internal span with its text
    else:
        return None
    return Step(
        span=span,
        model=model,
        input_text=input_text,
        output_text=output_text,
        input_print=_fingerprint(span, semconv.A2A_STEP_INPUT_FINGERPRINT),
        output_print=_fingerprint(span, semconv.A2A_STEP_OUTPUT_FINGERPRINT),
    )


def steps_of(tree: SpanTree, request: SpanData) -> list[Step]:
    """The steps the agent serving ``request`` took for it, by start time (its calls and their insides left out).

    A model step that recorded nothing, inside a model step that recorded its content, is the same
    model call seen twice (Google ADK's legacy ``call_llm`` span holds its ``generate_content``
    span): the outer one reads it.
    """
    out: list[Step] = []
    stack = [(span, False) for span in tree.children_of(request.span_id)]
    while stack:
        span, in_model = stack.pop()
        if span.resource != request.resource or is_agent_call(span) or is_agent_server_span(span):
            continue
        step = _step(span)
        if step is not None and not (in_model and step.model and step.silent):
            out.append(step)
        inside = in_model or (step is not None and step.model and not step.silent)
        stack.extend((child, inside) for child in tree.children_of(span.span_id))
    out.sort(key=lambda s: (s.span.start_time_unix_nano, s.span.span_id))
    return out


def reads(step: Step, answer: TeamCall) -> Judged:
    """Whether ``step`` took up what ``answer`` returned (beyond what it was asked); ``value=None``: cannot tell.

    Its captured input holds at least :data:`~coordbench.evals.evidence.DEPENDENCY_CONTAINMENT`
    of the answer's new trigrams, or its captured output shares at least that share of the
    smaller of the two sets (and :data:`MIN_SHARED` trigrams), or :data:`QUOTED` trigrams that
    are not function words alone: a thought that quotes the answer. On fingerprints when no
    text was captured. Text that was cut short by the instrumentation proves nothing by what
    it lacks; an answer that brought nothing beyond what it was asked cannot show whether it
    was read (``None``: a model step then decides from timing, as one that recorded nothing).
    """
    return _uptake(step, answer)[0]


def _uptake(step: Step, answer: TeamCall) -> tuple[Judged, bool]:
    """:func:`reads`, and whether the step's input showed it.

    What its input holds is known when the step began: a model call's span may stay open while
    the call it decided runs (Google ADK's ``call_llm`` does).
    """
    reply, asked = answer.reply_text, answer.call.request_text
    if reply is not None and (step.input_text is not None or step.output_text is not None):
        added = added_trigrams(reply, asked)
        if not added:
            return UNKNOWN, False  # the answer brought nothing new: whether it was read cannot show
        proven_absent = True
        if step.input_text is not None:
            if len(added & trigrams(step.input_text)) >= DEPENDENCY_CONTAINMENT * len(added):
                return Judged(True, 1.0), True
            proven_absent = not is_cut(step.input_text)
        if step.output_text is not None:
            said = trigrams(step.output_text)
            common = added & said
            shared = len(common)
            if shared >= min(MIN_SHARED, len(added)) and shared >= DEPENDENCY_CONTAINMENT * min(len(added), len(said)):
                return Judged(True, 1.0), False
            if sum(1 for gram in common if not _FUNCTION_WORDS.issuperset(gram)) >= QUOTED:
                return Judged(True, 1.0), False  # a long thought quoting a long answer in part
        if proven_absent:
            return Judged(False, 1.0), False
    printed, asked_print = answer.reply_print, answer.call.request_fingerprint
    if printed:
        judged: dict[bool, bool] = {}  # by the input (else the output) -> taken up
        for by_input, into, text in ((True, step.input_print, step.input_text),
                                     (False, step.output_print, step.output_text)):  # fmt: skip
            if not into and text and reply is None and not is_cut(text):
                into = fingerprint(text)  # the answer has only its fingerprint: the step's text gets its own
            if into:
                estimate = containment(printed, into, minus=asked_print or ())
                if estimate is not None and estimate.sample >= MIN_SAMPLE:
                    judged[by_input] = estimate.value >= DEPENDENCY_CONTAINMENT
        if judged:
            return Judged(any(judged.values()), FINGERPRINT_CONFIDENCE), judged.get(True, False)
    return UNKNOWN, False


class Dependencies:
    """Which work calls of one request depend on which earlier ones (see the module docstring).

    Args:
        tree: The spans.
        request: The caller's SERVER span the calls were made for.
        work: The request's work calls, by start time.
    """

    def __init__(
        self,
        tree: SpanTree,
        request: SpanData | None,
        work: Sequence[TeamCall],
        *,
        steps: Sequence[Step] | None = None,
    ) -> None:
        """Read every pair's dependency once, with the links through intermediate calls.

        Each call is compared with the :data:`~coordbench.evals.evidence.COMPARED` calls before
        it, the latest first; one already reached through an intermediate is not read again, so
        a chain of n calls costs n direct readings, not n squared. ``steps``: the request's
        :func:`steps_of`, when already read.
        """
        if steps is None:
            steps = steps_of(tree, request) if request is not None else []
        self._steps = steps
        self._taken: dict[str, tuple[int, float]] = {}  # call id -> when a step had taken its answer up, trust
        self._timed: dict[str, int] = {}  # call id -> when a model step of unreadable content ran after it
        self._on: dict[str, dict[str, float]] = {}
        self._against: dict[tuple[str, str], float] = {}
        if self._steps:
            self._read_steps(work)
        index = {c.id: i for i, c in enumerate(work)}
        for i, b in enumerate(work):
            first = max(0, i - COMPARED)
            found: dict[str, float] = {}
            for a in reversed(work[first:i]):
                if a.id in found or b.span.start_time_unix_nano < a.span.end_time_unix_nano:
                    continue
                link = self._direct(b, a)
                if link.value:
                    found[a.id] = link.confidence
                    for before, trust in self._on.get(a.id, {}).items():
                        through = min(trust, link.confidence)
                        if index[before] >= first and through > found.get(before, 0.0):
                            found[before] = through
                elif link.value is False:
                    self._against[(b.id, a.id)] = link.confidence
            self._on[b.id] = found

    def _read_steps(self, work: Sequence[TeamCall]) -> None:
        """For each call, the first step after it that took its answer up, and the first unreadable model step.

        Steps are read up to the start of the last call the call is compared with, each (step,
        call) pair once: the cost grows with calls times the steps between them, not with pairs
        of calls times steps.
        """
        starts = [s.span.start_time_unix_nano for s in self._steps]
        for i, a in enumerate(work):
            horizon = work[min(len(work) - 1, i + COMPARED)].span.start_time_unix_nano
            for step in self._steps[bisect.bisect_left(starts, a.span.end_time_unix_nano) :]:
                if step.span.start_time_unix_nano > horizon:
                    break
                ended = step.span.end_time_unix_nano
                took, on_input = (UNKNOWN, False) if step.silent else _uptake(step, a)
                if took.value:  # decided by then: when it began, if its input held the answer
                    self._taken[a.id] = (step.span.start_time_unix_nano if on_input else ended, took.confidence)
                    break
                if took.value is None and step.model and a.id not in self._timed:
                    self._timed[a.id] = ended

    def _direct(self, b: TeamCall, a: TeamCall) -> Judged:
        """``b`` on ``a`` without intermediate calls: its request, else a step of the caller in between.

        A step in between that took ``a``'s answer up decides it (its confidence); failing that, a
        model step whose content cannot be read (none recorded, or cut short) decides it from
        timing alone (:data:`TIMING_CONFIDENCE`); a step whose content shows no uptake decides nothing.
        """
        carried = depends_on(b, a)
        if carried.value:
            return carried
        begun = b.span.start_time_unix_nano
        taken = self._taken.get(a.id)
        if taken is not None and taken[0] <= begun:
            return Judged(True, taken[1])
        timed = self._timed.get(a.id)
        if timed is not None and timed <= begun:
            return Judged(True, TIMING_CONFIDENCE)
        return carried

    def of(self, later: TeamCall, earlier: TeamCall) -> Judged:
        """Whether ``later`` (started after ``earlier`` ended) depends on it, directly or through other calls."""
        trust = self._on.get(later.id, {}).get(earlier.id)
        if trust is not None:
            return Judged(True, trust)
        against = self._against.get((later.id, earlier.id))
        return UNKNOWN if against is None else Judged(False, against)


def request_steps(trace: TeamTrace, request: SpanData) -> list[Step]:
    """:func:`steps_of` the request in ``trace`` (read once, then kept: several measures read them)."""
    key = ("steps", request.span_id)
    kept = trace.memo.get(key)
    if kept is None:
        kept = trace.memo[key] = steps_of(trace.tree, request)
    return cast("list[Step]", kept)


def dependencies_of(trace: TeamTrace, request_id: str) -> Dependencies:
    """The dependencies among the work calls of one request of ``trace`` (read once, then kept)."""
    key = ("dependencies", request_id)
    kept = trace.memo.get(key)
    if isinstance(kept, Dependencies):
        return kept
    calls = trace.by_request.get(request_id, [])
    work = sorted((c for c in calls if c.work), key=lambda c: (c.span.start_time_unix_nano, c.id))
    request = calls[0].request if calls else None
    made = Dependencies(trace.tree, request, work, steps=request_steps(trace, request) if request is not None else [])
    trace.memo[key] = made
    return made
