"""The A2A gRPC binding: an agent behind a2a-sdk's GrpcHandler, called by an instrumented gRPC client.

Over gRPC the trace context travels as call metadata, not HTTP headers; the server span must
take its parent from there, so calls that carry no message (GetTask) join the caller's trace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentInterface, GetTaskRequest, Role, SendMessageConfiguration, SendMessageRequest
from a2a.types import a2a_pb2_grpc as a2a_grpc
from opentelemetry.sdk.trace import TracerProvider

from agents.relay import RelayExecutor
from coordbench import semconv
from coordbench.a2a import build_agent_card
from coordbench.spans import SpanKind
from coordbench.testing import RecordingSpanExporter, SpanTree

pytestmark = pytest.mark.usefixtures("a2a_instrumented")


@pytest.fixture
async def grpc_agent() -> AsyncIterator[object]:
    """Agent ``G`` served over the A2A gRPC binding on a free loopback port; yields its card."""
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    card = build_agent_card("G", f"http://127.0.0.1:{port}/", description="gRPC relay")
    del card.supported_interfaces[:]
    card.supported_interfaces.append(
        AgentInterface(protocol_binding="GRPC", protocol_version="1.0", url=f"127.0.0.1:{port}")
    )
    handler = DefaultRequestHandler(agent_executor=RelayExecutor("G"), task_store=InMemoryTaskStore(), agent_card=card)
    a2a_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]
    await server.start()
    yield card
    await server.stop(None)
    await handler.aclose()


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
async def test_grpc_binding_spans_join_the_callers_trace(
    grpc_agent: object, span_exporter: RecordingSpanExporter, tracer_provider: TracerProvider, streaming: bool
) -> None:
    config = ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=["GRPC"],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )
    client = ClientFactory(config).create(grpc_agent)  # type: ignore[arg-type]
    tracer = tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("host"):
        request = SendMessageRequest(
            message=new_text_message("hi", role=Role.ROLE_USER),
            configuration=SendMessageConfiguration(return_immediately=False),
        )
        task_id = ""
        async for event in client.send_message(request):
            if event.WhichOneof("payload") == "task":
                task_id = event.task.id
            elif event.WhichOneof("payload") == "status_update":
                task_id = event.status_update.task_id
        assert task_id
        task = await client.get_task(GetTaskRequest(id=task_id))
    await client.close()
    assert task.status.state == 3  # TASK_STATE_COMPLETED

    spans = await span_exporter.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 2)
    tree = SpanTree(spans)
    assert len(tree.trace_ids) == 1, tree.render()
    assert not tree.orphans
    host = tree.one(name="host")
    method = "SendStreamingMessage" if streaming else "SendMessage"
    for wire in (method, "GetTask"):
        client_span = tree.one(kind=SpanKind.CLIENT, a2a__method__name=wire)
        server_span = tree.one(kind=SpanKind.SERVER, a2a__method__name=wire)
        assert tree.parent(client_span) == host
        assert tree.parent(server_span) == client_span, tree.render()
        assert server_span.attributes[semconv.A2A_PROTOCOL_BINDING] == "GRPC"
        assert server_span.attributes[semconv.A2A_PROTOCOL_VERSION] == "1.0"
        assert server_span.attributes[semconv.GEN_AI_AGENT_NAME] == "G"
        assert client_span.attributes[semconv.A2A_PROTOCOL_BINDING] == "GRPC"
        assert (
            client_span.attributes[semconv.RPC_SYSTEM_NAME] == server_span.attributes[semconv.RPC_SYSTEM_NAME] == "grpc"
        )
        assert client_span.attributes[semconv.SERVER_ADDRESS] == "127.0.0.1"
        assert (
            f"127.0.0.1:{client_span.attributes[semconv.SERVER_PORT]}" == client_span.attributes[semconv.A2A_AGENT_URL]
        )
    send_server = tree.one(kind=SpanKind.SERVER, a2a__method__name=method)
    assert send_server.attributes[semconv.A2A_TASK_STATE] == "completed"
    assert send_server.attributes[semconv.A2A_REQUESTED_EXTENSIONS] == tuple(
        sorted([semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI])
    )
