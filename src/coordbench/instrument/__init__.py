"""Drop-in OpenTelemetry instrumentation for A2A agents (a2a-sdk 1.3 and later 1.x).

::

    from coordbench.instrument import A2AInstrumentor
    A2AInstrumentor().instrument()          # or: opentelemetry-instrument python agent.py

Every A2A call becomes a CLIENT span in the caller and a SERVER span in the callee, linked
across processes by W3C trace context; :func:`tool_step`, :func:`llm_step` and
:func:`host_step` mark an agent's own work; :func:`with_trace_extensions` declares the
traceability and timestamp extensions on an agent card. :func:`suppress_sdk_spans` silences
a2a-sdk's own telemetry decorators (the instrumentor does so while it is on; also useful on its
own, for an agent traced some other way), :func:`restore_sdk_spans` puts them back.
:data:`FINAL_STATES` and :func:`ends_stream` say when a task's stream is over (the instrumentation
ends a call's span there; :class:`coordbench.a2a.Messenger` stops reading there).

The few a2a-sdk internals the instrumentation needs are read in one module, checked when it is
turned on: a newer a2a-sdk without one loses only what it gave (a warning says which), never the agent.
"""

from coordbench.instrument._instrumentor import A2AInstrumentor
from coordbench.instrument._payload import FINAL_STATES, ends_stream
from coordbench.instrument._sdk_spans import restore_sdk_spans, suppress_sdk_spans
from coordbench.instrument._server import TracedExecutor
from coordbench.instrument.card import trace_extensions, with_trace_extensions
from coordbench.instrument.steps import StepHandle, StepSpan, host_step, llm_step, tool_step

__all__ = [
    "FINAL_STATES",
    "A2AInstrumentor",
    "StepHandle",
    "StepSpan",
    "TracedExecutor",
    "ends_stream",
    "host_step",
    "llm_step",
    "restore_sdk_spans",
    "suppress_sdk_spans",
    "tool_step",
    "trace_extensions",
    "with_trace_extensions",
]
