"""How often attribution names the right agent and step on a labelled set, beside trivial baselines.

A labelled set is a trace file and a JSON document ``{"runs": [{"trace_id", "agent", "span_id",
"expected"?}, ...]}`` (``data/attribution/`` is ours). Each method names an agent and a span per
trace; the table gives, per method, the share of traces whose agent is right, whose span is the
labelled one, and whose span is within :data:`STEPS_NEAR` steps of it (steps: the trace's
utterances in time order, :class:`~coordbench.evals.attribution.said.Conversation`).

The baselines, computed on the same traces (the published ones for this task):

- **last speaker**: the agent that spoke last before the team's answer, at that utterance;
- **most common culprit**: the agent labelled most often in the *other* traces (leave one out),
  among the agents of this trace, at its first utterance;
- **most messages**: the agent that said the most, at its first utterance;
- **PageRank**: the agent with the highest PageRank in the agent graph (hosts left out), at its
  first utterance.

Ties go to the name that sorts first, so the table is the same on every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from coordbench.evals.attribution.attribute import attribute, outside_hosts
from coordbench.evals.attribution.said import Conversation, Said
from coordbench.evals.base import EvalContext
from coordbench.evals.config import EvalConfig
from coordbench.evals.evidence import TeamTrace
from coordbench.evals.replay import replay_config, scenario_contexts
from coordbench.graph.agentgraph import agent_view, build_agent_graph
from coordbench.spans import SpanData
from coordbench.spantree import SpanTree

__all__ = ["METHODS", "STEPS_NEAR", "AccuracyRow", "Label", "LabelSet", "accuracy", "markdown"]

STEPS_NEAR = 3
"""How many steps from the labelled one a named span may be and still count as near it."""
METHODS = ("coordbench", "last speaker", "most common culprit", "most messages", "PageRank")
"""The methods compared, ours first."""


class Label(BaseModel):
    """The truth about one failed run.

    Attributes:
        trace_id: The run's trace.
        agent: The responsible agent.
        span_id: The decisive span, when labelled.
        expected: The correct answer, when known.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    agent: str = Field(min_length=1)
    span_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{16}$")
    expected: str | None = None


class LabelSet(BaseModel):
    """A labelled set's document."""

    model_config = ConfigDict(frozen=True, extra="allow")

    runs: list[Label] = Field(min_length=1)


class AccuracyRow(BaseModel):
    """One method's accuracy on a labelled set.

    Attributes:
        method: The method.
        runs: Traces scored.
        agent: Share whose responsible agent it named.
        span: Share whose decisive span it named exactly (of the runs with a labelled span).
        near: Share whose named span is within :data:`STEPS_NEAR` steps of the labelled one.
    """

    model_config = ConfigDict(frozen=True)

    method: str
    runs: int
    agent: float
    span: float
    near: float


@dataclass(frozen=True, slots=True)
class _Named:
    agent: str | None
    span_id: str | None


def _first(said: Sequence[Said], agent: str) -> str | None:
    return next((s.span.span_id for s in said if s.agent == agent and s.kind != "request"),
                next((s.span.span_id for s in said if s.agent == agent), None))  # fmt: skip


def _baselines(conv: Conversation, tree: SpanTree, culprits: Counter[str]) -> dict[str, _Named]:
    said = [s for s in conv.said if s.agent not in conv.trace.hosts]
    agents = conv.agents
    spoken = [s for s in said if s.kind != "request" and s is not conv.final and s.span is not
              (conv.final.span if conv.final else None)]  # fmt: skip
    last = spoken[-1] if spoken else None
    common = sorted(agents, key=lambda a: (-culprits.get(a, 0), a))
    counts = Counter(s.agent for s in said)
    most = sorted(agents, key=lambda a: (-counts[a], a))
    graph = agent_view(build_agent_graph(tree, hosts=conv.trace.hosts))
    ranks: dict[str, float] = nx.pagerank(graph) if graph.number_of_nodes() else {}  # pyright: ignore[reportUnknownMemberType]
    central = sorted((a for a in agents if a in ranks), key=lambda a: (-round(ranks[a], 12), a))
    out: dict[str, _Named] = {
        "last speaker": _Named(last.agent, last.span.span_id) if last else _Named(None, None),
    }
    for name, order in (("most common culprit", common), ("most messages", most), ("PageRank", central)):
        out[name] = _Named(order[0], _first(said, order[0])) if order else _Named(None, None)
    return out


def _context(spans: Sequence[SpanData], label: Label, *, with_expected: bool) -> EvalContext:
    """The scenario a labelled run is attributed on, as ``coordbench attribute`` reads it.

    An assessment's trace gives its scenario's context (the members, those down, the team's
    answer); with several scenarios, the one holding the labelled span.
    """
    config = replay_config(spans)
    known = [c.eval_scenario() for c in config.scenarios or []]
    contexts = scenario_contexts(spans, config=EvalConfig(), scenarios=known,
                                 expected=label.expected if with_expected else None)  # fmt: skip
    if not with_expected:  # what the trace recorded of the correct answer is left out too
        contexts = [replace(c, scenario=c.scenario.model_copy(update={"expected": ""})) for c in contexts]
    holding = [c for c in contexts if label.span_id is not None and c.tree.get(label.span_id) is not None]
    return (holding or contexts)[0]


def accuracy(traces: Mapping[str, Sequence[SpanData]], labels: LabelSet, *,
             with_expected: bool = True) -> list[AccuracyRow]:  # fmt: skip
    """Each method of :data:`METHODS` scored on the labelled traces (a label whose trace is missing is skipped).

    Args:
        traces: Spans by trace id.
        labels: The truth.
        with_expected: Give attribution each run's expected answer (when labelled).
    """
    runs = [label for label in labels.runs if label.trace_id in traces]
    hits: dict[str, list[float]] = {m: [0.0, 0.0, 0.0] for m in METHODS}
    spanned = 0
    for label in runs:
        ctx = _context(traces[label.trace_id], label, with_expected=with_expected)
        tree = ctx.tree
        hosts = outside_hosts(tree, ctx.hosts)
        trace = TeamTrace.build(tree, hosts)
        conv = Conversation(trace)
        ours = attribute(ctx)
        culprits = Counter(other.agent for other in runs if other is not label)
        named = {"coordbench": _Named(ours.agent, ours.span_id), **_baselines(conv, tree, culprits)}
        order = {s.span.span_id: i for i, s in reversed(list(enumerate(conv.said)))}
        truth = order.get(label.span_id or "")
        spanned += label.span_id is not None
        for method, guess in named.items():
            row = hits[method]
            row[0] += guess.agent == label.agent
            if label.span_id is not None:
                row[1] += guess.span_id == label.span_id
                at = order.get(guess.span_id or "")
                row[2] += truth is not None and at is not None and abs(at - truth) <= STEPS_NEAR
    return [
        AccuracyRow(method=m, runs=len(runs), agent=hits[m][0] / len(runs) if runs else 0.0,
                    span=hits[m][1] / spanned if spanned else 0.0, near=hits[m][2] / spanned if spanned else 0.0)
        for m in METHODS
    ]  # fmt: skip


def markdown(rows: Sequence[AccuracyRow]) -> str:
    """The table as Markdown (the form ``docs/attribution.md`` holds)."""
    lines = ["| method | agent right | decisive span exact | span within 3 steps |", "|---|---|---|---|"]
    lines += [f"| {r.method} | {r.agent:.0%} | {r.span:.0%} | {r.near:.0%} |" for r in rows]
    return "\n".join(lines) + "\n"
