"""Declaring the traceability and timestamp extensions on a card."""

from __future__ import annotations

from a2a.types import AgentCapabilities, AgentCard, AgentExtension
from google.protobuf.json_format import MessageToDict

from coordbench import semconv
from coordbench.instrument import trace_extensions, with_trace_extensions


def test_declares_both_extensions_without_changing_the_input() -> None:
    card = AgentCard(name="A", capabilities=AgentCapabilities(streaming=True))
    traced = with_trace_extensions(card)
    assert list(card.capabilities.extensions) == []
    uris = [e.uri for e in traced.capabilities.extensions]
    assert uris == [semconv.TRACEABILITY_EXTENSION_URI, semconv.TIMESTAMP_EXTENSION_URI]
    traceability = MessageToDict(traced.capabilities.extensions[0])
    assert traceability["params"] == {"supported_call_types": ["AGENT", "TOOL", "HOST"]}
    assert not any(e.required for e in traced.capabilities.extensions)


def test_does_not_duplicate_either_timestamp_spelling() -> None:
    card = AgentCard(name="A")
    card.capabilities.extensions.append(AgentExtension(uri=semconv.TIMESTAMP_EXTENSION_URI_SPEC))
    uris = [e.uri for e in with_trace_extensions(with_trace_extensions(card)).capabilities.extensions]
    assert uris == [semconv.TIMESTAMP_EXTENSION_URI_SPEC, semconv.TRACEABILITY_EXTENSION_URI]
    assert len(trace_extensions()) == 2
