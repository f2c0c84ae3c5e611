"""The pytest plugin as an agent author uses it: fixtures from the entry point, a tree to assert on."""

from __future__ import annotations

import pytest

AUTHOR_TEST = """
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor
from a2a.types import Role, SendMessageRequest

from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.instrument import tool_step
from coordbench.testing import LoopbackServer


class Greeter(AgentExecutor):
    async def execute(self, context, event_queue):
        with tool_step("format"):
            text = f"hello {context.get_user_input()}"
        await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))

    async def cancel(self, context, event_queue):
        pass


async def test_my_agent(a2a_instrumented):
    app = lambda url: create_a2a_app(build_agent_card("greeter", url, description="greets"), Greeter())
    with LoopbackServer(app) as url:
        client = await create_client(url, client_config=ClientConfig(streaming=False))
        request = SendMessageRequest(message=new_text_message("ada", role=Role.ROLE_USER))
        replies = [event async for event in client.send_message(request)]
        await client.close()
    assert replies[0].message.parts[0].text == "hello ada"
    spans = await a2a_instrumented.wait_for_async(lambda s: any(x.kind.name == "SERVER" for x in s))
    tree = a2a_instrumented.tree()
    assert tree.call_chains() == [("pytest", "greeter")]
    server = tree.one(name="invoke_agent greeter", kind=2)
    assert [c.name for c in tree.children(server)] == ["execute_tool format"]


def test_fixtures_are_fresh_per_test(span_exporter, tracer_provider):
    assert span_exporter.spans() == []
    tracer_provider.get_tracer("t").start_span("one").end()
    assert [s.name for s in span_exporter.spans()] == ["one"]
"""


@pytest.mark.slow
def test_plugin_serves_agent_authors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_author=AUTHOR_TEST)
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
