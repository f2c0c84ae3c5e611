"""Generated team runs for metamorphic tests: a spec of what a team did, and the spans it would emit.

A host asks the entry agent (the coordinator); the coordinator thinks, delegates to its
workers (side by side or one after another), and merges. A worker may delegate in turn
(a tree), be reached through a relay that adds nothing, fail, or be asked the same thing
twice. Spans look like the instrumentation's: a CLIENT span in the caller with the message
digest, sizes and captured text, the callee's SERVER span inside it, each agent its own
process (``service.name``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import strategies as st

from coordbench import semconv
from coordbench.evals import EvalConfig, EvalContext, EvalPipeline, EvalScenario, JudgeConfig, TeamOutcome
from coordbench.evals.evaluation import ScenarioEvaluation
from coordbench.spans import SpanData, SpanKind, StatusCode
from coordbench.spantree import completeness_of

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
MS = 1_000_000
HOST = "assessor"
ENTRY = "coordinator"
TOPIC = "the harbour bridge renovation budget timeline and risks"

WORDS = (
    "granite",
    "steel",
    "cable",
    "pylon",
    "deck",
    "rivet",
    "paint",
    "survey",
    "tender",
    "permit",
    "concrete",
    "crane",
    "barge",
    "tide",
    "wind",
    "load",
    "fatigue",
    "weld",
    "bolt",
    "lane",
    "traffic",
    "toll",
    "ferry",
    "pier",
    "anchor",
    "truss",
    "arch",
    "span",
    "beam",
    "girder",
    "joint",
)


@dataclass(frozen=True)
class Worker:
    """One member the coordinator delegates to."""

    name: str
    duration: float = 10.0
    words: tuple[str, ...] = ("steel", "cable")
    sub: tuple[Worker, ...] = ()  # it delegates these in turn (side by side)
    relay: str | None = None  # reached through this agent, which only passes the work on
    duplicate: bool = False  # asked the same thing again after it answered
    extra_failures: int = 0  # further requests to it that fail

    def reply(self) -> str:
        return f"{self.name} reports " + " ".join(self.words)


@dataclass(frozen=True)
class Team:
    """What a team did in one scenario."""

    workers: tuple[Worker, ...]
    idle: tuple[str, ...] = ()  # declared members nobody calls
    parallel: bool = True
    think: float = 2.0  # the coordinator's own time before and after delegating
    answered: bool = True
    answer_words: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    drop_agent: str | None = None  # this agent exported no spans (an incomplete trace)
    roster: bool = True  # the task names every member (as a task that assigns the team's roles does)

    @property
    def members(self) -> list[str]:
        names = {ENTRY, *self.idle}
        stack = list(self.workers)
        while stack:
            worker = stack.pop()
            names.add(worker.name)
            if worker.relay:
                names.add(worker.relay)
            stack.extend(worker.sub)
        return sorted(names)


class _Spans:
    def __init__(self) -> None:
        self.spans: list[SpanData] = []
        self.ids = 0

    def new_id(self) -> str:
        self.ids += 1
        return f"{self.ids:016x}"

    def call(self, caller: str, callee: str, parent: str, start: float, end: float, request: str, reply: str | None,
             *, ok: bool = True, server: bool = True) -> str:  # fmt: skip
        client_id, server_id = self.new_id(), self.new_id()
        attrs: dict[str, Any] = {
            semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
            semconv.GEN_AI_AGENT_NAME: callee,
            semconv.A2A_METHOD: "SendMessage",
            semconv.A2A_CALLER_NAME: caller,
            semconv.A2A_MESSAGE_DIGEST: hashlib.blake2b(request.encode(), digest_size=8).hexdigest(),
            semconv.A2A_REQUEST_SIZE: len(request) + 40,
            semconv.A2A_RESPONSE_SIZE: len(reply or "") + 40,
            semconv.A2A_TASK_STATE: "completed" if ok else "failed",
            semconv.GEN_AI_INPUT_MESSAGES: json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": request}]}]
            ),
        }
        if reply is not None:
            attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
            )
        if not ok:
            attrs[semconv.ERROR_TYPE] = semconv.ERROR_TASK_FAILED
        status = StatusCode.UNSET if ok else StatusCode.ERROR
        self.spans.append(
            SpanData(
                TRACE,
                client_id,
                parent,
                f"invoke_agent {callee}",
                SpanKind.CLIENT,
                round(start * MS),
                round(end * MS),
                attrs,
                status,
                resource={semconv.SERVICE_NAME: caller},
            )
        )
        if server:
            server_attrs = {
                semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
                semconv.GEN_AI_AGENT_NAME: callee,
                semconv.A2A_METHOD: "SendMessage",
                semconv.A2A_MESSAGE_DIGEST: attrs[semconv.A2A_MESSAGE_DIGEST],
                semconv.A2A_TASK_STATE: attrs[semconv.A2A_TASK_STATE],
            }
            self.spans.append(
                SpanData(
                    TRACE,
                    server_id,
                    client_id,
                    f"invoke_agent {callee}",
                    SpanKind.SERVER,
                    round((start + 0.25) * MS),
                    round((end - 0.25) * MS),
                    server_attrs,
                    status,
                    resource={semconv.SERVICE_NAME: callee},
                )
            )
        return server_id


def _request(worker: Worker) -> str:
    return f"please work on part {worker.name} of {TOPIC}"


def _duration(worker: Worker) -> float:
    inner = max((_duration(w) for w in worker.sub), default=0.0)
    own = worker.duration + (inner + 1.0 if worker.sub else 0.0)
    return own + (1.0 if worker.relay else 0.0)


def _delegate(out: _Spans, caller: str, parent: str, workers: tuple[Worker, ...], start: float,
              parallel: bool) -> float:  # fmt: skip
    """Spans of ``caller`` delegating ``workers`` from ``start``; returns when the last answer is in."""
    cursor = start
    end = start
    for worker in workers:
        begin = start if parallel else cursor
        finish = begin + _duration(worker) + 1.0
        request, reply = _request(worker), worker.reply()
        if worker.relay:
            relay_server = out.call(caller, worker.relay, parent, begin, finish, request, reply)
            served = out.call(worker.relay, worker.name, relay_server, begin + 0.5, finish - 0.5, request, reply)
            inner_start = begin + 1.0
        else:
            served = out.call(caller, worker.name, parent, begin, finish, request, reply)
            inner_start = begin + 0.5
        if worker.sub:
            _delegate(out, worker.name, served, worker.sub, inner_start + worker.duration / 2, True)
        last = finish
        if worker.duplicate:
            again = finish + 0.5
            last = again + _duration(worker) + 1.0
            out.call(caller, worker.name, parent, again, last, request, reply)
        for k in range(worker.extra_failures):
            begin_f = begin if parallel else last + 0.5
            end_f = begin_f + 3.0
            out.call(caller, worker.name, parent, begin_f, end_f, f"{request} (variant {k})", None, ok=False)
            last = max(last, end_f)
        cursor = last + 0.5
        end = max(end, last)
    return end


def team_spans(team: Team) -> list[SpanData]:
    """The spans ``team`` would emit (the drop agent's left out)."""
    out = _Spans()
    root = out.new_id()
    entry_start = 1.0
    delegated_end = _delegate(out, ENTRY, "", team.workers, entry_start + team.think, team.parallel)
    entry_end = max(delegated_end, entry_start + team.think) + team.think
    answer = _answer(team)
    entry_server = out.call(
        HOST, ENTRY, root, entry_start - 0.5, entry_end + 0.5, TOPIC, answer or None, ok=team.answered
    )
    spans = [
        s._replace(parent_span_id=entry_server) if s.parent_span_id == "" else s for s in out.spans
    ]  # the coordinator's calls hang under its server span
    spans.append(
        SpanData(
            TRACE,
            root,
            None,
            "scenario s1",
            SpanKind.INTERNAL,
            0,
            round((entry_end + 1.0) * MS),
            {semconv.A2A_CALL_TYPE: "HOST"},
            resource={semconv.SERVICE_NAME: HOST},
        )
    )
    if team.drop_agent is not None:
        spans = [s for s in spans if s.service_name != team.drop_agent]
    return sorted(spans, key=lambda s: s.span_id)


def _answer(team: Team) -> str:
    if not team.answered:
        return ""
    words = team.answer_words or tuple(w for worker in team.workers for w in worker.words)
    return "Final report: " + " ".join(words)


def outcome(team: Team) -> TeamOutcome:
    if not team.answered:
        return TeamOutcome(state="failed", error="the coordinator failed")
    return TeamOutcome(state="completed", output=_answer(team))


CONFIG = EvalConfig(judge=JudgeConfig())  # no API key: the rule-based judge answers


def evaluate_spans(spans: list[SpanData], team: Team, *, rename: Callable[[str], str] = str) -> ScenarioEvaluation:
    """The full pipeline's verdict on ``spans`` (the rule-based judge answering)."""
    task = f"{TOPIC}. The team: {', '.join(rename(m) for m in team.members)}." if team.roster else TOPIC
    ctx = EvalContext.build(
        spans,
        scenario=EvalScenario(id="s1", task=task, references=list(team.references)),
        config=CONFIG,
        hosts=[rename(HOST)],
        participants=[rename(m) for m in team.members],
        completeness=completeness_of(TRACE, spans, 5.0),
        outcome=outcome(team),
    )
    return asyncio.run(EvalPipeline(CONFIG).run(ctx))


def score(team: Team) -> float:
    return evaluate_spans(team_spans(team), team).score.overall


# --- strategies ------------------------------------------------------------------------------


def worker_strategy(name: str, *, nested: bool = True) -> st.SearchStrategy[Worker]:
    subs = (
        st.lists(st.integers(0, 9), min_size=0, max_size=2, unique=True).map(
            lambda ks: tuple(Worker(f"{name}-sub{k}", words=(f"detail{k}",)) for k in ks)
        )
        if nested
        else st.just(())
    )
    return st.builds(
        Worker,
        name=st.just(name),
        duration=st.sampled_from([2.0, 5.0, 10.0, 20.0, 40.0]),
        words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5, unique=True).map(tuple),
        sub=subs,
        relay=st.none(),
        duplicate=st.just(False),
        extra_failures=st.just(0),
    )


