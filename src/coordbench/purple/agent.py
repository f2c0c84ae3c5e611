"""The purple agent: one member of a team, served over A2A, working from its conversation's messages.

For each incoming message it (1) keeps it in its context's memory, (2) reads the task, the
peers and any details from every message of that context, (3) does its role's own work (a TOOL
step, or an LLM step when a model is configured), (4) hands work to its delegates over A2A as
its member spec says (side by side, one after another, or as a chain) and asks the members it
consults, and (5) answers with the merged result as an artifact. Every hop is a real A2A call,
so the trace shows the team's real structure.

Peers (member name → A2A URL) come from the ``peers`` data part the assessor sends the entry
agent (and each agent forwards to its delegates), from the team's peers file, or from the
assessor's registry (``GET /peers``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import httpx
from a2a.helpers import get_data_parts, get_text_parts, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError

from coordbench.a2a import AgentCallError, Messenger
from coordbench.errors import CoordbenchError
from coordbench.instrument import tool_step
from coordbench.purple.llm import LLMBackend
from coordbench.purple.memory import ContextMemory, Remembered
from coordbench.purple.roles import Work, contribute, merge, subtask
from coordbench.purple.team import Member, Team

__all__ = ["PurpleAgent"]

logger = logging.getLogger(__name__)

_PACE = {"coordinator": 1.0, "lead": 1.0, "relay": 0.5, "researcher": 3.0, "analyst": 3.0, "writer": 4.0}
"""Units of simulated work per role (times the agent's ``pace`` in seconds): real agents take time."""
_DETAIL_KEYS = ("peers", "task", "from", "consult", "scenario", "role")


class MemberFailedError(CoordbenchError):
    """This member is configured to fail (a fault variant)."""

    default_message = "this member is configured to fail"


class PurpleAgent(AgentExecutor):
    """One team member.

    Args:
        team: The team.
        name: Which member this agent is.
        peers: Known member URLs, by name.
        peers_file: A JSON file ``{name: url}`` to read peers from when one is not known yet.
        registry: An assessor's base URL whose ``GET /peers`` lists registered agents.
        pace: Seconds per unit of simulated work (0: answer at once).
        llm: A model to write the contribution with (``None``: the rules).
        timeout: Seconds a call to another member may take.
        memory: Where conversations are kept.
    """

    def __init__(
        self,
        team: Team,
        name: str,
        *,
        peers: Mapping[str, str] | None = None,
        peers_file: Path | None = None,
        registry: str | None = None,
        pace: float = 0.05,
        llm: LLMBackend | None = None,
        timeout: float = 120.0,
        memory: ContextMemory | None = None,
    ) -> None:
        self.team = team
        self.member: Member = team.member(name)
        self.peers = dict(peers or {})
        self.peers_file = peers_file
        self.registry = registry
        self.pace = pace
        self.llm = llm
        self.memory = memory or ContextMemory()
        self.messenger = Messenger(timeout=timeout)

    async def close(self) -> None:
        """Close the clients to other members."""
        await self.messenger.close()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Answer one message of a conversation, from everything the conversation holds."""
        message = context.message
        if message is None:
            raise InvalidParamsError("no message")
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        texts = get_text_parts(message.parts)
        data: list[dict[str, Any]] = [d for d in get_data_parts(message.parts) if isinstance(d, dict)]
        history = self.memory.add(task.context_id, Remembered(text="\n".join(texts), data=tuple(data)))
        try:
            answer = await self._work(task.context_id, history)
        except MemberFailedError as exc:
            await updater.failed(updater.new_agent_message([Part(text=str(exc))]))
            return
        await updater.add_artifact([Part(text=answer)], name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Work is short and not resumable: cancelling is not supported."""
        raise UnsupportedOperationError("cancelling is not supported")

    async def _work(self, context_id: str, history: list[Remembered]) -> str:
        me = self.member
        details: dict[str, Any] = {}
        for remembered in history:
            for item in remembered.data:
                details.update(item)
                peers = item.get("peers")
                if isinstance(peers, dict):
                    self.peers.update({str(k): str(v) for k, v in cast("dict[Any, Any]", peers).items()})
        latest = history[-1]
        # a message that names the task in its data is an instruction from a teammate; any other text is material
        told = [m.text for m in history if m.text.strip() and not any("task" in item for item in m.data)]
        task = str(details.get("task") or (told[0] if told else latest.text))
        context = [text for text in told if text != task]
        extra = {k: v for k, v in details.items() if k not in _DETAIL_KEYS}
        if extra:
            context.append("Details: " + json.dumps(extra, sort_keys=True))
        work = Work(task=task, asked=latest.text, context=context)
        if me.delay:
            await asyncio.sleep(me.delay)
        if me.fail == "raise":
            raise RuntimeError(f"{me.name} broke down (a failing member)")
        if me.fail == "failed":
            raise MemberFailedError(f"{me.name} could not do its part (a failing member)")
        consulted = any(item.get("consult") for item in latest.data)  # a second opinion: no further hops
        if consulted or not (me.delegates or me.consults):
            return await self._own(work)
        if me.mode == "chain":
            own = await self._own(work)
            carry = own
            for name in me.delegates:
                answer = await self._ask(context_id, name, subtask(self._role(name), task, carry=carry), task)
                work.inputs[name] = answer
                carry = answer
        elif me.mode == "handoff":
            own = await self._own(work)
            name = await self._decide(task, [own], me.delegates)
            work.inputs[name] = await self._ask(context_id, name, subtask(self._role(name), task, carry=own), task)
        elif me.mode == "react":
            own = ""
            await self._react(context_id, task, work)
        elif me.mode == "groupchat":
            own = ""
            await self._group_chat(context_id, task, work)
        else:
            own = await self._own(work) if me.role not in ("coordinator", "lead", "relay") else ""
            asks = [(name, subtask(self._role(name), task)) for name in me.delegates]
            if me.mode == "parallel":
                answers = await asyncio.gather(*(self._ask(context_id, n, text, task) for n, text in asks))
            else:
                answers = [await self._ask(context_id, n, text, task) for n, text in asks]
            work.inputs.update(zip(me.delegates, answers, strict=True))
        for name in me.consults:
            work.inputs[name] = await self._ask(
                context_id, name, f"Check this work on: {task}\n\n{own or task}", task, consult=True
            )
        async with tool_step("merge", parameters={"inputs": sorted(work.inputs)}):
            await self._pause(0.5)
            return merge(me.name, work, own)

    async def _react(self, context_id: str, task: str, work: Work) -> None:
        """One delegate at a time: decide on what the last answer said, ask, read the answer, decide again."""
        remaining = list(self.member.delegates)
        transcript = [f"Task: {task}"]
        last = ""
        while remaining:
            name = await self._decide(task, transcript, remaining)
            remaining.remove(name)
            answer = await self._ask(context_id, name, subtask(self._role(name), task, carry=last), task)
            work.inputs[name] = answer
            transcript.append(f"{name}: {answer}")
            last = answer

    async def _group_chat(self, context_id: str, task: str, work: Work) -> None:
        """Each speaker in turn (or as the model picks) gets the conversation so far and adds to it."""
        me = self.member
        conversation = [f"Task: {task}"]
        for _ in range(me.rounds):
            waiting = list(me.delegates)
            while waiting:
                name = await self._decide(task, conversation, waiting) if me.select == "model" else waiting[0]
                waiting.remove(name)
                turn = "\n\n".join(conversation) + f"\n\n{name}, your turn: {subtask(self._role(name), task)}"
                answer = await self._ask(context_id, name, turn, task)
                conversation.append(f"{name}: {answer}")
                work.inputs[name] = answer

    async def _decide(self, task: str, seen: list[str], candidates: list[str]) -> str:
        """Whom to ask next, decided on what the conversation holds: the model's pick, else the next in order.

        The decision is a step of its own in the trace (an LLM step, or the rules' TOOL step)
        that records what it read, so the score can tell it was made on the last answer.
        """
        if self.llm is not None and self.member.select == "model":
            picked = await self.llm.choose(self.member.name, task, seen, candidates)
            if picked is not None:
                return picked
        async with tool_step("decide", parameters={"candidates": candidates}) as step:
            step.record_messages(seen[-1:], f"next: {candidates[0]}")
            return candidates[0]

    async def _own(self, work: Work) -> str:
        me = self.member
        if self.llm is not None:
            written = await self.llm.contribute(me.role, me.name, work)
            if written is not None:
                return written
        async with tool_step(f"{me.role}_rules", parameters={"asked": work.asked[:200]}):
            await self._pause(_PACE.get(me.role, 2.0))
            return contribute(me.role, me.name, work)

    async def _pause(self, units: float) -> None:
        if self.pace > 0:
            await asyncio.sleep(self.pace * units)

    def _role(self, name: str) -> str:
        try:
            return self.team.member(name).role
        except KeyError:
            return "observer"

    async def _ask(self, context_id: str, name: str, text: str, task: str, *, consult: bool = False) -> str:
        """Ask member ``name``; a failure is reported in the answer (handled), never raised."""
        url = await self._url(name)
        if url is None:
            logger.warning("%s: no URL known for %s", self.member.name, name)
            return f"({name} could not be reached: no URL known)"
        data: dict[str, Any] = {"task": task, "peers": self.peers, "from": self.member.name}
        if consult:
            data["consult"] = True
        try:
            reply = await self.messenger.send(
                url, text, data=data, context_id=f"{context_id}/{self.member.name}-{name}"
            )
        except AgentCallError as exc:
            logger.warning("%s: asking %s failed: %s", self.member.name, name, exc)
            return f"({name} failed: {exc})"
        if not reply.ok:
            return f"({name} ended {reply.state}: {reply.text[:200]})"
        return reply.text

    async def _url(self, name: str) -> str | None:
        if name in self.peers:
            return self.peers[name]
        if self.peers_file is not None and self.peers_file.exists():
            try:
                known = json.loads(self.peers_file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                logger.warning("cannot read the peers file %s: %s", self.peers_file, exc)
            else:
                if isinstance(known, dict):
                    self.peers.update({str(k): str(v) for k, v in cast("dict[Any, Any]", known).items()})
        if name not in self.peers and self.registry:
            try:
                async with httpx.AsyncClient(timeout=10) as http:
                    listed = (await http.get(self.registry.rstrip("/") + "/peers")).json().get("peers", [])
                self.peers.update({str(p["name"]): str(p["url"]) for p in listed if "name" in p and "url" in p})
            except (httpx.HTTPError, ValueError, TypeError, AttributeError) as exc:
                logger.warning("cannot read the registry at %s: %s", self.registry, exc)
        return self.peers.get(name)
