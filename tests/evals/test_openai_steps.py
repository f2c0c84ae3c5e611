"""An A2A agent whose model calls are traced by OpenTelemetry's OpenAI instrumentation: its chat spans are its steps.

The orchestrator below asks a model (a local OpenAI-compatible server over real HTTP), then a
worker, then the model, then the next worker: one call at a time, each decided after the model
step that followed the last answer. Its model calls are traced by
``opentelemetry-instrumentation-openai-v2`` (``chat`` CLIENT spans inside the orchestrator's A2A
SERVER span, no content on them by default), its A2A calls by ours. The trace holds together, the
chat spans are read as the orchestrator's model steps, and with no content to read the
dependency is read from timing alone (confidence 0.5): not serialised work. Without the model
steps, the same independent requests back to back are.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import openai
import pytest
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from opentelemetry.sdk.trace import TracerProvider

from coordbench.a2a import Messenger, build_agent_card, create_a2a_app
from coordbench.evals import EvalConfig, EvalContext, EvalScenario, JudgeConfig, TeamOutcome
from coordbench.evals.coordination import assess_coordination
from coordbench.evals.dependency import TIMING_CONFIDENCE, steps_of
from coordbench.evals.evidence import TeamTrace
from coordbench.purple import create_purple_app, team_for_shape
from coordbench.spans import SpanKind
from coordbench.spantree import SpanTree
from coordbench.testing import LoopbackServer, RecordingSpanExporter
from support.fake_llm import FakeLLM
from support.processes import uv_command

pytestmark = pytest.mark.usefixtures("a2a_instrumented")

OPENAI_V2 = "opentelemetry-instrumentation-openai-v2==2.3b0"
"""2.4b0 needs an opentelemetry-util-genai release the registry does not have."""


class Orchestrator(AgentExecutor):
    """Asks each worker in turn an independent question, thinking with a model before each."""

    def __init__(self, workers: list[str], llm: str | None) -> None:
        self.workers = workers
        self.llm = llm

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        answers: list[str] = []
        model = openai.AsyncOpenAI(api_key="k", base_url=self.llm, max_retries=0) if self.llm else None
        async with Messenger(timeout=30) as messenger:
            for k, url in enumerate(self.workers):
                if model is not None:
                    await model.chat.completions.create(
                        model="small-model", messages=[{"role": "user", "content": "\n".join(answers) or "plan"}]
                    )
                reply = await messenger.send(
                    url,
                    f"Work on part {k} of the launch plan. The budget is {40 + k},000 and the deadline is "
                    f"2026-12-0{k + 1}. Marketing depends on design, and design on the survey of part {k}.",
                )
                answers.append(reply.text)
        if model is not None:
            await model.close()
        await updater.add_artifact([Part(text="\n".join(answers))], name="answer")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@pytest.fixture(scope="module")
def openai_instrumentation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OpenTelemetry's OpenAI instrumentation from PyPI, in a folder of its own.

    Not in the project's environment: ``opentelemetry-instrument`` loads every instrumentation
    installed, and this one fails to instrument under wrapt 2 (below), which would break the
    zero-code path for every other test.
    """
    target = tmp_path_factory.mktemp("openai-v2")
    subprocess.run(
        [*uv_command(), "pip", "install", "--quiet", "--no-deps", "--target", str(target), OPENAI_V2],
        check=True,
        timeout=300,
    )
    return target


@pytest.fixture
def openai_traced(
    tracer_provider: TracerProvider, monkeypatch: pytest.MonkeyPatch, openai_instrumentation: Path
) -> Iterator[None]:
    import importlib

    import wrapt

    cast("Any", monkeypatch).syspath_prepend(str(openai_instrumentation))
    openai_v2: Any = importlib.import_module("opentelemetry.instrumentation.openai_v2")

    def wrap(module: str, name: str, wrapper: Any) -> Any:
        # openai-v2 2.3b0 names wrapt 1's keyword (module=); wrapt 2, which the rest of the stack needs, renamed it
        return wrapt.wrap_function_wrapper(module, name, wrapper)

    monkeypatch.setattr(openai_v2, "wrap_function_wrapper", wrap)
    instrumentor: Any = openai_v2.OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


async def _run(span_exporter: RecordingSpanExporter, llm: str | None) -> list[Any]:
    servers = [
        LoopbackServer(lambda url, role=role: create_purple_app(team_for_shape("star"), role, url, pace=0))
        for role in ("analyst", "researcher")
    ]
    workers = [s.start() for s in servers]
    orchestrator = LoopbackServer(
        lambda url: create_a2a_app(
            build_agent_card("orchestrator", url, description="an orchestrator that thinks with a model"),
            Orchestrator(workers, llm),
        )
    )
    try:
        async with Messenger(timeout=60) as messenger:
            reply = await messenger.send(orchestrator.start(), "Plan the launch of the mobile app.")
        assert reply.state == "completed", reply.text
        return await span_exporter.wait_for_async(lambda s: sum(x.kind is SpanKind.SERVER for x in s) >= 3)
    finally:
        orchestrator.stop()
        for server in servers:
            server.stop()


def _parallelism(spans: list[Any]) -> Any:
    config = EvalConfig(judge=JudgeConfig())
    ctx = EvalContext.build(spans, scenario=EvalScenario(id="s1", task="Plan the launch of the mobile app."),
                            config=config, outcome=TeamOutcome(state="completed", output="a plan"))  # fmt: skip
    return assess_coordination(ctx).parts["parallelism"]


@pytest.mark.usefixtures("openai_traced")
async def test_chat_spans_of_the_openai_instrumentation_are_the_agents_model_steps(
    span_exporter: RecordingSpanExporter,
) -> None:
    with FakeLLM("ok") as llm:
        spans = await _run(span_exporter, llm)
    tree = SpanTree(spans)
    trace = TeamTrace.build(tree, [])
    [calls] = [c for c in trace.by_request.values() if c[0].call.caller == "orchestrator"]
    assert len(calls) == 2 and all(c.server is not None for c in calls)  # one tree, every call matched
    request = calls[0].request
    assert request is not None
    steps = steps_of(tree, request)
    assert [(s.span.name, s.model, s.silent) for s in steps] == [("chat small-model", True, True)] * 2
    part = _parallelism(spans)
    assert part.value == 1.0 and part.fired == [] and part.confidence == TIMING_CONFIDENCE, part


async def test_without_its_model_steps_the_same_calls_back_to_back_are_serialised(
    span_exporter: RecordingSpanExporter,
) -> None:
    spans = await _run(span_exporter, None)
    part = _parallelism(spans)
    assert part.fired == ["serialised_work"] and part.agents == ["orchestrator"], part
