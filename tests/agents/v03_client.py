"""An a2a-sdk **0.3** client (run it with a 0.3.26 interpreter), as AgentBeats uses it.

``v03_client.py URL streaming|send TRACEPARENT`` sends one message carrying ``TRACEPARENT``
in its metadata, asks for the traceability extension, and prints JSON: the final task
state, the reply text and how many events arrived.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart

TRACEABILITY = "https://github.com/a2aproject/a2a-samples/extensions/traceability/v1"


async def main(url: str, mode: str, traceparent: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(streaming=mode == "streaming", httpx_client=http)
        client = await ClientFactory.connect(url, client_config=config, extensions=[TRACEABILITY])
        message = Message(
            role=Role.user,
            parts=[Part(root=TextPart(text="hello from 0.3"))],
            message_id=str(uuid.uuid4()),
            metadata={"traceparent": traceparent},
        )
        out = {"events": 0, "state": None, "text": "", "kind": None}
        async for event in client.send_message(message):
            out["events"] += 1
            if isinstance(event, Message):
                out["kind"] = "message"
                out["text"] = "".join(p.root.text for p in event.parts if isinstance(p.root, TextPart))
            else:
                task, _update = event
                out["kind"] = "task"
                out["state"] = task.status.state.value
                out["text"] = "".join(
                    p.root.text for a in task.artifacts or [] for p in a.parts if isinstance(p.root, TextPart)
                )
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
