"""Agent process for the across-processes overhead benchmark.

``python -m benchmarks.overhead_agent PORT MODE`` serves the benchmark's task-mode agent on
127.0.0.1:PORT until killed. MODE is the agent side of a benchmark mode:

- ``defaults``: not instrumented, a2a-sdk as installed;
- ``quiet``: not instrumented, ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false`` (a2a-sdk's own
  telemetry decorators silenced, still in place);
- ``stripped``: not instrumented, those decorators taken out as ``A2AInstrumentor`` does;
- ``traced``: ``A2AInstrumentor`` on, SERVER spans through a BatchSpanProcessor (counted, discarded);
- ``unsampled``: ``A2AInstrumentor`` on with an ALWAYS_OFF sampler.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and sys.argv[2:3] == ["quiet"]:  # read when a2a-sdk is first imported
    os.environ["OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"] = "false"

import uvicorn  # after the variable above
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from benchmarks.instrumentation_overhead import CountingExporter, Worker
from coordbench.a2a import build_agent_card, create_a2a_app
from coordbench.instrument import A2AInstrumentor, suppress_sdk_spans

AGENT_MODES = ("defaults", "quiet", "stripped", "traced", "unsampled")


def main(port: int, mode: str) -> None:
    """Serve the agent in ``mode`` on ``port``."""
    if mode == "stripped":
        suppress_sdk_spans()
    elif mode == "traced":
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(CountingExporter(), max_queue_size=100_000))
        A2AInstrumentor().instrument(tracer_provider=provider)
    elif mode == "unsampled":
        A2AInstrumentor().instrument(tracer_provider=TracerProvider(sampler=ALWAYS_OFF))
    elif mode not in ("defaults", "quiet"):
        raise SystemExit(f"unknown mode {mode!r}; use one of {', '.join(AGENT_MODES)}")
    url = f"http://127.0.0.1:{port}/"
    app = create_a2a_app(build_agent_card("bench", url, description="bench"), Worker())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
