"""``GraphMetrics``: the JSON-serialisable, deterministic result of the graph evaluation."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from coordbench.extensions import native_extension
from coordbench.graph.metrics.detections import Classification, Detections, Label, Thresholds
from coordbench.graph.metrics.topology import Topology

__all__ = ["AgentSummary", "EdgeSummary", "GraphMetrics", "MetricInfo", "canonical_json"]

_DIGITS = 12


_EXACT = 2**53
"""Integral floats below this are written as integers (every such float is an exact integer)."""


def _float(value: float) -> float | int | None:
    if not math.isfinite(value):
        return None
    rounded = float(f"{value:.{_DIGITS}g}")
    if rounded.is_integer() and abs(rounded) < _EXACT:
        return int(rounded)  # 3.0 and 3 are the same number: one spelling, whatever carried it
    return rounded


_AS_IS = frozenset({str, int, bool, type(None)})


def _canonical(value: Any) -> Any:
    # the exact built-in types first, by identity (an evaluation is thousands of them); anything else
    # (a subclass, a Mapping that is not a dict) takes the general path below, with the same result
    kind: type[object] = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in _AS_IS:
        return value
    if kind is float:
        return _float(value)
    if kind is dict:
        return {str(k): _canonical(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if kind is list:
        return [_canonical(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _load_native() -> Callable[[Any], str | None] | None:
    """The C writer (``_canonical.c``), unless it was not built or ``COORDBENCH_NATIVE=0`` turns it off."""
    native = native_extension("coordbench.graph.metrics._canonical")
    return None if native is None else native.canonical_json


_NATIVE = _load_native()
"""Writes the same bytes as :func:`python_canonical_json` in one pass, or ``None`` when it is not sure to."""


def python_canonical_json(value: Any) -> str:
    """:func:`canonical_json` in Python: what every value is written as, and what the C writer must match."""
    return json.dumps(_canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces, floats at 12 significant digits, non-finite floats as null.

    The same input gives the same bytes, whatever dict order or last-bit float noise the
    computation had, and whatever carried the numbers on the way (an A2A DataPart holds every
    number as a double): an integral number is written as an integer (``3``, never ``3.0``).

    The C writer (``_canonical.c``, built with the package) writes a value made of the built-in
    JSON types in one pass; anything else (a subclass, a key that is not a string, a lone
    surrogate, nesting deeper than it goes), and any error, is left to :func:`python_canonical_json`,
    which writes it or raises what it always raised. Both write the same bytes
    (``tests/graph/test_canonical_native.py``).

    Example:
        >>> canonical_json({"b": 0.1 + 0.2, "a": [float("inf"), 1, 2.0]})
        '{"a":[null,1,2],"b":0.3}'
    """
    if _NATIVE is not None:
        try:
            written = _NATIVE(value)
        except Exception:
            written = None  # the Python path writes it, or raises what it always raised
        if written is not None:
            return written
    return python_canonical_json(value)


class AgentSummary(BaseModel):
    """One agent of the graph."""

    model_config = ConfigDict(frozen=True)

    name: str
    role: str
    requests: int
    calls: int
    errors: int
    tool_calls: int
    tool_time_ms: float


class EdgeSummary(BaseModel):
    """One caller → callee pair."""

    model_config = ConfigDict(frozen=True)

    caller: str
    callee: str
    count: int
    errors: int
    polls: int
    latency_mean_ms: float
    latency_p50_ms: float
    latency_max_ms: float


class MetricInfo(BaseModel):
    """How a metric reads the interactions."""

    model_config = ConfigDict(frozen=True)

    description: str
    edge_model: str
    includes_tools: bool
    includes_hosts: bool


class GraphMetrics(BaseModel):
    """Everything the graph tier says about one evaluation.

    Attributes:
        traces: Trace ids evaluated.
        agents: Every agent (hosts included, with their role), by name.
        hosts: Agents treated as hosts (left out of the coordination metrics).
        edges: Caller → callee pairs among all agents, by name.
        interactions: Messages between the agents the metrics cover (hosts left out).
        metrics: Plugin results by metric name.
        metric_info: How each metric reads the interactions.
        metric_errors: Metrics that failed, with the error (the others still count).
        detections: What the thresholds flag.
        thresholds: The thresholds used.
        classification: ``high``, ``medium``, ``low`` or ``bottleneck``.
        label: The scenario label (``partial_isolation`` or ``<classification>_coordination``).
        topology: The shape's name (``star``, ``chain``, ``tree``, ``mesh``, ``bottleneck_relay``,
            ``silos``, ``pair`` or ``none``): descriptive, never scored.
        orphan_steps: Steps whose parent never arrived (the trace was incomplete).
    """

    model_config = ConfigDict(frozen=True)

    traces: list[str]
    agents: list[AgentSummary]
    hosts: list[str]
    edges: list[EdgeSummary]
    interactions: int
    metrics: dict[str, Any]
    metric_info: dict[str, MetricInfo]
    metric_errors: dict[str, str]
    detections: Detections
    thresholds: Thresholds
    classification: Classification
    label: Label
    topology: Topology = "none"
    orphan_steps: int

    def to_json(self) -> str:
        """Canonical JSON (see :func:`canonical_json`): byte-identical for the same spans."""
        return canonical_json(self.model_dump(mode="python"))

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON as plain data."""
        return json.loads(self.to_json())
