"""The A2A traceability ``Step``: its model, its JSON shapes and its conversions to and from spans.

A Step is one unit of work in a multi-agent trace, as defined by the A2A traceability
extension (``https://github.com/a2aproject/a2a-samples/extensions/traceability/v1``):

- :mod:`coordbench.steps.model`: the Step, its actions and the ResponseTrace, as coordbench holds them;
- :mod:`coordbench.steps.document`: the extension's JSON shapes (pydantic models), read and written;
- :mod:`coordbench.steps.spans`: Step ⇄ span, so agents that report Steps feed the span pipeline;
- :mod:`coordbench.steps.timestamps`: RFC 3339 at nanosecond precision.
"""

from coordbench.steps.document import (
    MAX_TRACE_NESTING,
    response_trace_from_dict,
    response_trace_from_metadata,
    response_trace_to_dict,
    step_from_dict,
    step_to_dict,
)
from coordbench.steps.model import AgentInvocation, CallType, ResponseTrace, Step, StepAction, ToolInvocation
from coordbench.steps.spans import call_type_of, span_from_step, step_from_span
from coordbench.steps.timestamps import format_timestamp, parse_timestamp

__all__ = [
    "MAX_TRACE_NESTING",
    "AgentInvocation",
    "CallType",
    "ResponseTrace",
    "Step",
    "StepAction",
    "ToolInvocation",
    "call_type_of",
    "format_timestamp",
    "parse_timestamp",
    "response_trace_from_dict",
    "response_trace_from_metadata",
    "response_trace_to_dict",
    "span_from_step",
    "step_from_dict",
    "step_from_span",
    "step_to_dict",
]
