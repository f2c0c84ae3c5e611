"""An example third-party metric: the share of messages the busiest sender sends."""

from coordbench.graph.metrics import Metric, MetricInput


def hub_ratio(inputs: MetricInput) -> float:
    """Messages sent by the agent that sends most, over all messages (0 without messages)."""
    graph = inputs.graph
    sent = {n: sum(c for *_, c in graph.out_edges(n, data="count", default=1)) for n in graph}
    total = sum(sent.values())
    return max(sent.values()) / total if total else 0.0


HUB_RATIO = Metric("hub_ratio", hub_ratio, "Share of messages sent by the busiest sender.", "directed")


def NOT_A_METRIC() -> None:
    """Registered as a metric, but it is a function: coordbench skips it with a warning."""
