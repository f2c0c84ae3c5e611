"""Team runs with a fault injected where the truth is known by construction: the labelled attribution set.

Five shapes (the rule-based star, a tree with a lead, a handoff chain; the model-driven ReAct
orchestrator and group chat of the real-LLM-teams issue), each member with its part of the
task (a fact with a figure), and one fault per run: a member that answers a wrong fact which the
team's answer repeats, guesses, gives up, fails, times out, is down, or repeats itself; a
coordinator that drops an answer, stops early, loops on one member, or reasons a figure wrong;
a lead that changes what it passes on. Spans look like the instrumentation's (a CLIENT span in
the caller with captured text, the callee's SERVER span inside it, each agent its own process;
an orchestrator's model calls as ``chat`` spans with their input and output messages), and the
assessor is the host.

``python -m tests.attribution.faults data/attribution`` writes ``traces.jsonl`` (OTLP/JSON, one
trace a line, as a collector's file exporter writes) and ``labels.json`` (per trace: the shape,
the fault, the responsible agent and decisive span, and the correct answer).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coordbench import semconv
from coordbench.otlp.encode import export_request_json
from coordbench.spans import SpanData, SpanKind, StatusCode

MS = 1_000_000
HOST = "assessor"
BASE = 1_767_225_600_000 * MS  # 2026-01-01, so the traces' times look like real ones

TOPICS: tuple[tuple[str, dict[str, tuple[str, str]]], ...] = (
    (
        "the harbour bridge renovation",
        {
            "research": ("the deck has {n} corroded girders", "14"),
            "analysis": ("the repair budget is {n} million euros", "42"),
            "planning": ("the works take {n} months with two lanes open", "18"),
            "review": ("the inspection found {n} cracked rivets on the north pylon", "230"),
        },
    ),
    (
        "the hospital wing expansion",
        {
            "research": ("the new wing adds {n} beds for intensive care", "64"),
            "analysis": ("construction costs {n} million dollars in total", "87"),
            "planning": ("the crane permit expires after {n} weeks", "26"),
            "review": ("fire exits must sit within {n} metres of each ward", "35"),
        },
    ),
    (
        "the regional rail timetable",
        {
            "research": ("peak trains carry {n} passengers per hour", "9400"),
            "analysis": ("the upgrade needs {n} new carriages from the supplier", "120"),
            "planning": ("signalling work closes the line for {n} weekends", "6"),
            "review": ("the safety audit flagged {n} level crossings", "17"),
        },
    ),
    (
        "the coastal flood defence",
        {
            "research": ("sea level rose {n} millimetres since the last survey", "48"),
            "analysis": ("the new barrier costs {n} million pounds", "310"),
            "planning": ("dredging needs {n} barges working in shifts", "11"),
            "review": ("the model shows {n} homes at risk in spring tides", "2100"),
        },
    ),
)
HELD_OUT_TOPICS: tuple[tuple[str, dict[str, tuple[str, str]]], ...] = (
    (
        "the city library refit",
        {
            "research": ("the archive holds {n} thousand volumes", "380"),
            "analysis": ("the refit is priced at {n} million crowns", "29"),
            "planning": ("the reading rooms reopen after {n} weeks", "34"),
            "review": ("the roof survey counted {n} leaking joints", "57"),
        },
    ),
    (
        "the wind farm extension",
        {
            "research": ("average wind speed at the site is {n} metres per second", "9"),
            "analysis": ("each turbine costs {n} million euros installed", "4"),
            "planning": ("cable laying takes {n} days of calm sea", "45"),
            "review": ("the bird survey recorded {n} nesting pairs", "312"),
        },
    ),
    (
        "the school canteen contract",
        {
            "research": ("the schools serve {n} meals a day", "5200"),
            "analysis": ("the contract is worth {n} thousand dollars a year", "760"),
            "planning": ("the new supplier starts in week {n}", "37"),
            "review": ("inspectors found {n} hygiene breaches last year", "13"),
        },
    ),
)
"""Topics the rules were never developed on (the held-out set)."""
HELD_OUT_SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "star": ("lead-agent", ("scout", "economist", "scheduler", "auditor")),
    "tree": ("hq", ("lead", "scout", "economist", "scheduler")),
    "chain": ("reception", ("scout", "economist", "scheduler", "auditor")),
    "react": ("planner-llm", ("browser", "python-exec", "doc-reader", "checker")),
    "groupchat": ("chat-manager", ("scout", "economist", "scheduler", "skeptic")),
}
PARTS = ("research", "analysis", "planning", "review")
WRONG = {"14": "41", "42": "97", "18": "81", "230": "23", "64": "46", "87": "78", "26": "62", "35": "53",
         "9400": "4900", "120": "210", "6": "60", "17": "71", "48": "84", "310": "130", "11": "110",
         "2100": "1200", "380": "830", "29": "92", "34": "43", "57": "75", "9": "19", "4": "14", "45": "54",
         "312": "213", "5200": "2500", "760": "670", "37": "73", "13": "31"}  # fmt: skip

SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "star": ("coordinator", ("researcher", "analyst", "planner", "reviewer")),
    "tree": ("coordinator", ("lead", "researcher", "analyst", "planner")),
    "chain": ("intake", ("researcher", "analyst", "planner", "reviewer")),
    "react": ("orchestrator", ("web-surfer", "coder", "file-reader", "verifier")),
    "groupchat": ("manager", ("researcher", "analyst", "planner", "critic")),
}
"""Each shape's entry and members (the members in the order of :data:`PARTS`; in ``tree`` the lead
runs researcher and analyst and the coordinator asks the planner itself)."""


@dataclass
class Run:
    """One run being written: its spans, and the truth."""

    name: str
    shape: str
    fault: str
    topic: int
    trace_id: str
    spans: list[SpanData] = field(default_factory=list[SpanData])
    ids: int = 0
    clock: float = 0.0
    truth_agent: str | None = None
    truth_span: str | None = None
    variant: str = "dev"

    def new_id(self) -> str:
        self.ids += 1
        return hashlib.blake2b(f"{self.name}/{self.ids}".encode(), digest_size=8).hexdigest()

    def tick(self, seconds: float = 1.0) -> float:
        self.clock += seconds
        return self.clock


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _ns(seconds: float) -> int:
    return BASE + round(seconds * 1000) * MS


def call(run: Run, caller: str, callee: str, parent: str, start: float, end: float, request: str,
         reply: str | None, *, error: str | None = None, server: bool = True,
         inner: Any = None) -> tuple[str, str]:  # fmt: skip
    """A CLIENT span in the caller and the callee's SERVER span inside it; returns (client id, server id).

    ``inner(server_id)`` writes what the callee did while serving it (before the span is added).
    """
    client_id, server_id = run.new_id(), run.new_id()
    digest = hashlib.blake2b(f"{callee}:{request}".encode(), digest_size=8).hexdigest()
    state = "completed" if error is None else "failed"
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
        semconv.GEN_AI_AGENT_NAME: callee,
        semconv.A2A_METHOD: "SendMessage",
        semconv.A2A_CALLER_NAME: caller,
        semconv.A2A_MESSAGE_DIGEST: digest,
        semconv.GEN_AI_INPUT_MESSAGES: _messages("user", request),
    }
    if server:
        attrs[semconv.A2A_TASK_STATE] = state
    if reply is not None:
        attrs[semconv.GEN_AI_OUTPUT_MESSAGES] = _messages("assistant", reply)
    if error is not None:
        attrs[semconv.ERROR_TYPE] = error
    status = StatusCode.UNSET if error is None else StatusCode.ERROR
    caller_resource = {semconv.SERVICE_NAME: caller}
    parent_id = parent
    run.spans.append(SpanData(run.trace_id, client_id, parent_id, f"invoke_agent {callee}", SpanKind.CLIENT,
                              _ns(start), _ns(end), attrs, status, resource=caller_resource))  # fmt: skip
    if server:
        if inner is not None:
            inner(server_id)
        server_attrs = {
            semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_AGENT,
            semconv.GEN_AI_AGENT_NAME: callee,
            semconv.A2A_METHOD: "SendMessage",
            semconv.A2A_MESSAGE_DIGEST: digest,
            semconv.A2A_TASK_STATE: state,
        }
        run.spans.append(SpanData(run.trace_id, server_id, client_id, f"invoke_agent {callee}", SpanKind.SERVER,
                                  _ns(start + 0.05), _ns(end - 0.05), server_attrs, status,
                                  resource={semconv.SERVICE_NAME: callee}))  # fmt: skip
    return client_id, server_id


def step(run: Run, agent: str, parent: str, start: float, end: float, heard: str, said: str) -> str:
    """A model call of ``agent`` (a ``chat`` span with its input and output messages); returns its id."""
    span_id = run.new_id()
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_CHAT,
        semconv.GEN_AI_AGENT_NAME: agent,
        semconv.GEN_AI_INPUT_MESSAGES: _messages("user", heard),
        semconv.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", said),
    }
    run.spans.append(SpanData(run.trace_id, span_id, parent, "chat local-model", SpanKind.CLIENT, _ns(start),
                              _ns(end), attrs, resource={semconv.SERVICE_NAME: agent}))  # fmt: skip
    return span_id


class Team:
    """The facts of one run and how each member answers, fault included."""

    def __init__(self, run: Run, rng: random.Random, faulty: str | None) -> None:
        self.run = run
        self.rng = rng
        self.faulty = faulty
        self.faulty_target: str | None = faulty
        held_out = run.variant == "held-out"
        self.entry, self.members = (HELD_OUT_SHAPES if held_out else SHAPES)[run.shape]
        title, facts = (HELD_OUT_TOPICS if held_out else TOPICS)[run.topic % 3 if held_out else run.topic]
        self.title = title
        self.facts = facts
        self.role = dict(zip(self.members, PARTS, strict=True))
        self.task = f"Report on {title}: " + ", ".join(f"the {p} part" for p in PARTS) + "."

    def fact(self, member: str, *, wrong: bool = False) -> str:
        template, figure = self.facts[self.role[member]]
        return template.format(n=WRONG[figure] if wrong else figure)

    def expected(self) -> str:
        return "; ".join(self.fact(m) for m in self.members) + "."

    def ask(self, member: str, context: str = "") -> str:
        lead = f"For {self.title}, give the {self.role[member]} part"
        return lead + (f". So far: {context}" if context else ".")

    def answer(self, member: str) -> tuple[str | None, str | None, bool]:
        """(reply, error, server span): the member's answer with its fault, if it is the faulty one."""
        fault = self.run.fault if member == self.faulty else "none"
        if self.run.variant == "held-out":  # other words than the rules were developed on
            template, figure = self.facts[self.role[member]]
            said = {"wrong_fact": f"Here is what I have. {self.fact(member, wrong=True)}",
                    "guess": f"Probably {template.format(n=WRONG[figure])}, going by similar projects",
                    "give_up": f"Unfortunately the search returned nothing useful about {self.title}"}.get(
                fault, f"Here is what I have. {self.fact(member)}")  # fmt: skip
            if fault in ("wrong_fact", "guess", "give_up", "none", "repeat"):
                return f"{member}: {said}.", None, True
        if fault == "wrong_fact":
            return f"{member}: {self.fact(member, wrong=True)}.", None, True
        if fault == "guess":
            template, figure = self.facts[self.role[member]]
            return f"{member}: I assume {template.format(n=WRONG[figure])}, I could not verify it.", None, True
        if fault == "give_up":
            return f"{member}: I could not find any records on {self.title} for the {self.role[member]} part.", \
                None, True  # fmt: skip
        if fault == "fail":
            return None, semconv.ERROR_TASK_FAILED, True
        if fault == "timeout":
            return None, "TimeoutError", True
        if fault == "down":
            return None, "ConnectError", False
        return f"{member}: {self.fact(member)}.", None, True

    def label(self, agent: str, span_id: str) -> None:
        self.run.truth_agent, self.run.truth_span = agent, span_id


