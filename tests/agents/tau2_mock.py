"""A rule-based A2A agent for tau2's ``mock`` domain, speaking coordbench.tau2's turn format.

It reads each turn with :func:`coordbench.tau2.translate.decode_request` and answers with
:func:`~coordbench.tau2.translate.reply_parts`: a tool call for a request it understands, then
text once the tool's result comes back. Behaviours, for the error paths:

``good`` (default); ``fail`` (ends the task failed); ``unknown_tool`` (asks for ``delete_task``
first, then for the right tool once told it does not exist); ``bad_arguments`` (arguments that
are a string); ``always_unknown`` (never names a real tool); ``empty`` (a reply with no parts);
``slow`` (sleeps ``delay`` seconds first); ``text_json`` (the tool call as JSON inside text).
With ``token`` set, every request must carry it (``Authorization: Bearer``) or gets 401.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage

from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.tau2.translate import decode_request, reply_parts


def request_call(text: str) -> ToolCall | None:
    """The mock tool a user's request asks for, by rules on its words."""
    lowered = text.lower()
    user = re.search(r"user_\d+", text)
    task = re.search(r"task_\d+", text)
    title = re.search(r"['\"]([^'\"]+)['\"]", text)
    if "delete" in lowered:
        return ToolCall(
            id="",
            name="transfer_to_human_agents",
            arguments={"summary": "User wants to delete tasks, which the tools cannot do."},
        )
    if "create" in lowered and user and title:
        return ToolCall(id="", name="create_task", arguments={"user_id": user.group(0), "title": title.group(1)})
    if task and "complete" in lowered:
        return ToolCall(id="", name="update_task_status", arguments={"task_id": task.group(0), "status": "completed"})
    return None


class MockDomainExecutor(AgentExecutor):
    """See the module docstring."""

    def __init__(self, behaviour: str = "good", *, delay: float = 0.0) -> None:
        self.behaviour = behaviour
        self.delay = delay
        self.contexts: list[str] = []
        self.first_turns: dict[str, Any] = {}
        self.last_requests: dict[str, Any] = {}
        self._corrected: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        self.contexts.append(task.context_id)
        if self.behaviour == "slow":
            await asyncio.sleep(self.delay)
        if self.behaviour == "fail":
            await updater.failed(updater.new_agent_message([Part(text="mock agent gave up")]))
            return
        if self.behaviour == "empty":
            await updater.add_artifact([], name="reply")
            await updater.complete()
            return
        texts = [p.text for p in context.message.parts if p.WhichOneof("content") == "text"]
        if any(t.startswith("Your tool call could not be used") for t in texts):
            self._corrected.add(task.context_id)
            answer = self._answer(self.last_requests.get(task.context_id), corrected=True)
        else:
            request = decode_request(context.message.parts)
            if request.policy is not None:
                self.first_turns[task.context_id] = request
            self.last_requests[task.context_id] = request.message
            answer = self._answer(request.message, corrected=False)
        parts = reply_parts(answer)
        if self.behaviour == "text_json" and answer.tool_calls:
            call = answer.tool_calls[0]
            wanted = json.dumps({"tool_call": {"name": call.name, "arguments": call.arguments}})
            parts = [Part(text=f"Sure, calling it now:\n```json\n{wanted}\n```")]
        await updater.add_artifact(parts, name="reply")
        await updater.complete()

    def _answer(self, message: Any, *, corrected: bool) -> AssistantMessage:
        if isinstance(message, UserMessage):
            call = request_call(message.content or "")
            if call is None:
                return AssistantMessage(role="assistant", content="How can I help you with your tasks?")
            if self.behaviour == "always_unknown" or (self.behaviour == "unknown_tool" and not corrected):
                call = ToolCall(id="", name="delete_task", arguments={"task_id": "task_1"})
            elif self.behaviour == "bad_arguments":
                return AssistantMessage(
                    role="assistant", content='{"tool_call": {"name": "create_task", "arguments": "user_1"}}'
                )
            return AssistantMessage(role="assistant", tool_calls=[call])
        result = message.tool_messages[0] if hasattr(message, "tool_messages") else message
        if result is not None and result.error:
            return AssistantMessage(role="assistant", content=f"That did not work: {result.content}")
        return AssistantMessage(role="assistant", content=f"Done. The result: {result.content if result else ''}")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class Wire:
    """The bytes of every JSON-RPC exchange, counted on the server's side of the socket."""

    def __init__(self) -> None:
        self.request_bytes = 0
        self.response_bytes = 0
        self.posts = 0


class _Guard(BaseHTTPMiddleware):
    """Counts message bytes; with a token, refuses messages without it (the card stays public)."""

    def __init__(self, app: Any, token: str | None, wire: Wire, http_status: int | None = None) -> None:
        super().__init__(app)
        self.token = token
        self.wire = wire
        self.http_status = http_status

    async def dispatch(self, request: Request, call_next: Any) -> Response:
        if request.method != "POST":
            return await call_next(request)
        body = await request.body()
        self.wire.posts += 1
        self.wire.request_bytes += len(body)
        if self.http_status is not None:  # a broken deployment: every message answered with this status
            broken = JSONResponse({"error": "the server is broken"}, status_code=self.http_status)
            self.wire.response_bytes += len(broken.body)
            return broken
        if self.token is not None and request.headers.get("authorization") != f"Bearer {self.token}":
            refused = JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
            self.wire.response_bytes += len(refused.body)
            return refused
        response = await call_next(request)
        chunks = [chunk async for chunk in response.body_iterator]  # type: ignore[attr-defined]
        content = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
        self.wire.response_bytes += len(content)
        return Response(content, status_code=response.status_code, headers=dict(response.headers))


def mock_agent_app(
    url: str,
    executor: MockDomainExecutor,
    *,
    token: str | None = None,
    wire: Wire | None = None,
    message_url: str | None = None,
    http_status: int | None = None,
) -> Starlette:
    """The agent's A2A app at ``url`` (card named ``mock-domain-agent``).

    ``message_url`` puts another address on the card for messages (a dead one, to test an
    agent that goes away after its card was read).
    """
    card = build_agent_card(
        "mock-domain-agent", message_url or url, description="rule-based agent for tau2's mock domain", streaming=False
    )
    app = create_a2a_app(card, executor)
    app.add_middleware(_Guard, token=token, wire=wire or Wire(), http_status=http_status)
    return app


def main(argv: list[str] | None = None) -> None:
    """Serve the agent as a process: prints ``READY <url>``; ``--configure-tracing`` exports its spans."""
    import argparse
    import sys

    from support.serving import serve_announced

    parser = argparse.ArgumentParser()
    parser.add_argument("--behaviour", default="good")
    parser.add_argument("--configure-tracing", action="store_true")
    args = parser.parse_args(argv)
    if args.configure_tracing:
        from coordbench.instrument import A2AInstrumentor
        from coordbench.telemetry import configure_tracing

        provider = configure_tracing("mock-domain-agent")
        A2AInstrumentor().instrument(tracer_provider=provider)
    serve_announced(lambda url: mock_agent_app(url, MockDomainExecutor(args.behaviour)))
    sys.exit(0)


if __name__ == "__main__":
    main()
