"""Marking an agent's own work as TOOL and HOST steps, in one line.

Tool and model calls inside an agent are TOOL steps; the host's orchestration (for example
an assessor driving a scenario) is a HOST step. Each helper works as a context manager
(``with``/``async with``) and as a decorator of sync or async functions::

    from coordbench.instrument import host_step, llm_step, tool_step

    @tool_step("search")
    async def search(query: str) -> list[str]: ...

    with llm_step("gpt-4o-mini") as step:
        reply = call_model(prompt)
        step.set_usage(input_tokens=120, output_tokens=40, cost=0.0002)

    async with host_step("scenario 1"):
        await run_scenario()

The spans follow the GenAI conventions (``execute_tool {tool}``, ``chat {model}``,
``invoke_workflow {name}``) and carry ``a2a.step.call_type``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind

from coordbench import semconv
from coordbench.instrument._errors import record_error
from coordbench.instrument._extensions import record_step
from coordbench.instrument._payload import CONTENT_LIMIT, recorded_messages
from coordbench.instrument._state import STATE, current_server_call, get_tracer
from coordbench.sketch import fingerprint
from coordbench.steps import CallType

__all__ = ["StepHandle", "StepSpan", "host_step", "llm_step", "tool_step"]

P = ParamSpec("P")
R = TypeVar("R")


class StepHandle:
    """What a step's ``with`` block gets: ways to record usage and attributes on the span."""

    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        """Wrap ``span``."""
        self.span = span

    def set_usage(
        self, *, input_tokens: int | None = None, output_tokens: int | None = None, cost: float | None = None
    ) -> None:
        """Record the tokens and cost of the step (reported values, not estimates)."""
        if input_tokens is not None:
            self.span.set_attribute(semconv.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
        if output_tokens is not None:
            self.span.set_attribute(semconv.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)
        if cost is not None:
            self.span.set_attribute(semconv.A2A_STEP_COST, cost)

    def set_attribute(self, key: str, value: Any) -> None:
        """Set one span attribute."""
        self.span.set_attribute(key, value)

    def record_messages(self, input: str | Sequence[str] | None = None, output: str | None = None) -> None:
        """Record what the step read and what it produced, as the instrumentation records messages.

        With content capture on (``A2AInstrumentor(capture_content=True)``), the text goes in
        ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (at most 4 KiB each, URLs
        redacted; of a longer input the newest part is kept, marked ``...[truncated]``: a
        conversation grows at its end, and what a step last read is what it decided on); with
        fingerprints on (the default), each text's fingerprint goes in
        ``a2a.step.input.fingerprint`` / ``a2a.step.output.fingerprint`` (no word of it). The
        coordination score reads them to tell whether a model step between two calls took up
        the first call's answer (``docs/scoring.md``). Nothing is recorded while the
        instrumentation is off.

        Args:
            input: The prompt or messages the step was given (several texts: one message each).
            output: What it answered.
        """
        if STATE.tracer is None or not self.span.is_recording():
            return
        texts = [input] if isinstance(input, str) else list(input or [])
        if texts:
            if STATE.capture_content:
                self.span.set_attribute(semconv.GEN_AI_INPUT_MESSAGES, recorded_messages("user", _newest(texts)))
            if STATE.fingerprints:
                self.span.set_attribute(semconv.A2A_STEP_INPUT_FINGERPRINT, list(fingerprint("\n".join(texts))))
        if output is not None:
            if STATE.capture_content:
                self.span.set_attribute(semconv.GEN_AI_OUTPUT_MESSAGES, recorded_messages("assistant", [output]))
            if STATE.fingerprints:
                self.span.set_attribute(semconv.A2A_STEP_OUTPUT_FINGERPRINT, list(fingerprint(output)))


class StepSpan:
    """A step span as a (sync or async) context manager and as a decorator.

    Each ``with`` or decorated call opens a fresh span, so one object can be reused.
    """

    def __init__(
        self, call_type: CallType, name: str, kind: SpanKind, attributes: Mapping[str, Any], *, new_trace: bool = False
    ) -> None:
        """Describe the spans to create; see :func:`tool_step`, :func:`llm_step`, :func:`host_step`."""
        self.call_type = call_type
        self.name = name
        self.kind = kind
        self.attributes = dict(attributes)
        self.new_trace = new_trace
        self._open: dict[tuple[int, int], list[tuple[Span, object]]] = {}

    @staticmethod
    def _key() -> tuple[int, int]:
        """Where the block runs (thread and asyncio task), so one object can be shared safely."""
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        return threading.get_ident(), id(task)

    def _start(self) -> StepHandle:
        attrs = {**self.attributes, semconv.A2A_CALL_TYPE: self.call_type.value}
        caller = current_server_call()
        if caller is not None and self.call_type is not CallType.HOST:
            attrs.setdefault(semconv.GEN_AI_AGENT_NAME, caller.agent_name)
        if self.new_trace:
            current = trace.get_current_span().get_span_context()
            links = [Link(current)] if current.is_valid else []
            span = get_tracer().start_span(
                self.name, context=otel_context.Context(), kind=self.kind, attributes=attrs, links=links
            )
        else:
            span = get_tracer().start_span(self.name, kind=self.kind, attributes=attrs)
        token = otel_context.attach(trace.set_span_in_context(span))
        self._open.setdefault(self._key(), []).append((span, token))
        return StepHandle(span)

    def _end(self, exc: BaseException | None) -> None:
        key = self._key()
        stack = self._open[key]
        span, token = stack.pop()
        if not stack:
            del self._open[key]
        if exc is not None:
            record_error(span, exc)
        otel_context.detach(token)  # pyright: ignore[reportArgumentType]
        span.end()
        record_step(span)

    def __enter__(self) -> StepHandle:
        """Open the span and make it current."""
        return self._start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """End the span, recording ``exc`` if the block raised."""
        self._end(exc)

    async def __aenter__(self) -> StepHandle:
        """Open the span and make it current."""
        return self._start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """End the span, recording ``exc`` if the block raised."""
        self._end(exc)

    def _fresh(self) -> StepSpan:
        return StepSpan(self.call_type, self.name, self.kind, self.attributes, new_trace=self.new_trace)

    def __call__(self, func: Callable[P, R]) -> Callable[P, R]:
        """Decorate ``func`` (sync or async) so every call runs in a new step span."""
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
                async with self._fresh():
                    return await func(*args, **kwargs)

            return cast("Callable[P, R]", async_wrapper)

        @functools.wraps(func)
        def sync_wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with self._fresh():
                return func(*args, **kwargs)

        return sync_wrapper


def tool_step(
    tool_name: str, *, parameters: Mapping[str, Any] | None = None, attributes: Mapping[str, Any] | None = None
) -> StepSpan:
    """A TOOL step for a tool call inside an agent: span ``execute_tool {tool_name}`` (INTERNAL).

    Args:
        tool_name: The tool's name (``gen_ai.tool.name``).
        parameters: The call's parameters, recorded as JSON in ``a2a.tool.parameters``; leave
            out anything secret.
        attributes: Extra span attributes.
    """
    attrs: dict[str, Any] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: tool_name,
        **(attributes or {}),
    }
    if parameters is not None:
        attrs[semconv.A2A_TOOL_PARAMETERS] = json.dumps(parameters, sort_keys=True, default=str)
    return StepSpan(CallType.TOOL, f"{semconv.OPERATION_EXECUTE_TOOL} {tool_name}", SpanKind.INTERNAL, attrs)


