"""An A2A call with the network taken out: an a2a-sdk client whose transport calls a request handler in this process.

``InMemoryTransport`` implements a2a-sdk's public ``ClientTransport`` interface by handing each
request to a ``RequestHandler`` with the ``ServerCallContext`` a2a-sdk's own HTTP routes would
build (the request's headers in ``state["headers"]``, lower-cased as Starlette gives them,
and the extensions the client asked for). Instrumentation therefore sees what it sees on a
real call, at both ends, through public API only: what it adds to a call is measured without
HTTP, JSON-RPC or sockets in the way.
"""

from __future__ import annotations

from typing import Any, NoReturn

from a2a.client import BaseClient, ClientCallContext, ClientConfig
from a2a.client.transports import ClientTransport
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.types import AgentCard, SendMessageRequest, SendMessageResponse, Task

__all__ = ["InMemoryTransport", "in_memory_client"]


class InMemoryTransport(ClientTransport):
    """Sends non-streaming messages to ``handler`` in this process; other methods are not needed here and refuse."""

    def __init__(self, handler: RequestHandler) -> None:
        self.handler = handler

    @staticmethod
    def _server_context(context: ClientCallContext | None) -> ServerCallContext:
        """What a2a-sdk's routes build from an HTTP request carrying the client's service parameters as headers."""
        headers = {key.lower(): value for key, value in ((context and context.service_parameters) or {}).items()}
        extensions = headers.get(HTTP_EXTENSION_HEADER.lower())
        requested = get_requested_extensions([extensions]) if extensions is not None else set[str]()
        return ServerCallContext(state={"headers": headers}, requested_extensions=requested)

    async def send_message(
        self, request: SendMessageRequest, *, context: ClientCallContext | None = None
    ) -> SendMessageResponse:
        result = await self.handler.on_message_send(request, self._server_context(context))
        response = SendMessageResponse()
        if isinstance(result, Task):
            response.task.CopyFrom(result)
        else:
            response.message.CopyFrom(result)
        return response

    def _unsupported(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError("the in-memory transport sends messages only")

    send_message_streaming = get_task = list_tasks = cancel_task = subscribe = get_extended_agent_card = _unsupported  # type: ignore[assignment]
    create_task_push_notification_config = get_task_push_notification_config = _unsupported  # type: ignore[assignment]
    list_task_push_notification_configs = delete_task_push_notification_config = _unsupported  # type: ignore[assignment]

    async def close(self) -> None:
        return None


def in_memory_client(card: AgentCard, handler: RequestHandler) -> BaseClient:
    """A non-streaming a2a-sdk client for ``card`` whose calls ``handler`` answers in this process."""
    return BaseClient(card, ClientConfig(streaming=False), InMemoryTransport(handler), [])
