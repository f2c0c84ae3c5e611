"""Ground truth end to end: each labelled pattern as real OTLP bytes through the running receiver."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from conftest import Backend
from coordbench.evals.groundtruth import check_scenario, load_ground_truth, pattern_spans
from coordbench.graph import evaluate_graph
from coordbench.otlp import export_request
from coordbench.spans import span_from_dict

DATA = Path(__file__).parents[2] / "data" / "ground_truth.json"


def test_every_scenario_through_the_receiver(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    truth = load_ground_truth(DATA)
    labels = {s.label for s in truth.scenarios}
    assert len(truth.scenarios) >= 12
    assert labels == {"high_coordination", "medium_coordination", "low_coordination", "bottleneck", "partial_isolation"}
    correct = 0
    failures = []
    for scenario in truth.scenarios:
        spans = pattern_spans(scenario.interaction_pattern, scenario_id=scenario.id)
        body = export_request(spans).SerializeToString()
        response = httpx.post(
            f"{backend.url}/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"}
        )
        assert response.status_code == 200
        stored = httpx.get(
            f"{backend.url}/v1/traces/{spans[0].trace_id}", params={"wait": 10, "quiet": 0.05}, timeout=20
        )
        document = stored.json()
        assert document["completeness"]["complete"], scenario.id
        received = [span_from_dict(s) for s in document["spans"]]
        assert len(received) == len(spans)
        result = evaluate_graph(received, declared_agents=scenario.interaction_pattern.agents)
        check = check_scenario(scenario, result)
        correct += check.label_ok
        if not check.ok:
            failures.append((scenario.id, check.expected_label, check.predicted_label, check.mismatches))
    with capsys.disabled():
        print(f"\nground truth: classification accuracy {correct}/{len(truth.scenarios)}")
    assert failures == []
    assert correct == len(truth.scenarios)


def test_cli_prints_the_table_and_accuracy() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "coordbench", "groundtruth", str(DATA)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "classification accuracy: 16/16 = 100.0%" in result.stdout
    assert "medium_tree_7" in result.stdout


def test_cli_exits_1_when_a_label_disagrees(tmp_path: Path) -> None:
    text = DATA.read_text().replace('"label": "bottleneck"', '"label": "high_coordination"', 1)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "coordbench", "groundtruth", str(wrong)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert "classification accuracy: 15/16" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not valid JSON"),
        ('{"scenarios": []}', "scenarios: List should have at least 1 item"),
        (
            '{"scenarios": [{"id": "x", "label": "great", "interaction_pattern": {"agents": ["a"]}}]}',
            "scenarios.0.label: Input should be",
        ),
        (
            '{"scenarios": [{"id": "x", "label": "bottleneck", "interaction_pattern": '
            '{"agents": ["a"], "edges": [{"from": "a", "to": "b"}]}}]}',
            "'b' is not in agents",
        ),
    ],
)
def test_cli_bad_files_exit_2_with_the_reason(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = subprocess.run(
        [sys.executable, "-m", "coordbench", "groundtruth", str(bad)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())