def llm_step(
    model: str, *, operation: str = semconv.OPERATION_CHAT, attributes: Mapping[str, Any] | None = None
) -> StepSpan:
    """A TOOL step for a model call: span ``{operation} {model}`` (CLIENT), as the GenAI conventions name it.

    Args:
        model: The requested model (``gen_ai.request.model``).
        operation: The GenAI operation (``chat``, ``text_completion``, ``embeddings``...).
        attributes: Extra span attributes.
    """
    attrs = {semconv.GEN_AI_OPERATION_NAME: operation, semconv.GEN_AI_REQUEST_MODEL: model, **(attributes or {})}
    return StepSpan(CallType.TOOL, f"{operation} {model}", SpanKind.CLIENT, attrs)


def host_step(name: str, *, attributes: Mapping[str, Any] | None = None, new_trace: bool = False) -> StepSpan:
    """A HOST step for orchestration: span ``invoke_workflow {name}`` (INTERNAL).

    Args:
        name: What is being orchestrated (``gen_ai.workflow.name``), e.g. an assessment or scenario.
        attributes: Extra span attributes.
        new_trace: Start a new trace with this step as its root (linked to the current span,
            if any), rather than a child of the current span: an assessor does this per
            assessment, so each has its own trace whatever called it.
    """
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OPERATION_INVOKE_WORKFLOW,
        semconv.GEN_AI_WORKFLOW_NAME: name,
        **(attributes or {}),
    }
    return StepSpan(
        CallType.HOST, f"{semconv.OPERATION_INVOKE_WORKFLOW} {name}", SpanKind.INTERNAL, attrs, new_trace=new_trace
    )


_CUT = "...[truncated]"


def _newest(texts: list[str]) -> list[str]:
    """The newest texts that fit the content limit, the oldest kept one cut at its start (marked)."""
    room = CONTENT_LIMIT - len(_CUT)
    kept: list[str] = []
    for text in reversed(texts):
        if room <= 0:
            break
        if len(text) > room:
            text = _CUT + text[len(text) - room :]
        kept.append(text)
        room -= len(text)
    return kept[::-1]
