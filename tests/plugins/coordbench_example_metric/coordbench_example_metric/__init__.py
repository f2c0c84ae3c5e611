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


# --- an example third-party evaluator -------------------------------------------------------

from pydantic import BaseModel  # noqa: E402

from coordbench.evals import TIER_TEXT, EvalContext, Evaluator, ProtocolResult  # noqa: E402


class Busiest(BaseModel):
    """Who received most messages, according to the protocol evaluator's earlier result."""

    agent: str | None
    requests: int


class BusiestAgent(Evaluator):
    """Reads an earlier tier's result from the context, as plugins may."""

    name = "busiest_agent"
    tier = TIER_TEXT
    description = "The agent that received the most messages."

    async def evaluate(self, ctx: EvalContext) -> Busiest:
        protocol = ctx.result("protocol", ProtocolResult)
        if protocol is None or not protocol.agents:
            return Busiest(agent=None, requests=0)
        name, figures = max(sorted(protocol.agents.items()), key=lambda item: item[1].requests)
        return Busiest(agent=name, requests=figures.requests)


class Broken(Evaluator):
    """Always fails: the pipeline must report it and go on."""

    name = "broken_evaluator"
    tier = 1

    async def evaluate(self, ctx: EvalContext) -> Busiest:
        raise RuntimeError("this evaluator always fails")
