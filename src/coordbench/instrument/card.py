"""Declaring the traceability and timestamp extensions on an ``AgentCard``."""

from __future__ import annotations

from a2a.types import AgentCard, AgentExtension
from google.protobuf.struct_pb2 import Struct

from coordbench import semconv

__all__ = ["trace_extensions", "with_trace_extensions"]


def trace_extensions() -> list[AgentExtension]:
    """The two extensions a traced agent declares: traceability (call types AGENT, TOOL, HOST) and timestamps.

    Both are optional (``required=False``): callers that do not ask for them are served as usual.
    """
    params = Struct()
    params.update({"supported_call_types": ["AGENT", "TOOL", "HOST"]})
    return [
        AgentExtension(
            uri=semconv.TRACEABILITY_EXTENSION_URI,
            description="Reports the steps (agent, tool and host calls) taken to answer a request.",
            required=False,
            params=params,
        ),
        AgentExtension(
            uri=semconv.TIMESTAMP_EXTENSION_URI,
            description="Stamps messages and artifacts with their creation time (RFC 3339).",
            required=False,
        ),
    ]


def with_trace_extensions(card: AgentCard) -> AgentCard:
    """A copy of ``card`` that declares the traceability and timestamp extensions.

    Extensions the card already declares (either timestamp URI spelling counts) are not added twice.

    Args:
        card: The agent's card.

    Returns:
        The new card; ``card`` itself is not changed.
    """
    out = AgentCard()
    out.CopyFrom(card)
    declared = {ext.uri for ext in out.capabilities.extensions}
    for ext in trace_extensions():
        if ext.uri in declared or (
            ext.uri in semconv.TIMESTAMP_EXTENSION_URIS and declared & semconv.TIMESTAMP_EXTENSION_URIS
        ):
            continue
        out.capabilities.extensions.append(ext)
    return out
