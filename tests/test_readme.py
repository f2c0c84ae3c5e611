"""The README's instrumentation example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from coordbench.spans import SpanKind
from support.otlp_sink import OtlpSink

README = Path(__file__).parent.parent / "README.md"

SCENARIO = """
import asyncio
from opentelemetry import trace
from agents.relay import AgentClient, RelayExecutor
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.testing import LoopbackServer

def app(url):
    return create_a2a_app(build_agent_card("readme", url, description="d"), RelayExecutor("readme"))

with LoopbackServer(app) as url:
    async def main():
        client = AgentClient(url, streaming=True)
        print(await client.ask("hi"))
        await client.close()
    asyncio.run(main())
trace.get_tracer_provider().shutdown()
"""


def readme_example() -> str:
    match = re.search(r"<!-- example:instrument -->\s*```python\n(.*?)```", README.read_text(), re.S)
    assert match is not None, "README lost its instrumentation example"
    return match.group(1)


@pytest.mark.slow
def test_readme_example_exports_a2a_spans(otlp_sink: OtlpSink, subprocess_env: dict[str, str]) -> None:
    example = readme_example()
    assert len([line for line in example.splitlines() if line.strip()]) <= 5
    env = {**subprocess_env, "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_sink.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}
    result = subprocess.run(
        [sys.executable, "-c", example + SCENARIO], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "TASK_STATE_COMPLETED" in result.stdout
    spans = otlp_sink.wait_for(lambda s: len(s) >= 3)
    kinds = {(s.name, s.kind) for s in spans}
    assert ("invoke_agent readme", SpanKind.CLIENT) in kinds
    assert ("invoke_agent readme", SpanKind.SERVER) in kinds
    assert {s.service_name for s in spans} == {"my-agent"}


EXTENDING = Path(__file__).parent.parent / "docs" / "extending.md"


async def test_extending_guide_evaluator_runs_as_written() -> None:
    """The evaluator example of docs/extending.md, on a trace whose numbers are worked out by hand."""
    from coordbench.evals import EvalContext, EvalPipeline, EvalScenario
    from evals.traces import team_trace

    match = re.search(r"<!-- example:evaluator -->\s*```python\n(.*?)```", EXTENDING.read_text(), re.S)
    assert match is not None, "docs/extending.md lost its evaluator example"
    namespace: dict[str, object] = {}
    exec(compile(match.group(1), str(EXTENDING), "exec"), namespace)  # noqa: S102 - our own documentation
    evaluator = namespace["VerbosityEvaluator"]()  # type: ignore[operator]
    ctx = EvalContext.build(team_trace(), scenario=EvalScenario(id="s"), hosts=["H"], participants=["A", "B", "C"])
    evaluation = await EvalPipeline(evaluators=[evaluator]).run(ctx)
    assert evaluation.failures == []
    # B: "Find launch venues" (18) -> "B found three options" (21); C: "Draft the announcement" (22) -> 22
    assert evaluation.results.extra["verbosity"] == {"worst_agent": "B", "ratio": pytest.approx(21 / 18)}
