"""Putting our spans' attributes on OpenTelemetry SDK spans without cleaning each value again.

The SDK checks and copies every attribute it is given (``BoundedAttributes``: a type check
per value, a lock and a dict operation per key). For the 20-odd attributes of an A2A span
that is about half a microsecond each, a third of what recording the span costs. Ours are
built by our own code, from plain values, so they are checked here in one cheap pass and
written in one dict update, with the same result the SDK's path would give: same keys in
the same order, same values, same limits.

The shortcut reads SDK internals (``_Span._attributes``, ``BoundedAttributes._dict``), so it
is taken only when everything it relies on is exactly as expected, and falls back to the
public API otherwise:

- the span is the SDK's, with the internals it writes to (checked once per span class) and
  its attributes still mutable;
- the span's limits leave room for every attribute and do not truncate values;
- every value is a ``str``, ``bool``, ``int``, ``float``, or a tuple of ``str``;
- at start, also: the sampler is one of the SDK's that never reads attributes, and every span
  processor is one whose ``on_start`` does nothing, so starting the span without them and
  adding them at once is indistinguishable from passing them to ``start_span``. Any other
  sampler or processor (one that samples on attributes, or reads them when a span starts)
  gets them through ``start_span``, as always.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.sdk.trace import SynchronousMultiSpanProcessor, Tracer
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, Sampler, StaticSampler, TraceIdRatioBased
from opentelemetry.trace import Span, SpanKind
from opentelemetry.trace import Tracer as ApiTracer

__all__ = ["set_attributes", "start_span"]

_SCALARS = frozenset((str, bool, int, float))
_BLIND_SAMPLERS = frozenset((StaticSampler, TraceIdRatioBased))
"""Samplers that decide without looking at attributes."""
_QUIET_PROCESSORS = frozenset((BatchSpanProcessor, SimpleSpanProcessor))
"""Span processors whose ``on_start`` does nothing."""
_PARENT_BASED_DELEGATES = (
    "_root",
    "_remote_parent_sampled",
    "_remote_parent_not_sampled",
    "_local_parent_sampled",
    "_local_parent_not_sampled",
)


_FITS: dict[type[object], bool] = {}
"""Per span class: whether it is the SDK's, with the internals the shortcut writes to."""


def _internals_fit(span: object) -> bool:
    """Whether ``span``'s class is the SDK's span with the internals the shortcut writes to (checked once per class).

    An SDK release that renames them, or a span class that overrides ``set_attributes``,
    gets the public path.
    """
    kind = type(span)
    fits = _FITS.get(kind)
    if fits is None:
        bounded = getattr(span, "_attributes", None)
        fits = (
            isinstance(span, SdkSpan)
            and getattr(kind, "set_attributes", None) is SdkSpan.set_attributes
            and type(bounded) is BoundedAttributes
            and type(getattr(bounded, "_dict", None)) is dict
            and type(getattr(bounded, "_immutable", None)) is bool
            and hasattr(bounded, "_lock")
            and hasattr(span, "_lock")
        )
        _FITS[kind] = fits
    return fits


def _plain(attributes: Mapping[str, object]) -> bool:
    """Whether every value is one the SDK would keep exactly as it is."""
    for value in attributes.values():
        kind = type(value)
        if kind in _SCALARS:
            continue
        if kind is tuple and all(type(v) is str for v in cast("tuple[object, ...]", value)):
            continue
        return False
    return True


def _blind(sampler: Sampler) -> bool:
    """Whether ``sampler`` (and every sampler it delegates to) never reads attributes."""
    kind: type[Sampler] = type(sampler)
    if kind in _BLIND_SAMPLERS:
        return True
    if isinstance(sampler, ParentBased) and kind.should_sample is ParentBased.should_sample:
        delegates: list[object] = [getattr(sampler, name, None) for name in _PARENT_BASED_DELEGATES]
        return all(isinstance(d, Sampler) and _blind(d) for d in delegates)
    return False


class _StartCheck:
    """Whether a tracer may start spans without their attributes (cached per sampler and processor set).

    ``add_span_processor`` replaces the provider's processor tuple, so a processor added later
    is seen at the next span. The verdict is kept with what it was made for in one tuple,
    read and replaced whole, so threads never pair one tracer's verdict with another's.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[object, object, bool] = (None, None, False)

    def __call__(self, tracer: Tracer) -> bool:
        multi = tracer.span_processor
        processors: object = getattr(multi, "_span_processors", None)
        sampler, seen, ok = self._last
        if sampler is tracer.sampler and seen is processors and processors is not None:
            return ok
        ok = (
            type(multi) is SynchronousMultiSpanProcessor
            and isinstance(processors, tuple)
            and all(type(p) in _QUIET_PROCESSORS for p in cast("tuple[object, ...]", processors))
            and _blind(tracer.sampler)
        )
        self._last = (tracer.sampler, processors, ok)
        return ok


_may_start_bare = _StartCheck()


def _write(span: Span, attributes: Mapping[str, Any]) -> bool:
    """Write ``attributes`` straight into an SDK span's attributes; ``False`` when the shortcut does not apply."""
    if not _internals_fit(span):
        return False
    sdk_span: Any = span  # the SDK's span, with the internals ``_internals_fit`` checked
    bounded: BoundedAttributes = sdk_span._attributes
    if bounded.max_value_len is not None or not _plain(attributes):
        return False
    with sdk_span._lock:  # the lock ``Span.set_attributes`` takes
        if sdk_span.end_time is not None or bounded._immutable:  # pyright: ignore[reportPrivateUsage]
            return False  # ended: the public path logs and drops, as it should
        items = bounded._dict  # pyright: ignore[reportPrivateUsage]
        maxlen = bounded.maxlen
        if maxlen is not None and len(items) + len(attributes) > maxlen:
            return False  # the SDK would evict the oldest: leave that to it
        with bounded._lock:  # pyright: ignore[reportPrivateUsage]
            if not items.keys().isdisjoint(attributes):
                for key in attributes:  # the SDK moves a re-set key to the end
                    items.pop(key, None)
            items.update(attributes)
    return True


def start_span(
    tracer: ApiTracer,
    name: str,
    *,
    kind: SpanKind,
    attributes: Callable[[], dict[str, Any]],
    context: Context | None = None,
) -> Span:
    """``tracer.start_span(name, context, kind, attributes())``, building the attributes only when they are used.

    When the sampler decides without attributes (see the module), the span is started first
    and ``attributes`` is called only if it records: a call the sampler drops costs no
    attribute work. Otherwise they are built first and given to ``start_span``, as always.
    Either way the SDK does not clean each attribute again when it need not.

    Args:
        tracer: The instrumentor's tracer.
        name: The span's name.
        kind: The span's kind.
        attributes: Builds the span's first attributes: plain values made by our own code.
        context: The parent context (``None``: the current one).
    """
    if type(tracer) is Tracer and _may_start_bare(tracer):
        span = tracer.start_span(name, context=context, kind=kind)
        if not span.is_recording():
            return span
        built = attributes()
        if not _write(span, built):
            span.set_attributes(built)  # values or limits the shortcut leaves to the SDK: it applies them
        return span
    return tracer.start_span(name, context=context, kind=kind, attributes=attributes())


def set_attributes(span: Span, attributes: Mapping[str, Any]) -> None:
    """``span.set_attributes(attributes)``, without the SDK cleaning each value when it may."""
    if not _write(span, attributes):
        span.set_attributes(attributes)
