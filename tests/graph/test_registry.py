"""Metric plugins: discovery through entry points, selection, failures, a third-party package."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from coordbench import plugins
from coordbench.errors import ConfigurationError
from coordbench.graph import evaluate_graph
from coordbench.graph.metrics import available_metrics, select_metrics
from support.spans import call, sid

BUILT_IN = {
    "betweenness_centrality",
    "betweenness_centralisation",
    "closeness_centrality",
    "clustering",
    "connected_components",
    "critical_path",
    "degree_centralisation",
    "degree_centrality",
    "density",
    "eigenvector_centrality",
    "flow_betweenness_centrality",
    "pagerank",
    "parallelism",
    "path_lengths",
    "reciprocity",
    "redundancy",
    "workload",
}


def test_built_ins_register_through_entry_points() -> None:
    assert set(available_metrics()) >= BUILT_IN


def test_selection_by_name() -> None:
    assert [m.name for m in select_metrics(enabled=["density", "pagerank"])] == ["density", "pagerank"]
    assert "pagerank" not in {m.name for m in select_metrics(disabled=["pagerank"])}
    with pytest.raises(ConfigurationError, match="unknown metric\\(s\\): nope, zzz; available: betweenness"):
        select_metrics(enabled=["density", "nope"], disabled=["zzz"])


def test_a_failing_metric_is_reported_not_raised() -> None:
    from coordbench.graph.metrics import Metric

    def explode(_inputs: object) -> None:
        raise ZeroDivisionError("bad plugin")

    metrics = [*select_metrics(enabled=["density"]), Metric("explodes", explode, "fails", "directed")]
    result = evaluate_graph([call("A", "B", span_id=sid(1))], metrics=metrics)
    assert result.metrics == {"density": 0.5}
    assert result.metric_errors == {"explodes": "ZeroDivisionError: bad plugin"}
    assert result.label == "high_coordination"


@pytest.mark.slow
def test_third_party_plugin_without_touching_coordbench(
    plugin_site: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.syspath_prepend(str(plugin_site))
    plugins.refresh()  # another test may have scanned this path already (and logged the warnings then)
    with caplog.at_level(logging.WARNING, logger="coordbench.plugins"):
        found = available_metrics()
    assert "hub_ratio" in found
    assert "broken" not in found and "not_a_metric" not in found
    assert (
        "plugin 'broken' (coordbench_example_metric:DOES_NOT_EXIST) of coordbench.metrics failed to load" in caplog.text
    )
    assert (
        "plugin 'not_a_metric' (coordbench_example_metric:NOT_A_METRIC) is not a valid coordbench.metrics plugin"
        in caplog.text
    )
    spans = [call("A", "B", span_id=sid(1)), call("A", "C", span_id=sid(2)), call("B", "C", span_id=sid(3))]
    result = evaluate_graph(spans, metrics=select_metrics(enabled=["hub_ratio", "density"]))
    assert result.metrics["hub_ratio"] == pytest.approx(2 / 3)  # A sends 2 of the 3 messages
    assert result.metric_info["hub_ratio"].edge_model == "directed"
