"""An a2a-sdk **0.3** client sending an assessment request, as the AgentBeats client does.

``v03_assess.py GREEN_URL REQUEST_JSON`` streams the request as one text message, prints
one JSON line per event (status updates) and, last, ``{"final": state, "data": [...], "text": ...}``
built like the AgentBeats client builds results (DataParts only).
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TextPart


async def main(url: str, request: str) -> None:
    async with httpx.AsyncClient(timeout=300) as http:
        client = await ClientFactory.connect(url, client_config=ClientConfig(streaming=True, httpx_client=http))
        message = Message(role=Role.user, parts=[Part(root=TextPart(text=request))], message_id=str(uuid.uuid4()))
        final = {"final": None, "data": [], "text": ""}
        async for event in client.send_message(message):
            if isinstance(event, Message):
                print(
                    json.dumps({"message": "".join(p.root.text for p in event.parts if isinstance(p.root, TextPart))})
                )
                continue
            task, _update = event
            status_text = ""
            if task.status.message is not None:
                status_text = "".join(p.root.text for p in task.status.message.parts if isinstance(p.root, TextPart))
            print(json.dumps({"state": task.status.state.value, "status": status_text}), flush=True)
            final["final"] = task.status.state.value
            if task.status.state.value == "completed":
                final["data"] = [
                    p.root.data for a in task.artifacts or [] for p in a.parts if isinstance(p.root, DataPart)
                ]
                final["text"] = "".join(
                    p.root.text for a in task.artifacts or [] for p in a.parts if isinstance(p.root, TextPart)
                )
            elif task.status.state.value == "rejected":
                final["text"] = status_text
        print(json.dumps(final), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
