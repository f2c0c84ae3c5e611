"""The shapes agent frameworks produce, live: a ReAct orchestrator, a group chat with a manager, a handoff chain.

Every member its own process, assessed through a real green, traced by the drop-in
instrumentation as installed (fingerprints, no captured text). Each of these teams calls one
member at a time and decides each call on the last answer (a step of its own that records what
it read, and a request that carries it on), so none may be faulted for running in order, and the
trace must hold together (every call matched, complete).

- By rule: the decisions are the rules' TOOL steps.
- Through a real model (the local one, :mod:`coordbench.localmodel`): every member writes its
  part with the model, and the deciding members let it pick whom to ask next (LLM steps with
  their prompt's and answer's fingerprints).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coordbench.demo import run_demo, shaped_teams
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.purple.shapes import FRAMEWORK_SHAPES
from support.consistency import contradictions

pytestmark = pytest.mark.slow

SCENARIOS = json.loads((Path(__file__).parent.parent.parent / "data" / "scenarios.json").read_text())["scenarios"]
CONFIG: dict[str, Any] = {
    "scenarios": [s for s in SCENARIOS if s["id"] == "incident-triage"],  # the bundled triage: material to work on
    "trace_quiet": 0.5,
    "trace_timeout": 60,
    "timeout": 1800,
}
NEVER = {"parallelism.serialised_work", "participation.unused_members", "participation.idle_members",
         "efficiency.relay_hops", "information_flow.relays_add_nothing", "robustness.unverified_calls",
         "robustness.incomplete_trace", "robustness.failed_calls"}  # fmt: skip


def _judged(tmp_path: Path, size: int, select: str) -> dict[str, dict[str, Any]]:
    run = run_demo(tmp_path, teams=shaped_teams(FRAMEWORK_SHAPES, size, select=select), config=CONFIG)  # pyright: ignore[reportArgumentType]
    entries: dict[str, dict[str, Any]] = {}
    for team in run.teams:
        assert team.ok, (team.shape, team.state, team.error)
        assert team.report is not None
        assert contradictions(team.row, team.report.read_text(encoding="utf-8")) == [], team.shape
        entries[team.shape] = team.row["detail"]["scenarios"][0]
    return entries


def _check(entries: dict[str, dict[str, Any]]) -> None:
    for shape, entry in entries.items():
        coordination = entry["results"]["coordination"]
        assert entry["trace_complete"] is True, (shape, entry["completeness"])
        assert not NEVER & set(coordination["fired"]), (shape, coordination["fired"])
        assert coordination["parts"]["parallelism"]["value"] == 1.0, (shape, coordination["parts"]["parallelism"])


def test_framework_shapes_by_rule_are_judged_without_false_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    entries = _judged(tmp_path, 3, "order")
    _check(entries)
    # the ReAct orchestrator asked its workers one at a time, each after the last had answered
    calls = entries["react"]["results"]["graph"]["edges"]
    assert {(e["caller"], e["callee"]) for e in calls} >= {
        ("coordinator", w) for w in ("researcher", "analyst", "writer")
    }


@pytest.mark.llm
def test_framework_shapes_thinking_through_a_model_are_judged_without_false_flags(
    local_llm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    monkeypatch.setenv("PURPLE_LLM_BASE_URL", local_llm)
    monkeypatch.setenv("PURPLE_LLM_API_KEY", "local")
    monkeypatch.setenv("PURPLE_LLM_MODEL", "qwen2.5-coder-0.5b")
    monkeypatch.setenv("PURPLE_LLM_TIMEOUT", "1800")  # one slot: the members' calls queue at the server
    monkeypatch.setenv("PURPLE_CALL_TIMEOUT", "1800")
    monkeypatch.setenv("PURPLE_LLM_MAX_TOKENS", "48")  # short parts: the model has one slot on two cores
    entries = _judged(tmp_path, 2, "model")
    _check(entries)
    for shape, entry in entries.items():
        assert "qwen2.5-coder-0.5b" in entry["outcome"]["output"], shape  # the members wrote with the model