@st.composite
def teams(draw: st.DrawFn, *, min_workers: int = 1, max_workers: int = 5, faults: bool = True) -> Team:
    """A team of 1-5 workers under one coordinator, well behaved or (``faults``) with some faults."""
    n = draw(st.integers(min_workers, max_workers))
    workers = [draw(worker_strategy(f"worker{i}")) for i in range(n)]
    if faults:
        for i, worker in enumerate(workers):
            fault = draw(st.sampled_from(["none", "none", "duplicate", "fails", "relay"]))
            if fault == "duplicate":
                workers[i] = replace(worker, duplicate=True)
            elif fault == "fails":
                workers[i] = replace(worker, extra_failures=draw(st.integers(1, 2)))
            elif fault == "relay":
                workers[i] = replace(worker, relay=f"relay{i}")
    idle = tuple(draw(st.lists(st.sampled_from(["spare1", "spare2"]), max_size=2, unique=True))) if faults else ()
    return Team(
        workers=tuple(workers),
        idle=idle,
        parallel=draw(st.booleans()),
        think=draw(st.sampled_from([0.5, 2.0, 10.0, 60.0])),
        references=tuple(
            draw(
                st.lists(
                    st.sampled_from(
                        ["final report steel cable pylon deck", "report on granite survey tender and permit"]
                    ),
                    max_size=2,
                    unique=True,
                )
            )
        ),
    )


def with_words(team: Team, words: tuple[str, ...]) -> Team:
    return replace(team, answer_words=words)


def drop(spans: list[SpanData], predicate: Callable[[SpanData], bool]) -> list[SpanData]:
    return [s for s in spans if not predicate(s)]


def renamed(spans: list[SpanData], mapping: dict[str, str]) -> list[SpanData]:
    """The spans with agents renamed (service names, callee and caller attributes)."""

    def name(value: object) -> object:
        return mapping.get(value, value) if isinstance(value, str) else value

    out: list[SpanData] = []
    for s in spans:
        attrs = dict(s.attributes)
        for key in (semconv.GEN_AI_AGENT_NAME, semconv.A2A_CALLER_NAME):
            if key in attrs:
                attrs[key] = name(attrs[key])
        resource = {k: name(v) if k == semconv.SERVICE_NAME else v for k, v in s.resource.items()}
        out.append(s._replace(attributes=attrs, resource=resource))
    return out


def shifted(spans: list[SpanData], by_ns: int) -> list[SpanData]:
    return [
        s._replace(start_time_unix_nano=s.start_time_unix_nano + by_ns, end_time_unix_nano=s.end_time_unix_nano + by_ns)
        for s in spans
    ]
