"""evaluate_graph end to end: result shape, hosts left out, determinism down to the byte."""

from __future__ import annotations

import random

from coordbench.graph import evaluate_graph
from coordbench.graph.metrics import Thresholds
from coordbench.groundtruth import load_ground_truth, pattern_spans
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
