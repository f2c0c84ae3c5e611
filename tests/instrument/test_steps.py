"""tool_step / llm_step / host_step: one-line TOOL and HOST spans."""

from __future__ import annotations

import asyncio

import pytest

from coordbench import semconv
from coordbench.instrument import host_step, llm_step, tool_step
from coordbench.spans import SpanKind, StatusCode
from coordbench.steps import CallType, ToolInvocation, step_from_span
from coordbench.testing import RecordingSpanExporter

pytestmark = pytest.mark.usefixtures("a2a_instrumented")


async def test_decorators_and_context_managers_nest(span_exporter: RecordingSpanExporter) -> None:
    @tool_step("add", parameters={"unit": "m"})
    def add(a: int, b: int) -> int:
        return a + b

    @tool_step("fetch")
    async def fetch() -> str:
        await asyncio.sleep(0)
        return "page"

    async with host_step("scenario-1"):
        assert add(2, 3) == 5
        assert await fetch() == "page"
        with llm_step("small-model") as step:
            step.set_usage(input_tokens=7, output_tokens=11, cost=0.5)

    tree = span_exporter.tree()
    assert [(d, s.name, s.kind) for d, s in tree.walk()] == [
        (0, "invoke_workflow scenario-1", SpanKind.INTERNAL),
        (1, "execute_tool add", SpanKind.INTERNAL),
        (1, "execute_tool fetch", SpanKind.INTERNAL),
        (1, "chat small-model", SpanKind.CLIENT),
    ]
    host = tree.one(name="invoke_workflow scenario-1")
    assert host.attributes[semconv.A2A_CALL_TYPE] == "HOST"
    assert host.attributes[semconv.GEN_AI_WORKFLOW_NAME] == "scenario-1"
    add_step = step_from_span(tree.one(name="execute_tool add"))
    assert add_step.call_type is CallType.TOOL
    assert add_step.step_action == ToolInvocation("add", {"unit": "m"})
    llm = step_from_span(tree.one(name="chat small-model"))
    assert (llm.call_type, llm.total_tokens, llm.cost) == (CallType.TOOL, 18, 0.5)
    assert llm.additional_attributes[semconv.GEN_AI_REQUEST_MODEL] == "small-model"


async def test_errors_are_recorded_and_propagate_unchanged(span_exporter: RecordingSpanExporter) -> None:
    error = KeyError("missing")
    with pytest.raises(KeyError) as caught, tool_step("lookup"):
        raise error
    assert caught.value is error
    (span,) = span_exporter.spans()
    assert span.status_code is StatusCode.ERROR
    assert span.attributes[semconv.ERROR_TYPE] == "KeyError"


async def test_one_step_object_shared_by_concurrent_tasks(span_exporter: RecordingSpanExporter) -> None:
    shared = tool_step("shared")

    async def work(name: str) -> None:
        async with host_step(name), shared:
            await asyncio.sleep(0.01)

    await asyncio.gather(work("one"), work("two"))
    tree = span_exporter.tree()
    for name in ("one", "two"):
        host = tree.one(name=f"invoke_workflow {name}")
        assert [c.name for c in tree.children(host)] == ["execute_tool shared"]


async def test_host_step_can_start_a_new_trace(span_exporter: RecordingSpanExporter) -> None:
    """An assessment started while serving a request gets its own trace (linked, not parented)."""
    async with host_step("request"), host_step("assessment", new_trace=True), host_step("scenario"):
        pass
    spans = {s.name: s for s in span_exporter.spans()}
    outer, root, child = (
        spans["invoke_workflow request"],
        spans["invoke_workflow assessment"],
        spans["invoke_workflow scenario"],
    )
    assert root.parent_span_id is None
    assert root.trace_id != outer.trace_id
    assert (child.trace_id, child.parent_span_id) == (root.trace_id, root.span_id)
