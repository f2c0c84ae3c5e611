"""Where stored traces come from: files (:mod:`~coordbench.traces.file`), receivers and ClickHouse.

:mod:`~coordbench.traces.source` finds a trace on whichever receiver behind a load balancer holds it,
or in a ClickHouse store.
"""

from coordbench.traces.file import TraceFileError, by_trace, load_spans, load_traces, spans_in
from coordbench.traces.source import TraceSource, response_detail

__all__ = ["TraceFileError", "TraceSource", "by_trace", "load_spans", "load_traces", "response_detail", "spans_in"]
