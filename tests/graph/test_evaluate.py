"""evaluate_graph end to end: result shape, hosts left out, determinism down to the byte."""

from __future__ import annotations

import random

import pytest

from coordbench.evals.groundtruth import load_ground_truth, pattern_spans
from coordbench.graph import evaluate_graph
from coordbench.graph.metrics import Thresholds
from support.spans import call, serve, sid, span


def test_hosts_do_not_count_as_a_hub() -> None:
    spans = [span("invoke_workflow assess", span_id=sid(1), service="green", a2a__step__call_type="HOST")]
    for i, agent in enumerate(["p1", "p2", "p3"]):  # the assessor hands each participant its task
        spans.append(call("green", agent, parent=sid(1), span_id=sid(10 + i)))
        spans.append(serve(agent, parent=sid(10 + i), span_id=sid(20 + i)))
    spans.append(call("svc-p1", "p2", parent=sid(20), span_id=sid(30)))  # p1 consults p2
    result = evaluate_graph(spans)
    assert result.hosts == ["green"]
    assert [a.name for a in result.agents if a.role == "agent"] == ["p1", "p2", "p3"]
    assert result.interactions == 1
    assert result.detections.isolated_agents == ["p3"]
    assert result.label == "partial_isolation"


def test_thresholds_are_configurable() -> None:
    spans = [call("hub", x, span_id=sid(i + 1)) for i, x in enumerate("abc")]
    assert evaluate_graph(spans).classification == "bottleneck"
    lenient = Thresholds(bottleneck_betweenness=1.0)
    assert evaluate_graph(spans, thresholds=lenient).classification == "medium"


def test_same_spans_give_byte_identical_json_whatever_their_order() -> None:
    truth = load_ground_truth("data/ground_truth.json")
    for scenario in truth.scenarios[:6]:
        spans = pattern_spans(scenario.interaction_pattern, scenario_id=scenario.id)
        reference = evaluate_graph(spans).to_json()
        for seed in range(3):
            shuffled = list(spans)
            random.Random(seed).shuffle(shuffled)
            assert evaluate_graph(shuffled).to_json() == reference


def test_calls_an_agent_makes_to_itself_are_not_coordination() -> None:
    """A calls itself, then B, and B calls A back; C only ever calls itself.

    Worked by hand on the agent graph without the loops (A → B, B → A; C alone):
    2 interactions, density 2 / (3 · 2) = 1/3 over the three agents but 2 / (2 · 1) = 1 over
    the two that interact, A and B each in 2 of 2 messages, and C isolated. With the loops
    counted, density came out 1.5 and A's share 4/3, and C was not isolated.
    """
    spans = [span("invoke_workflow assess", span_id=sid(1), service="green", a2a__step__call_type="HOST")]
    spans += [call("green", "A", parent=sid(1), span_id=sid(10)), serve("A", parent=sid(10), span_id=sid(11))]
    spans += [call("svc-A", "A", parent=sid(11), span_id=sid(12)), serve("A", parent=sid(12), span_id=sid(13))]
    spans += [call("svc-A", "B", parent=sid(13), span_id=sid(14)), serve("B", parent=sid(14), span_id=sid(15))]
    spans += [call("svc-B", "A", parent=sid(15), span_id=sid(16)), serve("A", parent=sid(16), span_id=sid(17))]
    spans += [call("green", "C", parent=sid(1), span_id=sid(20)), serve("C", parent=sid(20), span_id=sid(21))]
    spans += [call("svc-C", "C", parent=sid(21), span_id=sid(22)), serve("C", parent=sid(22), span_id=sid(23))]
    result = evaluate_graph(spans)
    assert result.interactions == 2
    assert result.metrics["density"] == pytest.approx(1 / 3)
    d = result.detections
    assert (d.density, d.busiest_agent, d.busiest_share) == (1.0, "A", 1.0)
    assert d.isolated_agents == ["C"]
    assert result.label == "partial_isolation"
    # the self-calls are still reported as calls, on the edges and the agents
    loops = {(e.caller, e.callee): e.count for e in result.edges if e.caller == e.callee}
    assert loops == {("A", "A"): 1, ("C", "C"): 1}
    assert {a.name: a.calls for a in result.agents}["C"] == 1
