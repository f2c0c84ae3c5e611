"""Tier 2: latency: percentiles over the agents' calls, per-agent figures, the critical path.

Latencies depend on the machine, the network and the load, so they are comparable only within
one run of one system; they carry no weight in the overall score by default.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.base import TIER_ANALYSIS, EvalContext, Evaluator
from coordbench.evals.calls import Call
from coordbench.graph.steptree import CriticalPath
from coordbench.spantree import is_agent_server_span
from coordbench.steps import CallType, call_type_of

__all__ = ["AgentLatency", "LatencyEvaluator", "LatencyResult", "LatencyStats", "latency_stats"]

COMPARABILITY_NOTE = "Latencies are comparable only within one run of one system (same machines, network and load)."


class LatencyStats(BaseModel):
    """Distribution of a set of latencies (ms); percentiles by linear interpolation (NumPy's default)."""

    model_config = ConfigDict(frozen=True)

    count: int
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None


def percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """``np.percentile(values, qs)`` (linear interpolation), the same floats, without NumPy's setup per call.

    NumPy's steps one by one: the order statistics, the virtual index ``(n - 1) q / 100``, and its
    ``_lerp`` (``a + (b - a) t``, or ``b - (b - a)(1 - t)`` from ``t = 0.5``); at or past the last
    index, the largest value. ``tests/evals/test_latency.py`` checks it against NumPy bit for bit.

    Example:
        >>> percentiles([10.0, 20.0, 30.0, 40.0], [50, 95])
        [25.0, 38.5]
    """
    ordered = sorted(float(v) for v in values)
    last = len(ordered) - 1
    found: list[float] = []
    for q in qs:
        virtual = last * (q / 100)
        if virtual >= last:
            found.append(ordered[last])
            continue
        below = math.floor(virtual)
        gamma = virtual - below
        a, b = ordered[below], ordered[below + 1]
        diff = b - a
        found.append(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)
    return found


def latency_stats(values: Sequence[float]) -> LatencyStats:
    """Count, mean, p50/p95/p99 and max of ``values``.

    Example:
        >>> latency_stats([10.0, 20.0, 30.0, 40.0]).p95_ms  # 30 + 0.85 * (40 - 30)
        38.5
    """
    if not values:
        return LatencyStats(count=0, avg_ms=None, p50_ms=None, p95_ms=None, p99_ms=None, max_ms=None)
    p50, p95, p99 = percentiles(values, (50, 95, 99))
    return LatencyStats(
        count=len(values),
        avg_ms=statistics.fmean(values),
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        max_ms=max(values),
    )


class AgentLatency(BaseModel):
    """One agent's latency figures.

    Attributes:
        handled: Latency of the messages it answered, as its callers waited for them.
        self_time_ms: Time its request handling spent working itself, not waiting on the
            agents or tools it called (its SERVER spans' own time), summed.
        self_time_per_request_ms: ``self_time_ms`` / requests served (``None`` if none).
    """

    model_config = ConfigDict(frozen=True)

    handled: LatencyStats
    self_time_ms: float
    self_time_per_request_ms: float | None


class LatencyResult(BaseModel):
    """Latency figures of a scenario.

    Attributes:
        calls: Over the messages agents sent each other (the host's left out).
        end_to_end: Over the host's messages to the team (what the assessor waited for).
        tools: Over TOOL steps (model and tool calls inside agents).
        agents: Per agent, by name.
        slowest_agent: The agent with the most self time per request.
        slowest_relative: Its self time per request over the median of the other agents'
            (``None`` with fewer than two agents or a zero median).
        critical_path_ms: Length of the critical path of the trace.
        critical_path_by_agent_ms: Each agent's part of the critical path.
        critical_path_calls: The calls the critical path went through, as ``caller -> callee``,
            in the order they started: what a change must shorten to make the team faster (a
            comparison reads which calls joined or left it).
        note: How far the figures can be compared.
    """

    model_config = ConfigDict(frozen=True)

    calls: LatencyStats
    end_to_end: LatencyStats
    tools: LatencyStats
    agents: dict[str, AgentLatency]
    slowest_agent: str | None
    slowest_relative: float | None
    critical_path_ms: float
    critical_path_by_agent_ms: dict[str, float]
    critical_path_calls: list[str] = Field(default_factory=list[str])
    note: str = COMPARABILITY_NOTE


def _calls_on(path: CriticalPath, ctx: EvalContext) -> list[str]:
    """The calls whose span, or a span below it, holds a piece of the critical path, as ``caller -> callee``."""
    on_path: set[str] = set()
    for span_id, *_ in path.segments:
        span = ctx.tree.get(span_id)
        # a span on the path has its ancestors there too: the walk up stops at the first one already counted
        while span is not None and span.span_id not in on_path:
            on_path.add(span.span_id)
            span = ctx.tree.parent(span)
    return [f"{c.caller} -> {c.callee}" for c in sorted(ctx.calls, key=_started) if c.span_id in on_path]


def _started(call: Call) -> tuple[int, str]:
    return call.start_unix_nano, call.span_id


class LatencyEvaluator(Evaluator):
    """Where the time went: call percentiles, per-agent latency and self time, the critical path."""

    name = "latency"
    tier = TIER_ANALYSIS
    blocking = True  # computes only: run on a worker thread
    description = "Call latency percentiles (avg, p50, p95, p99), per-agent figures, slowest agent, critical path."

    async def evaluate(self, ctx: EvalContext) -> LatencyResult:
        """Compute the figures from the calls and the StepTree."""
        hosts = set(ctx.hosts)
        handled: dict[str, list[float]] = defaultdict(list)
        for call in ctx.calls:
            handled[call.callee].append(call.latency_ms)
        self_ns: dict[str, int] = defaultdict(int)
        served: dict[str, int] = defaultdict(int)
        tool_ms: list[float] = []
        for span in ctx.tree.ordered():
            if is_agent_server_span(span):
                agent = ctx.tree.agent_of(span) or "?"
                self_ns[agent] += ctx.steps.self_time_ns(span.span_id)
                served[agent] += 1
            elif call_type_of(span) is CallType.TOOL:
                tool_ms.append(span.duration_ms)
        agents: dict[str, AgentLatency] = {}
        for name in sorted((set(handled) | set(served)) - hosts):
            self_ms = self_ns[name] / 1e6
            agents[name] = AgentLatency(
                handled=latency_stats(handled.get(name, [])),
                self_time_ms=self_ms,
                self_time_per_request_ms=self_ms / served[name] if served[name] else None,
            )
        per_request = {
            n: a.self_time_per_request_ms for n, a in agents.items() if a.self_time_per_request_ms is not None
        }
        slowest = max(sorted(per_request), key=lambda n: per_request[n], default=None)
        relative: float | None = None
        if slowest is not None and len(per_request) >= 2:
            others = statistics.median(v for n, v in per_request.items() if n != slowest)
            relative = per_request[slowest] / others if others > 0 else None
        path = ctx.steps.critical_path()
        return LatencyResult(
            calls=latency_stats([c.latency_ms for c in ctx.agent_calls]),
            end_to_end=latency_stats([c.latency_ms for c in ctx.calls if c.caller in hosts]),
            tools=latency_stats(tool_ms),
            agents=agents,
            slowest_agent=slowest,
            slowest_relative=relative,
            critical_path_ms=path.length_ms,
            critical_path_by_agent_ms=path.by_agent_ms,
            critical_path_calls=_calls_on(path, ctx),
        )
