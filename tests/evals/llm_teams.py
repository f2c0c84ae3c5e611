"""Generated runs of the teams real frameworks produce: orchestrators that reason between calls, group chats.

An LLM orchestrator calls one agent, reads the answer, thinks (a model step of its own), and
calls the next; a group chat's manager hands each speaker the last message, or the conversation
so far; members of a research team message each other one way. Spans look like the
instrumentation's (:mod:`tests.evals.teams`): a CLIENT span in the caller with the message
digest and captured text, the callee's SERVER span inside it, each agent its own process; an
agent's own reasoning is an INTERNAL span of its process carrying its text in
``gen_ai.output.messages`` (and, for a model call, its input in ``gen_ai.input.messages``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st
from tests.evals.teams import HOST, MS, TRACE, WORDS, Team, Worker, _Spans, evaluate_spans

from coordbench import semconv
from coordbench.evals.evaluation import ScenarioEvaluation
from coordbench.sketch import fingerprint
from coordbench.spans import SpanData, SpanKind

ENTRY = "coordinator"
TASK = "plan the harbour bridge renovation: budget timeline and risks"

Thinking = Literal["reads", "quotes", "cosmetic", "silent", "none"]
"""What the orchestrator's step between two calls shows: its input holds the last answer (``reads``),
its thought quotes it (``quotes``), text that takes up nothing of it (``cosmetic``), a model call
that recorded no content (``silent``), or no step at all (``none``)."""
Carry = Literal["none", "last", "conversation"]
"""What each request carries: nothing of earlier answers, the last answer, or the whole conversation."""


@dataclass(frozen=True)
class Run:
    """One orchestrator or group-chat run: who is asked, in what order, and what goes between the calls."""

    speakers: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]  # each speaker's answer's words
    parallel: bool = False
    thinking: Thinking = "reads"
    carry: Carry = "none"
    idle: tuple[str, ...] = ()  # declared members nobody calls
    one_way: bool = False  # speakers answer with no text (a message, not a request with its answer)
    cut: int | None = None  # captured text cut at this many characters (the instrumentation's limit)
    repeat_last: bool = False  # the last speaker says again what it said before

    @property
    def members(self) -> list[str]:
        return sorted({ENTRY, *self.speakers, *self.idle})

    def as_team(self) -> Team:
        """The same members as a :class:`~tests.evals.teams.Team` (for the verdict's context)."""
        workers = tuple(Worker(name) for name in dict.fromkeys(self.speakers))
        return Team(workers=workers, idle=self.idle, roster=False, answer_words=self.answer_words)

    @property
    def answer_words(self) -> tuple[str, ...]:
        return tuple(w for words in self.words for w in words)


def _answer(run: Run, k: int) -> str:
    speaker = run.speakers[k]
    if run.repeat_last and k == len(run.speakers) - 1 and k > 0:
        k = max(i for i in range(k) if run.speakers[i] == speaker) if speaker in run.speakers[:k] else k
    words = run.words[k]
    return f"{speaker} found that the " + " and the ".join(f"{w} plan needs {w} checks" for w in words)


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _captured(text: str, cut: int | None) -> str:
    return text if cut is None or len(text) <= cut else text[:cut] + "...[truncated]"


class _Builder(_Spans):
    def step(self, parent: str, start: float, end: float, *, model: bool, input_text: str | None,
             output_text: str | None) -> None:  # fmt: skip
        attrs: dict[str, Any] = {semconv.GEN_AI_AGENT_NAME: ENTRY}
        if model:
            attrs[semconv.GEN_AI_OPERATION_NAME] = semconv.OPERATION_CHAT
        if input_text is not None:
            attrs[semconv.GEN_AI_INPUT_MESSAGES] = _messages("user", input_text)
        if output_text is not None:
            attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", output_text)
        name = "chat local-model" if model else "reasoning"
        self.spans.append(
            SpanData(
                TRACE,
                self.new_id(),
                parent,
                name,
                SpanKind.INTERNAL,
                round(start * MS),
                round(end * MS),
                attrs,
                resource={semconv.SERVICE_NAME: ENTRY},
            )
        )


def run_spans(run: Run) -> list[SpanData]:
    """The spans ``run`` would emit: a host asks the coordinator, which asks each speaker in turn."""
    out = _Builder()
    root, entry_client, entry_server = out.new_id(), out.new_id(), out.new_id()
    cursor = 2.0
    conversation = [TASK]
    last_answer: str | None = None
    for k, speaker in enumerate(run.speakers):
        begin = 2.0 if run.parallel else cursor
        if not run.parallel and k > 0 and run.thinking != "none":
            assert last_answer is not None
            thought = {
                "reads": (None, f"next I will ask {speaker}"),
                "quotes": (None, f"so {last_answer}; next I will ask {speaker}"),
                "cosmetic": (None, f"moving on to the next member of the roster, {speaker}"),
                "silent": (None, None),
            }[run.thinking]
            input_text = "\n".join(conversation) if run.thinking == "reads" else thought[0]
            out.step(
                entry_server,
                cursor,
                cursor + 1.0,
                model=run.thinking in ("reads", "silent"),
                input_text=input_text,
                output_text=thought[1],
            )
            begin = cursor + 1.0 + 0.25
        request = {
            "none": f"please work on part {k} of {TASK}, {speaker}",
            "last": f"{speaker}, continue from this: {last_answer}" if last_answer else f"{speaker}: {TASK}",
            "conversation": "\n".join(conversation) + f"\n{speaker}, your turn",
        }[run.carry]
        answer = _answer(run, k)
        end = begin + 10.0
        at = len(out.spans)
        out.call(ENTRY, speaker, entry_server, begin, end, request, None if run.one_way else answer)
        attrs = dict(out.spans[at].attributes)
        attrs[semconv.GEN_AI_INPUT_MESSAGES] = _messages("user", _captured(request, run.cut))
        attrs[semconv.A2A_REQUEST_FINGERPRINT] = list(fingerprint(request))
        if run.one_way:  # the answer comes back as a message of its own, sent while the speaker serves this one
            attrs[semconv.A2A_RESPONSE_TEXT_CHARS] = 0
            out.call(speaker, ENTRY, out.spans[at + 1].span_id, end - 2.0, end - 1.0, answer, None)
        else:
            attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", _captured(answer, run.cut))
            attrs[semconv.A2A_RESPONSE_FINGERPRINT] = list(fingerprint(answer))
        out.spans[at] = out.spans[at]._replace(attributes=attrs)
        conversation.append(answer)
        last_answer = answer
        cursor = end + 0.25
    finish = (2.0 + 10.0 if run.parallel else cursor) + 1.0
    final = "Final report: " + " ".join(run.answer_words)
    out.spans.append(
        SpanData(
            TRACE,
            entry_client,
            root,
            f"invoke_agent {ENTRY}",
            SpanKind.CLIENT,
            round(1.0 * MS),
            round((finish + 0.5) * MS),
            {
                semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
                semconv.GEN_AI_AGENT_NAME: ENTRY,
                semconv.A2A_METHOD: "SendMessage",
                semconv.GEN_AI_INPUT_MESSAGES: _messages("user", TASK),
                semconv.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", final),
            },
            resource={semconv.SERVICE_NAME: HOST},
        )
    )
    out.spans.append(
        SpanData(
            TRACE,
            entry_server,
            entry_client,
            f"invoke_agent {ENTRY}",
            SpanKind.SERVER,
            round(1.25 * MS),
            round(finish * MS),
            {
                semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
                semconv.GEN_AI_AGENT_NAME: ENTRY,
                semconv.A2A_METHOD: "SendMessage",
            },
            resource={semconv.SERVICE_NAME: ENTRY},
        )
    )
    out.spans.append(
        SpanData(
            TRACE,
            root,
            None,
            "scenario s1",
            SpanKind.INTERNAL,
            0,
            round((finish + 1.0) * MS),
            {semconv.A2A_CALL_TYPE: "HOST"},
            resource={semconv.SERVICE_NAME: HOST},
        )
    )
    return sorted(out.spans, key=lambda s: s.span_id)


def evaluate_run(run: Run, spans: list[SpanData] | None = None) -> ScenarioEvaluation:
    """The full pipeline's verdict on the run (the rule-based judge answering)."""
    return evaluate_spans(run_spans(run) if spans is None else spans, run.as_team())


@st.composite
def runs(draw: st.DrawFn, *, min_speakers: int = 2, max_speakers: int = 6) -> Run:
    """An orchestrator run of 2-6 calls to 2-4 distinct members, each answer its own words."""
    n = draw(st.integers(min_speakers, max_speakers))
    roster = [f"member{i}" for i in range(draw(st.integers(2, 4)))]
    speakers = tuple(draw(st.sampled_from(roster)) for _ in range(n))
    words = tuple(tuple(draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4, unique=True))) for _ in range(n))
    words = tuple(tuple(f"{w}{k}" for w in ws) for k, ws in enumerate(words))  # every answer its own
    return Run(speakers=speakers, words=words)