def _host(run: Run, team: Team, body: Any) -> None:
    """The assessor's root HOST span and its call to the entry; ``body(server_id)`` writes the entry's work."""
    hosted(run, team.entry, team.task, body)


def hosted(run: Run, entry: str, task: str, body: Any) -> None:
    """The assessor asks ``entry`` the ``task``; ``body(server_id)`` writes the entry's work and returns its answer."""
    root = run.new_id()
    end = 60.0
    final: dict[str, str] = {}

    def inner(server_id: str) -> None:
        final["answer"] = body(server_id)

    start = run.tick(0.5)
    client, _ = call(run, HOST, entry, root, start, end, task, None, inner=inner)
    # the answer is known once the entry's work is written: set it on the call
    spans = run.spans
    at = next(i for i, s in enumerate(spans) if s.span_id == client)
    attrs = dict(spans[at].attributes) | {semconv.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", final["answer"])}
    end = run.tick(0.5)
    spans[at] = spans[at]._replace(attributes=attrs, end_time_unix_nano=_ns(end))
    server = next(i for i, s in enumerate(spans) if s.parent_span_id == client)
    spans[server] = spans[server]._replace(end_time_unix_nano=_ns(end - 0.05))
    run.spans.append(SpanData(run.trace_id, root, None, "assessment", SpanKind.INTERNAL, _ns(0), _ns(end + 0.5),
                              {semconv.A2A_CALL_TYPE: "HOST"}, resource={semconv.SERVICE_NAME: HOST}))  # fmt: skip


def _compose(team: Team, answers: dict[str, str | None], *, drop: str | None = None) -> str:
    parts = []
    for member in team.members:
        reply = answers.get(member)
        if member == drop:
            continue
        if reply is None:
            parts.append(f"the {team.role[member]} part is missing")
        else:
            parts.append(reply.split(": ", 1)[1].rstrip("."))
    return f"Report on {team.title}: " + "; ".join(parts) + "."


def star(run: Run, team: Team) -> None:
    """The rule-based star: the coordinator asks every member at once and merges their answers."""
    fault = run.fault

    def body(server_id: str) -> str:
        begin = run.tick()
        asked = [m for m in team.members if not (fault == "stop_early" and m == team.faulty_target)]
        answers: dict[str, str | None] = {}
        for k, member in enumerate(asked):
            reply, error, server = team.answer(member)
            client, served = call(run, team.entry, member, server_id, begin + 0.1 * k, begin + 3 + k, team.ask(member),
                                  reply, error=error, server=server)  # fmt: skip
            answers[member] = reply
            if member == team.faulty and fault in MEMBER_FAULTS:
                team.label(member, served if server else client)
        run.tick(3 + len(asked))
        drop = team.faulty_target if fault == "drop" else None
        return _compose(team, answers, drop=drop)

    _host(run, team, body)
    if fault in ("drop", "stop_early"):
        entry_server = next(s for s in run.spans if s.kind is SpanKind.SERVER and
                            s.attributes.get(semconv.GEN_AI_AGENT_NAME) == team.entry)  # fmt: skip
        team.label(team.entry, entry_server.span_id)


def tree(run: Run, team: Team) -> None:
    """A coordinator asks a lead (who runs two workers and merges them) and a planner; the lead may change a figure."""
    lead, w1, w2, planner = team.members
    fault = run.fault
    team.role = {lead: "review", w1: "research", w2: "analysis", planner: "planning"}

    def lead_work(server_id: str, begin: float) -> str:
        got: dict[str, str | None] = {}
        for k, member in enumerate((w1, w2)):
            reply, error, server = team.answer(member)
            client, served = call(run, lead, member, server_id, begin + 0.1 * k, begin + 2 + k,
                                  team.ask(member), reply, error=error, server=server)  # fmt: skip
            got[member] = reply
            if member == team.faulty and fault in MEMBER_FAULTS:
                team.label(member, served if server else client)
        merged = []
        for member in (w1, w2):
            reply = got[member]
            if reply is None:
                merged.append(f"the {team.role[member]} part is missing")
                continue
            text = reply.split(": ", 1)[1].rstrip(".")
            if fault == "relay_changed" and member == w2:
                _, figure = team.facts[team.role[member]]
                text = text.replace(figure, WRONG[figure])
            merged.append(text)
        return f"{lead}: " + "; ".join(merged) + f"; {team.fact(lead)}."

    def body(server_id: str) -> str:
        begin = run.tick()
        answers: dict[str, str | None] = {}
        holder: dict[str, str] = {}

        def inner(lead_server: str) -> None:
            holder["reply"] = lead_work(lead_server, begin + 0.5)
            if fault == "relay_changed":
                team.label(lead, lead_server)

        client, _ = call(run, team.entry, lead, server_id, begin, begin + 6, team.ask(lead), None, inner=inner)
        at = next(i for i, s in enumerate(run.spans) if s.span_id == client)
        reply = _messages("assistant", holder["reply"])
        attrs = dict(run.spans[at].attributes) | {semconv.GEN_AI_OUTPUT_MESSAGES: reply}
        run.spans[at] = run.spans[at]._replace(attributes=attrs)
        answers[lead] = holder["reply"]
        if not (fault == "stop_early" and team.faulty_target == planner):
            reply, error, server = team.answer(planner)
            client, served = call(run, team.entry, planner, server_id, begin + 0.2, begin + 4, team.ask(planner),
                                  reply, error=error, server=server)  # fmt: skip
            answers[planner] = reply
            if planner == team.faulty and fault in MEMBER_FAULTS:
                team.label(planner, served if server else client)
        run.tick(7)
        lead_part = holder["reply"].split(": ", 1)[1].rstrip(".")
        parts = [lead_part] if fault != "drop" or team.faulty_target != lead else []
        planner_reply = answers.get(planner)
        if planner_reply is not None and not (fault == "drop" and team.faulty_target == planner):
            parts.append(planner_reply.split(": ", 1)[1].rstrip("."))
        elif planner_reply is None and planner in answers:
            parts.append("the planning part is missing")
        return f"Report on {team.title}: " + "; ".join(parts) + "."

    _host(run, team, body)
    if fault in ("drop", "stop_early"):
        entry_server = next(s for s in run.spans if s.kind is SpanKind.SERVER and
                            s.attributes.get(semconv.GEN_AI_AGENT_NAME) == team.entry)  # fmt: skip
        team.label(team.entry, entry_server.span_id)


def chain(run: Run, team: Team) -> None:
    """A handoff chain: intake hands the task to the first member, each adds its part and hands it on."""
    fault = run.fault
    order = list(team.members)

    def hop(k: int, parent: str, begin: float, so_far: str) -> str | None:
        member = order[k]
        reply, error, server = team.answer(member)
        own = reply.split(": ", 1)[1].rstrip(".") if reply is not None else None
        holder: dict[str, str | None] = {"reply": None}

        def inner(server_id: str) -> None:
            if own is None:
                return
            passed = f"{so_far}; {own}" if so_far else own
            if k + 1 < len(order):
                if fault == "relay_changed" and member == team.faulty_target:
                    for figure, wrong in WRONG.items():
                        if f" {figure} " in f" {so_far} ":
                            passed = passed.replace(f" {figure} ", f" {wrong} ", 1)
                            break
                nxt = hop(k + 1, server_id, begin + 0.2, passed)
                holder["reply"] = nxt if nxt is not None else f"{member}: {passed}; the rest is missing."
            else:
                holder["reply"] = f"{member}: {passed}."

        request = f"Continue the report on {team.title}" + (f". So far: {so_far}" if so_far else ".")
        client, served = call(run, order[k - 1] if k else team.entry, member, parent, begin,
                              begin + 10 - k, request, None, error=error, server=server, inner=inner)  # fmt: skip
        if member == team.faulty and fault in MEMBER_FAULTS:
            team.label(member, served if server else client)
            handed = [s for s in run.spans if s.parent_span_id == served and s.kind is SpanKind.CLIENT]
            if handed and error is None:  # its part went on in the request it handed on
                team.label(member, handed[0].span_id)
        if fault == "relay_changed" and member == team.faulty_target:
            forwarded = next(s for s in run.spans if s.parent_span_id == served and s.kind is SpanKind.CLIENT)
            team.label(member, forwarded.span_id)
        at = next(i for i, s in enumerate(run.spans) if s.span_id == client)
        if holder["reply"] is not None:
            attrs = dict(run.spans[at].attributes) | {
                semconv.GEN_AI_OUTPUT_MESSAGES: _messages("assistant", holder["reply"])
            }
            run.spans[at] = run.spans[at]._replace(attributes=attrs)
        return holder["reply"]

    def body(server_id: str) -> str:
        begin = run.tick()
        reply = hop(0, server_id, begin, "")
        run.tick(11)
        if reply is None:
            return f"Report on {team.title}: the handoff failed at {order[0]}."
        return f"Report on {team.title}: " + reply.split(": ", 1)[1]

    _host(run, team, body)


def react(run: Run, team: Team) -> None:
    """A ReAct orchestrator: a model call decides each next member on the last answer, then one writes the answer."""
    fault = run.fault

    def body(server_id: str) -> str:
        notes: list[str] = []
        answers: dict[str, str | None] = {}
        asked: dict[str, str] = {}
        plan = list(team.members)
        if fault == "stop_early":
            plan.remove(team.faulty_target)
        if fault == "loop":
            plan = [plan[0], plan[1], plan[1], plan[1]]
        for k, member in enumerate(plan):
            heard = team.task + (" Notes: " + " ".join(notes) if notes else "")
            thought = f"Next I ask {member} for the {team.role[member]} part."
            if fault == "reasoning" and k == 2:
                earlier = plan[1]
                wrong = team.fact(earlier, wrong=True)
                thought = f"So {wrong}. Next I ask {member} for the {team.role[member]} part."
                notes[-1] = wrong + "."
            begin = run.tick()
            think = step(run, team.entry, server_id, begin, begin + 0.8, heard, thought)
            if fault == "reasoning" and k == 2:
                team.label(team.entry, think)
            reply, error, server = team.answer(member)
            request = asked.get(member) if fault == "loop" else None
            request = request or team.ask(member, " ".join(notes))
            asked[member] = request
            client, served = call(run, team.entry, member, server_id, run.tick(), run.tick(2), request, reply,
                                  error=error, server=server)  # fmt: skip
            if fault == "loop" and k == 2:
                team.label(team.entry, client)
            if member == team.faulty and fault in MEMBER_FAULTS:
                team.label(member, served if server else client)
            repeated = member in answers
            answers[member] = reply
            if reply is not None and not repeated and not (fault == "drop" and member == team.faulty_target):
                notes.append(reply.split(": ", 1)[1])
        begin = run.tick()
        heard = team.task + " Notes: " + " ".join(notes)
        drop = team.faulty_target if fault == "drop" else None
        final = _compose(team, answers, drop=drop)
        if fault == "reasoning":
            earlier = plan[1]
            final = final.replace(team.fact(earlier), team.fact(earlier, wrong=True))
        last = step(run, team.entry, server_id, begin, begin + 1, heard, final)
        if fault in ("drop", "stop_early"):
            team.label(team.entry, last)
        run.tick()
        return final

    _host(run, team, body)


def groupchat(run: Run, team: Team) -> None:
    """A group chat: the manager hands each speaker the conversation so far, two rounds; the last word is the answer."""
    fault = run.fault

    def body(server_id: str) -> str:
        conversation: list[str] = [team.task]
        said: dict[str, str] = {}
        for turn in range(2):
            for member in team.members:
                if fault == "stop_early" and member == team.faulty_target:
                    continue
                reply, error, server = team.answer(member)
                if turn == 1 and reply is not None:
                    base = said.get(member, reply)
                    if fault == "repeat" and member == team.faulty:
                        reply = base
                    else:
                        reply = base.rstrip(".") + f", and {team.role[member]} is confirmed for round two."
                request = "Conversation so far: " + " ".join(conversation)
                client, served = call(run, team.entry, member, server_id, run.tick(), run.tick(2), request, reply,
                                      error=error, server=server)  # fmt: skip
                # a repeat shows in the second turn; any other fault in the first
                if member == team.faulty and fault in MEMBER_FAULTS and turn == (1 if fault == "repeat" else 0):
                    team.label(member, served if server else client)
                if reply is not None:
                    said[member] = reply
                    if not (fault == "drop" and member == team.faulty_target):
                        conversation.append(reply)
        answers = {m: said.get(m) for m in team.members if m in said}
        final = _compose(team, answers, drop=team.faulty_target if fault == "drop" else None)
        run.tick()
        return final

    _host(run, team, body)
    if fault in ("drop", "stop_early"):
        entry_server = next(s for s in run.spans if s.kind is SpanKind.SERVER and
                            s.attributes.get(semconv.GEN_AI_AGENT_NAME) == team.entry)  # fmt: skip
        team.label(team.entry, entry_server.span_id)


MEMBER_FAULTS = ("wrong_fact", "guess", "give_up", "fail", "timeout", "down", "repeat")
"""Faults of a member (the member is responsible); the others are the entry's or a lead's."""
BUILDERS = {"star": star, "tree": tree, "chain": chain, "react": react, "groupchat": groupchat}
PLAN: dict[str, tuple[str, ...]] = {
    "star": ("wrong_fact", "guess", "give_up", "fail", "timeout", "down", "drop", "stop_early", "wrong_fact",
             "fail"),
    "tree": ("wrong_fact", "guess", "give_up", "fail", "down", "relay_changed", "relay_changed", "drop",
             "stop_early", "wrong_fact"),
    "chain": ("wrong_fact", "guess", "give_up", "fail", "timeout", "down", "relay_changed", "relay_changed",
              "wrong_fact", "give_up"),
    "react": ("wrong_fact", "guess", "give_up", "fail", "down", "drop", "stop_early", "loop", "reasoning",
              "reasoning"),
    "groupchat": ("wrong_fact", "guess", "give_up", "fail", "timeout", "repeat", "repeat", "drop", "stop_early",
                  "wrong_fact"),
}  # fmt: skip
"""The faults injected per shape (50 runs)."""


def build(shape: str, fault: str, k: int, variant: str = "dev") -> tuple[list[SpanData], dict[str, Any]]:
    """One run with its fault and its label (``variant``: ``dev``, or ``held-out``: other topics, names and words)."""
    name = f"{shape}-{fault}-{k}" if variant == "dev" else f"{variant}-{shape}-{fault}-{k}"
    rng = random.Random(name)
    trace_id = hashlib.blake2b(name.encode(), digest_size=16).hexdigest()
    run = Run(name=name, shape=shape, fault=fault, topic=k % len(TOPICS), trace_id=trace_id, variant=variant)
    members = (HELD_OUT_SHAPES if variant == "held-out" else SHAPES)[shape][1]
    pool = list(members)
    if shape == "tree":
        pool = {"drop": ["lead", "planner"], "stop_early": ["planner"], "relay_changed": ["lead"]}.get(
            fault, [m for m in members if m != "lead"]
        )
    if shape == "chain" and fault == "relay_changed":
        pool = list(members[1:-1])  # a member between two others changes what it hands on
    target = rng.choice(pool)
    team = Team(run, rng, target if fault in MEMBER_FAULTS else None)
    team.faulty_target = target
    BUILDERS[shape](run, team)
    assert run.truth_agent is not None, name
    label = {
        "trace_id": trace_id,
        "name": name,
        "shape": shape,
        "fault": fault,
        "agent": run.truth_agent,
        "span_id": run.truth_span,
        "expected": Team(Run(name, shape, fault, run.topic, trace_id, variant=variant), rng, None).expected()
        if shape != "tree" else _tree_expected(run),
    }  # fmt: skip
    return run.spans, label


def _tree_expected(run: Run) -> str:
    team = Team(Run(run.name, run.shape, "none", run.topic, run.trace_id, variant=run.variant), random.Random(0), None)
    lead, w1, w2, planner = team.members
    team.role = {lead: "review", w1: "research", w2: "analysis", planner: "planning"}
    return "; ".join(team.fact(m) for m in (w1, w2, lead, planner)) + "."


def labelled(variant: str = "dev") -> list[tuple[list[SpanData], dict[str, Any]]]:
    """Every run of :data:`PLAN`, in order."""
    out = []
    for shape, faults in PLAN.items():
        for k, fault in enumerate(faults):
            out.append(build(shape, fault, k, variant))
    return out


FILES = {"dev": ("traces.jsonl", "labels.json"), "held-out": ("held-out-traces.jsonl", "held-out-labels.json")}
"""Each variant's trace file and labels, in ``data/attribution/``."""


def files(variant: str) -> dict[str, str]:
    """The trace file's and the labels' text of ``variant``, by file name."""
    runs = labelled(variant)
    lines = [json.dumps(export_request_json(spans), sort_keys=True, separators=(",", ":")) for spans, _ in runs]
    labels = {"runs": [label for _, label in runs]}
    traces, truth = FILES[variant]
    return {traces: "\n".join(lines) + "\n", truth: json.dumps(labels, indent=1, sort_keys=True) + "\n"}


def write(folder: Path) -> None:
    """Write both variants' files into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for variant in FILES:
        for name, text in files(variant).items():
            (folder / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "data/attribution"))
