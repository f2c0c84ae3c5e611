"""Process-wide instrumentation state: the tracer in use and the server call being handled."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from coordbench import semconv
from coordbench.steps import Step

__all__ = ["CURRENT_SERVER_CALL", "STATE", "ServerCall", "current_server_call", "get_tracer"]


@dataclass
class InstrumentationState:
    """What ``A2AInstrumentor.instrument()`` configured; ``tracer is None`` means not instrumented."""

    tracer: Tracer | None = None
    request_extensions: tuple[str, ...] = ()
    """The extension URIs asked of callees in the ``A2A-Extensions`` header (set by ``instrument()``)."""
    propagate_in_metadata: bool = True
    capture_content: bool = False
    """Record message text on client spans (``gen_ai.input.messages``/``gen_ai.output.messages``)."""
    fingerprints: bool = True
    """Record message fingerprints and text sizes on client spans (:mod:`coordbench.sketch`)."""


STATE = InstrumentationState()


def get_tracer() -> Tracer:
    """The instrumentor's tracer, or the global provider's when not instrumented."""
    return STATE.tracer or trace.get_tracer(semconv.INSTRUMENTATION_NAME)


@dataclass(eq=False, slots=True)
class ServerCall:
    """The A2A request an agent is serving, shared by everything that runs on its behalf.

    The SERVER span stays open while the request handler runs *and* while the agent's
    executor runs (which may outlive the handler, e.g. with ``return_immediately``):
    each holder calls :meth:`acquire` and :meth:`release`, and the last release ends the span.
    """

    span: Span
    agent_name: str
    collect_steps: bool = False
    """The caller asked for the traceability extension: record our finished steps."""
    timestamps: bool = False
    """The caller asked for the timestamp extension."""
    steps: list[Step] = field(default_factory=list[Step], repr=False)
    _holders: int = field(default=1, repr=False)
    _ended: bool = field(default=False, repr=False)

    def acquire(self) -> bool:
        """Register one more holder; ``False`` if the span has already ended."""
        if self._ended:
            return False
        self._holders += 1
        return True

    def release(self) -> None:
        """Drop one holder; ends the span when it was the last."""
        self._holders -= 1
        if self._holders <= 0 and not self._ended:
            self._ended = True
            self.span.end()


CURRENT_SERVER_CALL: ContextVar[ServerCall | None] = ContextVar("coordbench_server_call", default=None)
"""The server call whose work is running in this context; the hot paths read it directly."""


def current_server_call() -> ServerCall | None:
    """The server call whose work is running in this context, if any."""
    return CURRENT_SERVER_CALL.get()
