"""Compare two sets of runs of the same scenarios: what changed, by how much, beyond the noise or not.

Each side is one or more result rows (``results.json`` files, a folder of them, or traces
evaluated on the spot). A *run* of a scenario is one of its entries (a config with ``repeats``
gives several per row; several files give several too). For every scenario both sides ran, and
overall, each figure is compared with :func:`coordbench.compare.noise.difference`.

When is a change beyond the noise?

- With two or more runs on each side: its 95% bootstrap interval leaves out zero and it is at
  least :data:`MIN_EFFECT` (0-1 figures) or :data:`MIN_RELATIVE` of the base (times).
- With one run on a side no interval can be given (the comparison says so): the change must be
  at least :data:`SINGLE_RUN_NOISE` (0-1 figures), the largest move of a team's score between a
  quiet and a busy machine that the busy-machine test allows, or :data:`SINGLE_RUN_RELATIVE` of
  the base (times).

A change beyond the noise is a *regression* when it goes the worse way (a lower score or part;
a longer critical path), an *improvement* otherwise. Only the score, the answer and
coordination qualities and the parts are *scored*: the shape (centralisation, the hub's share)
is described and latencies depend on the machine, so they are shown and can be named in
``--fail-on`` rules, but never make a comparison a regression on their own. Evidence that fired
in most head runs and in no base run is a regression too, and so is a new cause of failure: most
head runs failed and attribution blamed an agent and rule (``cause.<rule>``) no base run was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from coordbench.compare.model import (
    Comparison,
    Delta,
    EvidenceChange,
    GraphChange,
    PathChange,
    ScenarioComparison,
    Verdict,
)
from coordbench.compare.noise import difference
from coordbench.results.document import PART_ORDER, ResultRow, ScenarioEntry

__all__ = [
    "MIN_EFFECT",
    "MIN_RELATIVE",
    "SCORED_PARTS",
    "SINGLE_RUN_NOISE",
    "SINGLE_RUN_RELATIVE",
    "compare_rows",
    "paired_runs",
    "scenario_runs",
]

MIN_EFFECT = 0.01
"""Smallest change of a 0-1 figure called beyond the noise, even when its interval leaves out zero."""
MIN_RELATIVE = 0.10
"""Smallest relative change of a time called beyond the noise, even when its interval leaves out zero."""
SINGLE_RUN_NOISE = 0.03
"""With one run on a side: the change of a 0-1 figure beyond which it counts (the busy-machine tolerance)."""
SINGLE_RUN_RELATIVE = 0.25
"""With one run on a side: the relative change of a time beyond which it counts."""
SCORED_PARTS = tuple(p for p in PART_ORDER if p != "outcome")
"""The coordination parts compared (the outcome part is the answer quality)."""

_SINGLE_RUN_NOTE = (
    "One run on a side: no interval can be given (n/a). A change counts as beyond the noise only past "
    f"{SINGLE_RUN_NOISE} (0-1 figures) or {SINGLE_RUN_RELATIVE:.0%} (times); run the scenarios "
    "several times (config `repeats`) for intervals."
)


@dataclass(frozen=True, slots=True)
class _Figure:
    name: str
    read: Callable[[ScenarioEntry], float | None]
    higher_is_better: bool = True
    time: bool = False
    scored: bool = True


def _part(name: str) -> Callable[[ScenarioEntry], float | None]:
    def read(entry: ScenarioEntry) -> float | None:
        coordination = entry.coordination()
        part = coordination.parts.get(name) if coordination is not None else None
        return part.value if part is not None else None

    return read


def _critical_path(entry: ScenarioEntry) -> float | None:
    latency = entry.latency()
    return latency.critical_path_ms if latency is not None else None


def _centralisation(entry: ScenarioEntry) -> float | None:
    graph = entry.graph()
    value = graph.metrics.get("degree_centralisation") if graph is not None else None
    return float(value) if isinstance(value, int | float) else None


def _hub_share(entry: ScenarioEntry) -> float | None:
    graph = entry.graph()
    return graph.detections.busiest_share if graph is not None else None


_FIGURES: tuple[_Figure, ...] = (  # score, answer and coordination first: the overall figures too
    _Figure("score", lambda e: e.score),
    _Figure("answer", lambda e: e.answer_quality),
    _Figure("coordination", lambda e: e.coordination_quality),
    *(_Figure(name, _part(name)) for name in SCORED_PARTS),
    _Figure("critical_path_ms", _critical_path, higher_is_better=False, time=True, scored=False),
    _Figure("centralisation", _centralisation, higher_is_better=False, scored=False),
    _Figure("hub_share", _hub_share, higher_is_better=False, scored=False),
)
FIGURES = tuple(f.name for f in _FIGURES)
"""Every figure a scenario comparison holds (besides ``latency:<agent>``), in order."""


def _verdict(delta: Delta, *, time: bool) -> Verdict:
    if delta.change is None or delta.base is None:
        return "unchanged"
    size = abs(delta.change)
    if time:
        base = abs(delta.base)
        enough = size >= (MIN_RELATIVE if delta.interval is not None else SINGLE_RUN_RELATIVE) * base and size > 0
    else:
        enough = size >= (MIN_EFFECT if delta.interval is not None else SINGLE_RUN_NOISE)
    if delta.interval is not None:
        low, high = delta.interval
        enough = enough and (high < 0 or low > 0)
    if not enough:
        return "unchanged"
    worse = delta.change < 0 if delta.higher_is_better else delta.change > 0
    return "regression" if worse else "improvement"


def _delta(
    name: str,
    base: Sequence[float],
    head: Sequence[float],
    *,
    higher: bool = True,
    time: bool = False,
    scored: bool = True,
) -> Delta:
    if not base or not head:
        mean_base = sum(base) / len(base) if base else None
        mean_head = sum(head) / len(head) if head else None
        return Delta(name=name, base=mean_base, head=mean_head, change=None, runs=(len(base), len(head)),
                     higher_is_better=higher, scored=scored)  # fmt: skip
    found = difference(base, head)
    delta = Delta(
        name=name,
        base=found.base,
        head=found.head,
        change=found.change,
        relative=found.change / found.base if found.base else None,
        interval=found.interval,
        p_value=found.p_value,
        runs=found.runs,
        higher_is_better=higher,
        scored=scored,
    )
    return delta.model_copy(update={"verdict": _verdict(delta, time=time)})


def _values(entries: Iterable[ScenarioEntry], read: Callable[[ScenarioEntry], float | None]) -> list[float]:
    return [v for v in (read(e) for e in entries) if v is not None]


def _fired(entries: Sequence[ScenarioEntry]) -> tuple[Counter[str], dict[str, set[str]]]:
    """How many runs each piece of evidence fired in, and the agents its part named."""
    runs: Counter[str] = Counter()
    agents: dict[str, set[str]] = {}
    for entry in entries:
        coordination = entry.coordination()
        if coordination is None:
            continue
        for evidence in dict.fromkeys(coordination.fired):
            runs[evidence] += 1
            part = coordination.parts.get(evidence.split(".", 1)[0])
            agents.setdefault(evidence, set()).update(part.agents if part is not None else ())
    return runs, agents


def _evidence(one: Sequence[ScenarioEntry], other: Sequence[ScenarioEntry]) -> list[EvidenceChange]:
    """Evidence that fired in some of ``one``'s runs and in none of ``other``'s."""
    fired, agents = _fired(one)
    never, _ = _fired(other)
    return [
        EvidenceChange(evidence=name, runs=(count, len(one)), agents=sorted(agents[name]))
        for name, count in sorted(fired.items())
        if name not in never
    ]


def _causes(entries: Sequence[ScenarioEntry]) -> Counter[tuple[str, str]]:
    """In how many runs attribution named each cause of failure: ``(cause.<rule>, agent)``."""
    found: Counter[tuple[str, str]] = Counter()
    for entry in entries:
        blamed = entry.attribution
        if blamed is not None and blamed.agent is not None and blamed.rule is not None:
            found[(f"cause.{blamed.rule}", blamed.agent)] += 1
    return found


def _new_causes(base: Sequence[ScenarioEntry], head: Sequence[ScenarioEntry]) -> list[EvidenceChange]:
    """Causes of failure the head's runs were attributed and no base run was (the same rule on the same agent)."""
    before = _causes(base)
    return [
        EvidenceChange(evidence=cause, runs=(count, len(head)), agents=[agent])
        for (cause, agent), count in sorted(_causes(head).items())
        if (cause, agent) not in before
    ]


