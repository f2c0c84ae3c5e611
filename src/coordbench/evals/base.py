"""The evaluator interface, what evaluators see (:class:`EvalContext`), and how they are found.

An evaluator is a small, stateless class with a ``name``, a ``tier`` and an
``async evaluate(ctx)`` that returns a typed pydantic model. Evaluators run tier by tier
(1 graph and protocol facts, 2 latency, 3 text, 4 the coordination score and the LLM judge),
so a later one reads the earlier ones' results from ``ctx.results``: the judge reads the
coordination parts and the graph metrics, for one.

Every evaluator, ours included, is registered under the ``coordbench.evaluators`` entry
point group, pointing at the class::

    [project.entry-points."coordbench.evaluators"]
    my_check = "my_package.evals:MyCheck"
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, ParamSpec, TypeVar

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.calls import Call, calls_of
from coordbench.evals.config import EvalConfig
from coordbench.graph.agentgraph import add_declared_agents, build_agent_graph
from coordbench.graph.metrics import Label
from coordbench.graph.steptree import StepTree
from coordbench.plugins import discover, select
from coordbench.spans import SpanData
from coordbench.spantree import Completeness, SpanTree

if TYPE_CHECKING:
    from coordbench.evals.evidence import TeamTrace

__all__ = [
    "ENTRY_POINT_GROUP",
    "TIER_ANALYSIS",
    "TIER_GRAPH",
    "TIER_JUDGEMENT",
    "TIER_TEXT",
    "EvalContext",
    "EvalScenario",
    "Evaluator",
    "TeamOutcome",
    "available_evaluators",
    "off_the_loop",
    "on_this_thread",
    "runs_on_this_thread",
    "select_evaluators",
]

ENTRY_POINT_GROUP = "coordbench.evaluators"

P = ParamSpec("P")
R = TypeVar("R")

_ON_THIS_THREAD: ContextVar[bool] = ContextVar("coordbench_evaluate_on_this_thread", default=False)


@contextlib.contextmanager
def on_this_thread() -> Generator[None]:
    """Run blocking evaluators, attribution and the judge's reading on the calling thread, not a worker thread.

    For a process whose event loop does nothing but evaluate one trace at a time (``coordbench
    evaluate``, the online worker process, :func:`~coordbench.evals.replay.replay_sync`): no loop
    to keep serving, and a hand-over to a worker thread and back costs about a millisecond each
    (a quarter of a small trace's evaluation). The results are the same; a blocking evaluator
    that takes longer than the timeout is reported as timed out when it ends.
    """
    token = _ON_THIS_THREAD.set(True)
    try:
        yield
    finally:
        _ON_THIS_THREAD.reset(token)


def runs_on_this_thread() -> bool:
    """Whether the calling code is inside :func:`on_this_thread`."""
    return _ON_THIS_THREAD.get()


async def off_the_loop(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``function(*args, **kwargs)`` on a worker thread (the loop keeps serving); here in :func:`on_this_thread`."""
    if _ON_THIS_THREAD.get():
        return function(*args, **kwargs)
    return await asyncio.to_thread(function, *args, **kwargs)


TIER_GRAPH = 1
"""Facts read straight off the trace: the agent graph and its metrics, per-call protocol figures."""
TIER_ANALYSIS = 2
"""Analyses built on tier 1: latency, and the LLM judge (which reads everything before it)."""
TIER_TEXT = 3
"""What the agents said: similarity to reference texts, diversity between agents."""
TIER_JUDGEMENT = 4
"""Judgements that read everything before them: the coordination score, then the LLM judge."""

ResultT = TypeVar("ResultT", bound=BaseModel)


class EvalScenario(BaseModel):
    """The scenario being evaluated: what the team was asked, and what good looks like.

    Attributes:
        id: Scenario id (unique within an assessment).
        task: The task the team was given (empty in ground-truth mode).
        references: Reference texts the team's answer is compared with (e.g. human reviews).
        expected_label: The coordination label the scenario should produce, when known.
        description: Free text for humans.
        expected: The correct answer, when known: failure attribution follows what the team's
            answer carries beyond it, and what it lacks, back to the agents.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    task: str = Field(default="", max_length=100_000)
    references: list[str] = Field(default_factory=list[str], max_length=100)
    expected_label: Label | None = None
    description: str = Field(default="", max_length=10_000)
    expected: str = Field(default="", max_length=100_000)


class TeamOutcome(BaseModel):
    """What the assessed team answered, as the assessor saw it.

    Attributes:
        state: Final task state (``completed``, ``failed``...; ``message`` for a plain reply,
            ``error`` when the call itself failed).
        output: The answer's text (artifacts, or the reply message).
        error: Why the call failed, when it did.
        duration_ms: How long the assessor waited.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    state: str
    output: str = ""
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def succeeded(self) -> bool:
        """The team answered (completed task or reply message) with some output."""
        return self.state in {"completed", "message"} and bool(self.output.strip())


@dataclass
class EvalContext:
    """Everything an evaluator may read. Build it with :meth:`build`.

    Attributes:
        scenario: The scenario.
        spans: The scenario's spans.
        tree: The spans as a tree.
        steps: The StepTree.
        graph: The full agent graph (hosts and declared participants included).
        hosts: Agents acting as hosts (the assessor): left out of coordination measures.
        participants: Agents expected to take part (isolated ones show as isolated).
        completeness: How complete the trace was when evaluated (``None``: not tracked).
        outcome: What the team answered (``None`` in ground-truth mode).
        config: The pipeline configuration.
        unreachable: Members the assessor could not reach (their card could not be read), by
            name, with why: down, as the assessor saw them.
        calls: Every A2A message in the trace (hosts' included), by start time.
        results: Results of the evaluators that already ran, by name.
    """

    scenario: EvalScenario
    spans: Sequence[SpanData]
    tree: SpanTree
    steps: StepTree
    graph: nx.DiGraph[str]
    hosts: tuple[str, ...]
    participants: tuple[str, ...]
    completeness: Completeness | None
    outcome: TeamOutcome | None
    config: EvalConfig
    calls: list[Call]
    unreachable: dict[str, str] = field(default_factory=dict[str, str])
    results: dict[str, BaseModel] = field(default_factory=dict[str, BaseModel])
    _teams: dict[frozenset[str], TeamTrace] = field(default_factory=dict[frozenset[str], "TeamTrace"], repr=False)

    @classmethod
    def build(
        cls,
        spans: Iterable[SpanData] | SpanTree,
        *,
        scenario: EvalScenario,
        config: EvalConfig | None = None,
        hosts: Iterable[str] = (),
        participants: Iterable[str] = (),
        completeness: Completeness | None = None,
        outcome: TeamOutcome | None = None,
        unreachable: Mapping[str, str] | None = None,
    ) -> EvalContext:
        """Index the spans once (tree, StepTree, agent graph) for all evaluators; a tree given is not rebuilt."""
        tree = spans if isinstance(spans, SpanTree) else SpanTree(spans)
        span_list = list(tree.given)
        graph = build_agent_graph(tree, hosts=hosts)
        down = dict(sorted((unreachable or {}).items()))
        declared = tuple(sorted(set(participants) | set(down)))
        add_declared_agents(graph, declared)
        return cls(
            scenario=scenario,
            spans=span_list,
            tree=tree,
            steps=StepTree(tree),
            graph=graph,
            hosts=tuple(graph.graph["hosts"]),
            participants=declared,
            completeness=completeness,
            outcome=outcome,
            config=config or EvalConfig(),
            calls=calls_of(tree),
            unreachable=down,
        )

    @property
    def agent_calls(self) -> list[Call]:
        """The messages the agents sent each other (the hosts' left out)."""
        hosts = set(self.hosts)
        return [c for c in self.calls if c.caller not in hosts]

    def team_trace(self, hosts: Iterable[str] | None = None) -> TeamTrace:
        """The trace's calls placed and classified (:class:`~coordbench.evals.evidence.TeamTrace`), built once.

        The coordination evaluator and failure attribution read the same calls: they are read off
        the spans once (:attr:`calls`) and classified once per set of hosts.

        Args:
            hosts: The host agents (default: the context's).
        """
        from coordbench.evals.evidence import TeamTrace  # evidence reads calls, as this module does

        key = frozenset(self.hosts if hosts is None else hosts)
        trace = self._teams.get(key)
        if trace is None:
            trace = self._teams[key] = TeamTrace.build(self.tree, key, calls=self.calls)
        return trace

    def result(self, name: str, kind: type[ResultT]) -> ResultT | None:
        """An earlier evaluator's result, if it ran, succeeded and has the expected type."""
        found = self.results.get(name)
        return found if isinstance(found, kind) else None


class Evaluator(ABC):
    """An evaluator plugin: stateless; everything it needs is in the :class:`EvalContext`.

    Class attributes:
        name: Unique name: the key in results, settings and score weights.
        tier: :data:`TIER_GRAPH`, :data:`TIER_ANALYSIS`, :data:`TIER_TEXT` or :data:`TIER_JUDGEMENT`.
        order: Position within the tier (lower first; then by name).
        description: One line: what it measures.
        blocking: Its ``evaluate`` computes without awaiting anything (CPU only). The pipeline
            then runs it on a worker thread, so the event loop, and the OTLP receivers that
            share it in the assessor, keep serving meanwhile, and its timeout can fire (on the
            calling thread in :func:`on_this_thread`). One that awaits something (an HTTP call,
            say) must leave this ``False``.
    """

    name: ClassVar[str]
    tier: ClassVar[int]
    order: ClassVar[int] = 0
    description: ClassVar[str] = ""
    blocking: ClassVar[bool] = False

    @abstractmethod
    async def evaluate(self, ctx: EvalContext) -> BaseModel:
        """Evaluate the scenario; raise to report a failure (the pipeline records it and goes on)."""

    def score(self, result: Any, ctx: EvalContext) -> float | None:
        """This evaluator's contribution to the overall score, in [0, 1], or ``None`` (does not count).

        Args:
            result: What :meth:`evaluate` returned.
            ctx: The context it was evaluated in.
        """
        del result, ctx
        return None


def _as_evaluator(obj: object) -> Evaluator | None:
    if isinstance(obj, type) and issubclass(obj, Evaluator):
        return obj()
    return obj if isinstance(obj, Evaluator) else None


def _evaluator_name(evaluator: Evaluator) -> str:
    return evaluator.name


def available_evaluators() -> dict[str, Evaluator]:
    """Every evaluator registered under ``coordbench.evaluators``, by name.

    An entry point may name an :class:`Evaluator` subclass (instantiated without arguments)
    or an instance. One that fails to load, or is neither, is skipped with a warning.
    """
    return discover(ENTRY_POINT_GROUP, _as_evaluator, _evaluator_name)


def select_evaluators(enabled: Iterable[str] | None = None, disabled: Iterable[str] = ()) -> list[Evaluator]:
    """The evaluators to run, in running order (tier, order, name).

    Raises:
        ConfigurationError: If a name is not a registered evaluator (the message names it).
    """
    chosen = select(available_evaluators(), enabled, disabled, "evaluator")
    return sorted(chosen, key=lambda e: (e.tier, e.order, e.name))
