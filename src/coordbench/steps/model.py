"""The traceability ``Step``: one unit of work in a multi-agent trace, as coordbench holds it.

The A2A traceability extension
(``https://github.com/a2aproject/a2a-samples/extensions/traceability/v1``) names three kinds
of step: an agent invocation (AGENT), a tool or model call inside an agent (TOOL), and the
host's own orchestration (HOST). Its JSON shapes live in :mod:`coordbench.steps.document`,
its conversions to and from spans in :mod:`coordbench.steps.spans`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeAlias

from coordbench.spans import AttributeValue

__all__ = ["AgentInvocation", "CallType", "ResponseTrace", "Step", "StepAction", "ToolInvocation"]


class CallType(StrEnum):
    """What kind of work a step is (the extension's ``CallTypeEnum``, plus HOST from its sample)."""

    AGENT = "AGENT"
    """An A2A call to another agent."""
    TOOL = "TOOL"
    """A tool, model or other call made inside an agent."""
    HOST = "HOST"
    """Orchestration by the host (for example the assessor driving a scenario)."""


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """The action of a TOOL step: which tool, with which parameters."""

    tool_name: str
    parameters: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class AgentInvocation:
    """The action of an AGENT step: which agent was called, and the callee's own trace if it sent one."""

    agent_url: str | None = None
    agent_name: str | None = None
    requests: Mapping[str, Any] | None = None
    response_trace: ResponseTrace | None = None


StepAction: TypeAlias = ToolInvocation | AgentInvocation


@dataclass(frozen=True, slots=True)
class Step:
    """One traceability step.

    Attributes:
        step_id: Unique id of the step (the span id for steps made from spans).
        trace_id: Id of the trace the step belongs to.
        call_type: AGENT, TOOL or HOST.
        parent_step_id: Id of the parent step; ``None`` for a root step.
        name: Human-readable name (the span name).
        start_time_unix_nano: Start, nanoseconds since the Unix epoch.
        end_time_unix_nano: End, nanoseconds since the Unix epoch.
        latency: Duration in milliseconds; derived from the times when not given.
        error: Error description when the step failed, else ``None``.
        cost: Cost reported for the step, if any.
        total_tokens: Tokens used (input + output), if known.
        step_action: What the step invoked (agent or tool), if known.
        additional_attributes: Everything else the step carries.
    """

    step_id: str
    trace_id: str
    call_type: CallType
    parent_step_id: str | None = None
    name: str = ""
    start_time_unix_nano: int | None = None
    end_time_unix_nano: int | None = None
    latency: float | None = None
    error: str | None = None
    cost: float | None = None
    total_tokens: int | None = None
    step_action: StepAction | None = None
    additional_attributes: Mapping[str, AttributeValue] = field(default_factory=dict[str, AttributeValue])

    def __post_init__(self) -> None:
        """Derive ``latency`` from the times when it was not given."""
        if self.latency is None and self.start_time_unix_nano is not None and self.end_time_unix_nano is not None:
            object.__setattr__(self, "latency", max(0, self.end_time_unix_nano - self.start_time_unix_nano) / 1e6)

    @property
    def start_time(self) -> datetime | None:
        """Start as an aware UTC datetime (microsecond precision)."""
        return _to_datetime(self.start_time_unix_nano)

    @property
    def end_time(self) -> datetime | None:
        """End as an aware UTC datetime (microsecond precision)."""
        return _to_datetime(self.end_time_unix_nano)


@dataclass(frozen=True, slots=True)
class ResponseTrace:
    """The extension's ``ResponseTrace``: the steps an agent took to answer one request."""

    trace_id: str
    steps: tuple[Step, ...] = ()


def _to_datetime(ns: int | None) -> datetime | None:
    return None if ns is None else datetime.fromtimestamp(ns / 1e9, tz=UTC)
