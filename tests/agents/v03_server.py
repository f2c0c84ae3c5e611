"""An a2a-sdk **0.3** agent (run it with a 0.3.26 interpreter): replies with what it received.

Prints ``READY <url>`` once it serves. The reply (an artifact, task completed) is JSON with
the ``traceparent`` header, the message-metadata ``traceparent`` and the requested extensions.
When the traceability extension is requested, the completing status update carries a
ResponseTrace in the shape of the extension's Python sample (it reports Steps, not spans).
"""

import asyncio
import json
import socket

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TaskState, TextPart
from a2a.utils import new_task

TRACEABILITY = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1"
SAMPLE_TRACE = {
    "trace_id": "trace-2f1c",
    "steps": [
        {
            "step_id": "step-9a0b",
            "trace_id": "trace-2f1c",
            "parent_step_id": None,
            "call_type": "TOOL",
            "name": "get_exchange_rate",
            "parameters": {"currency_from": "USD", "currency_to": "EUR"},
            "step_type": "tool_call",
            "cost": 0.25,
            "total_tokens": 12,
            "additional_attributes": {},
            "latency": 7,
            "start_time": "2026-11-22T10:00:00.000000+00:00",
            "end_time": "2026-11-22T10:00:00.007000+00:00",
            "error": None,
        }
    ],
}


class Probe(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        headers = context.call_context.state.get("headers", {}) if context.call_context else {}
        probe = {
            "header_traceparent": headers.get("traceparent"),
            "metadata_traceparent": (context.message.metadata or {}).get("traceparent"),
            "extensions": sorted(context.requested_extensions),
        }
        task = context.current_task or new_task(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact([Part(root=TextPart(text=json.dumps(probe)))], name="probe")
        metadata = None
        if TRACEABILITY in context.requested_extensions:
            metadata = {f"{TRACEABILITY.removeprefix('https://')}/traceability": SAMPLE_TRACE}
        await updater.update_status(TaskState.completed, final=True, metadata=metadata)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY: see bind_loopback
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name="Legacy",
        description="an a2a-sdk 0.3 agent",
        url=url,
        version="1.0.0",
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="probe", name="probe", description="echoes trace context", tags=["probe"])],
    )
    handler = DefaultRequestHandler(agent_executor=Probe(), task_store=InMemoryTaskStore())
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:  # noqa: ASYNC110 - uvicorn exposes only a flag
            await asyncio.sleep(0.01)
        print(f"READY {url}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
