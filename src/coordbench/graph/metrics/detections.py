"""Detections and the coordination classification, with their thresholds.

The thresholds are the benchmark's (configurable) defaults:

- **bottleneck**: an agent whose flow betweenness (calls plus replies, see
  :func:`~coordbench.graph.metrics.centrality.flow_betweenness`) exceeds 0.5;
- **isolated**: an agent with no interaction at all (degree 0);
- **over-centralised**: one agent takes part in more than 70% of the messages;
- **healthy distribution**: directed density above 0.3.

Classification of the agents that interacted (isolated agents are flagged, not classified):

1. fewer than two agents interacted → ``low``;
2. one agent is both a bottleneck *and* over-centralised → ``bottleneck`` (a broker on every
   path that also carries most of the traffic; either alone is common in healthy teams:
   every interior agent of a chain brokers, and a pair's agents are in all messages);
3. the interacting agents fall apart into separate groups → ``low`` (silos that never
   exchange anything);
4. healthy density → ``high`` (lateral collaboration); otherwise ``medium`` (a connected
   team with sparse, structured hand-offs: a pipeline or a hierarchy).

Connectivity, not a second density cut-off, separates ``medium`` from ``low``: density is not
size-invariant (a tree has density ``1/n``), so a density floor would call every hierarchy of
seven or more agents "low" while the same shape with five agents is "medium".

The scenario label is ``partial_isolation`` when some (not all) declared agents are isolated,
else ``<classification>_coordination`` (or ``bottleneck``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from coordbench.graph.agentgraph import induced_subgraph
from coordbench.graph.metrics.centrality import flow_betweenness
from coordbench.graph.metrics.distribution import interaction_share
from coordbench.graph.metrics.structure import density

__all__ = ["Classification", "Detections", "Label", "Thresholds", "classify", "detect"]

Classification = Literal["high", "medium", "low", "bottleneck"]
Label = Literal["high_coordination", "medium_coordination", "low_coordination", "bottleneck", "partial_isolation"]


class Thresholds(BaseModel):
    """Detection and classification thresholds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bottleneck_betweenness: float = Field(
        default=0.5, ge=0, le=1, description="Flow betweenness above which an agent brokers."
    )
    over_centralised_share: float = Field(
        default=0.7, ge=0, le=1, description="Share of messages above which one agent dominates."
    )
    healthy_density: float = Field(
        default=0.3, ge=0, le=1, description="Density above which coordination is well distributed."
    )


class Detections(BaseModel):
    """What the thresholds flag.

    Attributes:
        bottleneck_agents: Agents with flow betweenness above the threshold, sorted.
        max_flow_betweenness: Highest flow betweenness (0 with fewer than three agents).
        isolated_agents: Agents with no interaction, sorted.
        over_centralised: One agent takes part in more than the threshold share of messages.
        busiest_agent: That agent (or the busiest one), ``None`` without messages.
        busiest_share: Its share of messages.
        healthy_distribution: Density of the interacting agents above the threshold.
        density: That density.
        groups: Weakly connected groups among the interacting agents.
        interacting_agents: How many agents took part in at least one message.
    """

    model_config = ConfigDict(frozen=True)

    bottleneck_agents: list[str]
    max_flow_betweenness: float
    isolated_agents: list[str]
    over_centralised: bool
    busiest_agent: str | None
    busiest_share: float
    healthy_distribution: bool
    density: float
    groups: int
    interacting_agents: int


def detect(
    G: nx.DiGraph[str], thresholds: Thresholds, *, flow_betweenness_values: Mapping[str, float] | None = None
) -> Detections:
    """Apply the thresholds to the agent graph (hosts already left out).

    ``flow_betweenness_values`` may pass the flow betweenness of ``G`` when already computed
    (it is reused only when no agent is isolated, since the detections read the interacting
    agents).

    Example:
        >>> G = nx.DiGraph([("hub", "a"), ("hub", "b"), ("hub", "c")])
        >>> G.add_node("idle")
        >>> d = detect(G, Thresholds())
        >>> d.bottleneck_agents, d.isolated_agents, d.busiest_agent, d.over_centralised
        (['hub'], ['idle'], 'hub', True)
    """
    isolated = sorted(n for n in G if G.degree(n) == 0)
    # a copy, in the view's order: every measure below walks it, and a subgraph view's filters cost more
    active = induced_subgraph(G, [n for n in G if G.degree(n) > 0])
    if active.number_of_nodes() < 3:
        betweenness = dict.fromkeys(active, 0.0)
    elif flow_betweenness_values is not None and not isolated:
        betweenness = dict(flow_betweenness_values)  # the same graph: every agent interacts
    else:
        betweenness = flow_betweenness(active)
    shares = interaction_share(active) if active.number_of_nodes() >= 2 else {}
    busiest = max(sorted(shares), key=lambda n: shares[n]) if shares else None
    busiest_share = shares[busiest] if busiest is not None else 0.0
    active_density = density(active)
    return Detections(
        bottleneck_agents=sorted(n for n, b in betweenness.items() if b > thresholds.bottleneck_betweenness),
        max_flow_betweenness=max(betweenness.values(), default=0.0),
        isolated_agents=isolated,
        over_centralised=active.number_of_nodes() >= 3 and busiest_share > thresholds.over_centralised_share,
        busiest_agent=busiest,
        busiest_share=busiest_share,
        healthy_distribution=active_density > thresholds.healthy_density,
        density=active_density,
        groups=nx.number_weakly_connected_components(active) if active.number_of_nodes() else 0,
        interacting_agents=active.number_of_nodes(),
    )


def classify(detections: Detections, agents: int) -> tuple[Classification, Label]:
    """The coordination class and the scenario label (rules in the module docstring).

    Args:
        detections: What :func:`detect` found (with the thresholds applied).
        agents: Number of agents in the graph (declared ones included).

    Example:
        >>> G = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("a", "c")])
        >>> classify(detect(G, Thresholds()), 3)
        ('high', 'high_coordination')
    """
    d = detections
    if d.interacting_agents < 2:
        classification: Classification = "low"
    elif d.over_centralised and d.busiest_agent in d.bottleneck_agents:
        classification = "bottleneck"
    elif d.groups > 1:
        classification = "low"
    elif d.healthy_distribution:
        classification = "high"
    else:
        classification = "medium"
    if d.isolated_agents and len(d.isolated_agents) < agents:
        return classification, "partial_isolation"
    label: Label = "bottleneck" if classification == "bottleneck" else f"{classification}_coordination"  # type: ignore[assignment]
    return classification, label
