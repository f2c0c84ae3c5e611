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


@pytest.mark.parametrize("capture", [True, False])
def test_a_step_records_what_it_read_and_said_as_messages_are_recorded(
    tracer_provider: object, span_exporter: RecordingSpanExporter, capture: bool
) -> None:
    """Text (cut at 4 KiB, URLs redacted) with capture on; fingerprints (no words) by default; nothing when off."""
    import json

    from coordbench.instrument import A2AInstrumentor
    from coordbench.instrument.steps import StepHandle
    from coordbench.sketch import fingerprint

    A2AInstrumentor().uninstrument()  # the module's fixture instrumented with the defaults
    A2AInstrumentor().instrument(tracer_provider=tracer_provider, capture_content=capture)
    try:
        with llm_step("small-model") as step:
            step.record_messages(["the analyst said the budget is 40,000", "y" * 5000], "next: the writer")
    finally:
        A2AInstrumentor().uninstrument()
    quiet = tracer_provider.get_tracer("test").start_span("chat quiet")  # pyright: ignore[reportAttributeAccessIssue]
    StepHandle(quiet).record_messages("secret prompt", "secret answer")  # not instrumented: nothing recorded
    quiet.end()
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)  # as the fixture left it
    recorded, after = span_exporter.get_finished_spans()[-2:]
    attrs = recorded.attributes
    assert list(attrs[semconv.A2A_STEP_OUTPUT_FINGERPRINT]) == list(fingerprint("next: the writer"))  # pyright: ignore[reportArgumentType]
    assert list(attrs[semconv.A2A_STEP_INPUT_FINGERPRINT]) == list(  # pyright: ignore[reportArgumentType]
        fingerprint("the analyst said the budget is 40,000\n" + "y" * 5000)
    )
    if capture:
        parts = json.loads(str(attrs[semconv.GEN_AI_INPUT_MESSAGES]))[0]["parts"]
        # of a long input the newest part is kept: what the step last read (the older message falls out)
        assert [p["content"] for p in parts] == ["...[truncated]" + "y" * (4096 - 14)]
        assert json.loads(str(attrs[semconv.GEN_AI_OUTPUT_MESSAGES]))[0]["parts"][0]["content"] == "next: the writer"
    else:
        assert semconv.GEN_AI_INPUT_MESSAGES not in attrs and semconv.GEN_AI_OUTPUT_MESSAGES not in attrs
    assert not any(key.startswith(("gen_ai.input", "gen_ai.output", "a2a.step.")) for key in after.attributes)
