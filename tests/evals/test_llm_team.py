"""The score on a team whose members write with a real model (a small one, served locally), not by rule.

The bundled purple roles write rule-based text; the judgements must hold on model-written text
too. Each member of the demo's star team asks the local model for its contribution
(``PURPLE_LLM_*``), as its own process, assessed through a real green with no content captured
beyond what the instrumentation records by default (fingerprints). Checked:

- the report agrees with its figures (:mod:`support.consistency`);
- the relation holds on model text: the same team with its writer left out of the work, though
  the task names it, scores below the full team, and the writer is named as needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coordbench.demo import run_demo
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.purple import load_team
from support.consistency import contradictions

pytestmark = [pytest.mark.llm, pytest.mark.slow]

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"
CONFIG: dict[str, Any] = {
    "scenarios": [
        {
            "id": "launch",
            "task": "Plan the launch of the mobile app with the researcher, the analyst and the writer. "
            "The budget is 40,000 and the deadline is 2026-12-01.",
            "references": ["Owners, a dated timeline, the budget, and the risks."],
        }
    ],
    "trace_quiet": 0.5,
    "trace_timeout": 60,
    "timeout": 1200,
}


def test_a_model_written_team_is_judged_consistently(
    local_llm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    monkeypatch.setenv("PURPLE_LLM_BASE_URL", local_llm)
    monkeypatch.setenv("PURPLE_LLM_API_KEY", "local")
    monkeypatch.setenv("PURPLE_LLM_MODEL", "qwen2.5-coder-0.5b")
    monkeypatch.setenv("PURPLE_LLM_TIMEOUT", "1200")  # one slot: the members' calls queue at the server
    monkeypatch.setenv("PURPLE_CALL_TIMEOUT", "1200")  # and the coordinator waits for the queue (a busy machine)
    monkeypatch.setenv("PURPLE_LLM_MAX_TOKENS", "96")  # short parts: the model has one slot on two cores
    star = load_team(TEAMS / "star.toml")
    members = [
        m.model_copy(update={"delegates": [d for d in m.delegates if d != "writer"]}) if m.name == "coordinator" else m
        for m in star.members
    ]
    left_out = star.model_copy(update={"name": "star-left-out", "members": members})
    rows: dict[str, dict[str, Any]] = {}
    for label, team in (("star", star), ("star-left-out", left_out)):  # one at a time: the server has one slot
        (result,) = run_demo(tmp_path / label, teams=[(label, team, [])], config=CONFIG).teams
        assert result.ok, (label, result.state, result.error)
        assert result.report is not None
        assert contradictions(result.row, result.report.read_text(encoding="utf-8")) == [], label
        rows[label] = result.row
    full, fewer = (rows[k]["detail"]["scenarios"][0] for k in ("star", "star-left-out"))
    # the members wrote with the model (LLM steps), not by rule
    assert "qwen2.5-coder-0.5b" in full["outcome"]["output"]
    why = {k: (e["score"], e["results"]["coordination"]["fired"]) for k, e in (("full", full), ("fewer", fewer))}
    assert fewer["score"] < full["score"], why
    spare = fewer["results"]["coordination"]["parts"]["participation"]
    assert "idle_members" in spare["fired"] and spare["agents"] == ["writer"]  # the task named it: needed
