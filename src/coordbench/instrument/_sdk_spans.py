"""Taking a2a-sdk's own telemetry out of the way while coordbench instruments the SDK.

a2a-sdk decorates its transports, dispatchers, request handlers, event queues and queue
managers with ``a2a.utils.telemetry.trace_class``: about 55 SERVER spans per request, without
attributes and without trace context propagation (see a2a-sdk's ``a2a/utils/telemetry.py``). The
decorators stay in place even when ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false`` silences
them, and every decorated call still pays for its wrapper (a tracer lookup, a ``with`` block,
a debug log call, a status update).

While instrumented, two things replace them:

- every decorated method and function is put back to the function a2a-sdk wrote (the
  wrapper's ``__wrapped__``), in the classes already imported and, through a stand-in for
  ``trace_class``, in those imported later (a2a-sdk's JSON-RPC and REST dispatchers are
  usually imported after the instrumentor runs);
- the module's ``trace`` is replaced by a stand-in whose tracer records nothing and never
  changes the current span, for any wrapper still reachable (a function another module
  imported by name before), so our spans stay the parents of whatever the agent does.

:func:`restore_sdk_spans` puts every wrapper and both module attributes back.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from types import CodeType, FunctionType, ModuleType
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span

__all__ = ["restore_sdk_spans", "suppress_sdk_spans"]

_logger = logging.getLogger(__name__)

_TELEMETRY = "a2a.utils.telemetry"


class _NoSpan:
    """A context manager yielding the invalid span; entering it changes nothing."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


class _PassThroughTracer:
    """A tracer whose spans record nothing and never become current (so ours stay the parents)."""

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> _NoSpan:
        return _NO_SPAN

    def start_span(self, *args: Any, **kwargs: Any) -> Span:
        return INVALID_SPAN


class _SuppressedTrace:
    """Stands in for the ``opentelemetry.trace`` module inside ``a2a.utils.telemetry``."""

    _tracer = _PassThroughTracer()

    def get_tracer(self, *args: Any, **kwargs: Any) -> _PassThroughTracer:
        return self._tracer

    def __getattr__(self, name: str) -> Any:
        return getattr(trace, name)


class _Suppression:
    """What :func:`suppress_sdk_spans` changed, so :func:`restore_sdk_spans` can put it back."""

    def __init__(self, telemetry: ModuleType) -> None:
        self.telemetry = telemetry
        self.trace: Any = None
        self.trace_class: Any = telemetry.trace_class
        self.stripped: list[tuple[Any, str, Any, Any]] = []
        """(owner, name, a2a-sdk's wrapper, the function put in its place)."""
        self.codes = _wrapper_codes(telemetry)

    def original(self, value: Any) -> Any:
        """The function under a2a-sdk's telemetry wrappers, or ``None`` if ``value`` is not one."""
        if not isinstance(value, FunctionType) or value.__code__ not in self.codes:
            return None
        while isinstance(value, FunctionType) and value.__code__ in self.codes:
            value = getattr(value, "__wrapped__", None)
        return value

    def strip(self, owner: Any, name: str, wrapper: Any) -> None:
        """Put the function a2a-sdk wrote in place of its telemetry ``wrapper`` at ``owner.name``."""
        original = self.original(wrapper)
        if original is not None:
            setattr(owner, name, original)
            self.stripped.append((owner, name, wrapper, original))

    def strip_class(self, cls: type) -> None:
        """Strip the wrappers among ``cls``'s own attributes."""
        for name, value in dict(vars(cls)).items():
            self.strip(cls, name, value)

    def strip_module(self, module: ModuleType) -> None:
        """Strip the wrappers in ``module``: its functions, and the methods of the classes it defines."""
        for name, value in vars(module).copy().items():
            if isinstance(value, type) and value.__module__ == module.__name__:
                self.strip_class(value)
            else:
                self.strip(module, name, value)

    def traced_class(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        """Stands in for ``trace_class`` while suppressed: decorates as a2a-sdk does, then strips."""
        decorate = self.trace_class(*args, **kwargs)

        def decorator(cls: Any) -> Any:
            cls = decorate(cls)
            self.strip_class(cls)
            return cls

        return decorator

    def restore(self) -> None:
        """Put back what was changed, newest first; an attribute someone else replaced since is left alone."""
        for owner, name, wrapper, original in reversed(self.stripped):
            if cast("dict[str, Any]", vars(owner)).get(name) is original:
                setattr(owner, name, wrapper)
            else:
                _logger.debug("not restoring a2a-sdk's telemetry on %r.%s: it was replaced since", owner, name)
        self.stripped.clear()
        setattr(self.telemetry, "trace_class", self.trace_class)  # noqa: B010 - the module is not typed
        if self.trace is not None:
            setattr(self.telemetry, "trace", self.trace)  # noqa: B010


def _wrapper_codes(telemetry: ModuleType) -> frozenset[CodeType]:
    """The code of a2a-sdk's two telemetry wrappers (async and sync), to recognise them."""

    async def async_probe() -> None:
        return None

    def sync_probe() -> None:
        return None

    wrap = telemetry.trace_function
    return frozenset(wrap(probe).__code__ for probe in (async_probe, sync_probe))


_active: list[_Suppression] = []


def suppress_sdk_spans() -> None:
    """Take a2a-sdk's telemetry wrappers out of its calls and silence those still reachable (idempotent)."""
    if _active:
        return
    telemetry = importlib.import_module(_TELEMETRY)
    suppression = _Suppression(telemetry)
    # a copy taken in one step: building a list item by item allocates, an allocation can run the
    # garbage collector, and a finaliser that imports changes sys.modules mid-iteration
    for name, module in sys.modules.copy().items():
        # ``sys.modules`` may hold ``None`` (an import blocked on purpose), whatever its annotation says
        ours = name == "a2a" or name.startswith("a2a.")
        if ours and isinstance(cast("object", module), ModuleType) and module is not telemetry:
            suppression.strip_module(module)
    setattr(telemetry, "trace_class", suppression.traced_class)  # noqa: B010 - the module is not typed
    if getattr(telemetry, "otel_enabled", False):
        suppression.trace = telemetry.trace
        setattr(telemetry, "trace", _SuppressedTrace())  # noqa: B010
    _active.append(suppression)


def restore_sdk_spans() -> None:
    """Undo :func:`suppress_sdk_spans`."""
    if _active:
        _active.pop().restore()