def _graph(base: Sequence[ScenarioEntry], head: Sequence[ScenarioEntry]) -> GraphChange:
    def shape(entries: Sequence[ScenarioEntry]) -> tuple[set[str], set[str], str | None]:
        agents: set[str] = set()
        edges: set[str] = set()
        hubs: Counter[str] = Counter()
        for entry in entries:
            graph = entry.graph()
            if graph is None:
                continue
            agents |= {a.name for a in graph.agents} - set(graph.hosts)
            edges |= {f"{e.caller} -> {e.callee}" for e in graph.edges}
            if graph.detections.busiest_agent is not None:
                hubs[graph.detections.busiest_agent] += 1
        hub = min(hubs, key=lambda name: (-hubs[name], name)) if hubs else None
        return agents, edges, hub

    agents_base, edges_base, hub_base = shape(base)
    agents_head, edges_head, hub_head = shape(head)
    return GraphChange(
        agents_added=sorted(agents_head - agents_base),
        agents_gone=sorted(agents_base - agents_head),
        edges_added=sorted(edges_head - edges_base),
        edges_gone=sorted(edges_base - edges_head),
        hub_base=hub_base,
        hub_head=hub_head,
    )


def _on_path(entries: Sequence[ScenarioEntry]) -> set[str]:
    """Calls on the critical path of most runs."""
    seen: Counter[str] = Counter()
    runs = 0
    for entry in entries:
        latency = entry.latency()
        if latency is not None:
            runs += 1
            seen.update(set(latency.critical_path_calls))
    return {call for call, count in seen.items() if count * 2 > runs}


