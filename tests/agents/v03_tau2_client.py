"""An a2a-sdk **0.3** client asking the tau2 evaluation service for something (run it with a 0.3.26 interpreter).

``v03_tau2_client.py URL JSON`` sends one message whose data part is ``JSON``, streams the
answer, and prints JSON: the final state, the status texts seen on the way, the artifacts'
data parts and the context id.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TaskStatusUpdateEvent, TextPart


async def main(url: str, request: str) -> None:
    async with httpx.AsyncClient(timeout=300) as http:
        client = await ClientFactory.connect(url, client_config=ClientConfig(streaming=True, httpx_client=http))
        message = Message(
            role=Role.user, parts=[Part(root=DataPart(data=json.loads(request)))], message_id=str(uuid.uuid4())
        )
        out = {"state": None, "statuses": [], "data": [], "context_id": None}
        async for event in client.send_message(message):
            task, update = event
            out["state"] = task.status.state.value
            out["context_id"] = task.context_id
            if isinstance(update, TaskStatusUpdateEvent) and update.status.message is not None:
                out["statuses"].append(
                    " ".join(p.root.text for p in update.status.message.parts if isinstance(p.root, TextPart))
                )
        out["data"] = [p.root.data for a in task.artifacts or [] for p in a.parts if isinstance(p.root, DataPart)]
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
