"""The a2a-sdk internals the instrumentation reads: all present in the a2a-sdk installed, and when one
goes (a newer a2a-sdk), the agent still works and only what that internal gave is lost, said once.
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from agents.relay import AgentClient
from conftest import StartAgent
from coordbench import semconv
from coordbench.instrument import A2AInstrumentor, _sdk
from coordbench.testing import RecordingSpanExporter, SpanData

ROOT = Path(__file__).resolve().parents[2]


def test_every_internal_is_present_in_the_installed_a2a_sdk() -> None:
    assert _sdk.missing() == []
    assert {i.key for i in _sdk.INTERNALS} == {
        "task_executor", "legacy_run", "handler_card", "legacy_handler_card", "client_card", "client_transport",
        "client_config",
    }  # fmt: skip


def test_an_internal_that_is_gone_is_found_missing() -> None:
    gone = _sdk.Internal("x", "a2a.client.base_client", "BaseClient", "_no_such_attribute", False, "nothing")
    renamed = _sdk.Internal("y", "a2a.client.no_such_module", "BaseClient", "_card", False, "nothing")
    method = _sdk.Internal("z", "a2a.server.request_handlers.default_request_handler", "LegacyRequestHandler",
                           "_no_such_method", True, "nothing")  # fmt: skip
    assert not gone.present() and not renamed.present() and not method.present()


def test_the_declared_range_is_the_one_the_instrumentor_states() -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (a2a,) = [d for d in dependencies if d.startswith("a2a-sdk")]
    assert a2a == "a2a-sdk[http-server]>=1.3,<2"
    assert A2AInstrumentor().instrumentation_dependencies() == ("a2a-sdk >= 1.3, < 2",)


async def _ask_b(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> list[SpanData]:
    """Instrument, ask agent B once (it must answer), uninstrument; the spans, once B's SERVER span is in."""
    url = start_agent("B")
    A2AInstrumentor().instrument(tracer_provider=tracer_provider)
    try:
        client = AgentClient(url, streaming=True)
        assert await client.ask("hello") == ("TASK_STATE_COMPLETED", "B(hello)")
        await client.close()
        return span_exporter.wait_for(lambda s: any(x.kind.name == "SERVER" for x in s))
    finally:
        A2AInstrumentor().uninstrument()


async def test_without_its_internals_the_agent_still_answers_with_fewer_attributes(
    start_agent: StartAgent,
    tracer_provider: TracerProvider,
    span_exporter: RecordingSpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As under an a2a-sdk whose private names changed: every internal reported gone."""
    for internal in _sdk.INTERNALS:
        monkeypatch.setitem(_sdk._present, internal.key, False)  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_sdk, "_reported", False)
    with caplog.at_level(logging.WARNING, logger="coordbench.instrument._sdk"):
        spans = await _ask_b(start_agent, tracer_provider, span_exporter)
    said = caplog.text
    assert "ActiveTask._agent_executor" in said and "SERVER spans end when the request handler returns" in said
    assert "BaseClient._card" in said and said.count("a2a-sdk no longer has") == len(_sdk.INTERNALS)
    server = next(s for s in spans if s.kind.name == "SERVER")
    assert server.attributes[semconv.GEN_AI_AGENT_NAME] == "unknown-agent"  # the card was not readable
    client_span = next(s for s in spans if s.kind.name == "CLIENT")
    assert server.parent_span_id == client_span.span_id  # the trace still holds together


async def test_with_its_internals_the_spans_name_the_agent(
    start_agent: StartAgent, tracer_provider: TracerProvider, span_exporter: RecordingSpanExporter
) -> None:
    spans = await _ask_b(start_agent, tracer_provider, span_exporter)
    server = next(s for s in spans if s.kind.name == "SERVER")
    assert server.attributes[semconv.GEN_AI_AGENT_NAME] == "B"