def _latencies(base: Sequence[ScenarioEntry], head: Sequence[ScenarioEntry]) -> list[Delta]:
    def per_agent(entries: Sequence[ScenarioEntry]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for entry in entries:
            latency = entry.latency()
            for agent, figures in (latency.agents if latency is not None else {}).items():
                if figures.handled.p50_ms is not None:
                    found.setdefault(agent, []).append(figures.handled.p50_ms)
        return found

    before, after = per_agent(base), per_agent(head)
    return [
        _delta(f"latency:{agent}", before.get(agent, []), after.get(agent, []), higher=False, time=True, scored=False)
        for agent in sorted(set(before) | set(after))
    ]


def _scenario(name: str, base: Sequence[ScenarioEntry], head: Sequence[ScenarioEntry]) -> ScenarioComparison:
    deltas = [
        _delta(f.name, _values(base, f.read), _values(head, f.read), higher=f.higher_is_better, time=f.time,
               scored=f.scored)
        for f in _FIGURES
    ]  # fmt: skip
    path_base, path_head = _on_path(base), _on_path(head)
    return ScenarioComparison(
        scenario=name,
        runs=(len(base), len(head)),
        deltas=deltas + _latencies(base, head),
        evidence_new=_evidence(head, base),
        evidence_cleared=_evidence(base, head),
        causes_new=_new_causes(base, head),
        graph=_graph(base, head),
        critical_path=PathChange(joined=sorted(path_head - path_base), left=sorted(path_base - path_head)),
        trace_ids=([e.trace_id for e in base if e.trace_id], [e.trace_id for e in head if e.trace_id]),
    )


TRACE_SCENARIO = "trace"
"""The name a plain trace's whole-trace scenario is compared under (it is named after its trace: one per side)."""


def trace_row(row: ResultRow, trace_id: str) -> ResultRow:
    """A trace's row with its whole-trace scenario (named after the trace) renamed :data:`TRACE_SCENARIO`.

    Two runs of one team are two traces: renamed so, their whole-trace scenarios pair up.
    """
    scenarios = [e.model_copy(update={"id": TRACE_SCENARIO}) if e.id == trace_id else e for e in row.detail.scenarios]
    return row.model_copy(update={"detail": row.detail.model_copy(update={"scenarios": scenarios})})


def scenario_runs(rows: Sequence[ResultRow]) -> dict[str, list[ScenarioEntry]]:
    """Each scenario's evaluated runs, in order (an entry the assessor could not evaluate is no run)."""
    runs: dict[str, list[ScenarioEntry]] = {}
    for row in rows:
        for entry in row.detail.scenarios:
            if entry.status != "failed" and entry.score_components is not None:
                runs.setdefault(entry.run_of, []).append(entry)
    return runs


def paired_runs(
    base: Sequence[ResultRow], head: Sequence[ResultRow]
) -> tuple[list[tuple[str, list[ScenarioEntry], list[ScenarioEntry]]], list[str], list[str]]:
    """The scenarios both sides ran, with each side's runs; then the scenarios only one side ran.

    When each side ran exactly one scenario and their ids differ (two single traces), those two
    are paired, as ``<base id> vs <head id>``.
    """
    runs_base, runs_head = scenario_runs(base), scenario_runs(head)
    pairs = [(name, runs_base[name], runs_head[name]) for name in runs_base if name in runs_head]
    if not pairs and len(runs_base) == 1 and len(runs_head) == 1:
        (name_base, entries_base), (name_head, entries_head) = (*runs_base.items(), *runs_head.items())
        return [(f"{name_base} vs {name_head}", entries_base, entries_head)], [], []
    return pairs, [n for n in runs_base if n not in runs_head], [n for n in runs_head if n not in runs_base]


def _overall(rows: Sequence[ResultRow]) -> dict[str, list[float]]:
    """The overall score, answer and coordination qualities of every run (a row's repeats are runs of their own)."""
    values: dict[str, list[float]] = {"score": [], "answer": [], "coordination": []}
    for row in rows:
        by_repeat: dict[int, list[ScenarioEntry]] = {}
        for entry in row.detail.scenarios:
            if entry.status != "failed" and entry.score_components is not None:
                by_repeat.setdefault(entry.repeat or 0, []).append(entry)
        for entries in by_repeat.values():
            for figure in _FIGURES[:3]:
                found = _values(entries, figure.read)
                if found:
                    values[figure.name].append(sum(found) / len(found))
    return values


def compare_rows(
    base: Sequence[ResultRow], head: Sequence[ResultRow], *, base_label: str, head_label: str
) -> Comparison:
    """Compare the runs in ``base`` with those in ``head``.

    Args:
        base: The rows of the baseline (one per assessment, or shard).
        head: The rows of the change.
        base_label: What the base is, in words (its paths, say).
        head_label: What the head is.

    Returns:
        The comparison; scenarios both sides ran are compared. When each side ran exactly one
        scenario and their ids differ (two single traces), those two are compared.
    """
    runs_base, runs_head = scenario_runs(base), scenario_runs(head)
    pairs = [(name, runs_base[name], runs_head[name]) for name in runs_base if name in runs_head]
    only_base = [n for n in runs_base if n not in runs_head]
    only_head = [n for n in runs_head if n not in runs_base]
    if not pairs and len(runs_base) == 1 and len(runs_head) == 1:
        (name_base, entries_base), (name_head, entries_head) = (
            next(iter(runs_base.items())),
            next(iter(runs_head.items())),
        )
        pairs, only_base, only_head = [(f"{name_base} vs {name_head}", entries_base, entries_head)], [], []
    scenarios = [_scenario(name, b, h) for name, b, h in pairs]
    overall_base, overall_head = _overall(base), _overall(head)
    overall = [_delta(f.name, overall_base[f.name], overall_head[f.name]) for f in _FIGURES[:3]]
    notes: list[str] = []
    if any(d.interval is None and d.change is not None for s in scenarios for d in s.deltas) or any(
        d.interval is None and d.change is not None for d in overall
    ):
        notes.append(_SINGLE_RUN_NOTE)
    if not scenarios:
        notes.append("The two sides ran no scenario in common: nothing to compare.")
    return Comparison(
        base=base_label,
        head=head_label,
        overall=overall,
        scenarios=scenarios,
        only_base=only_base,
        only_head=only_head,
        notes=notes,
    )
