"""The score's judgements on live teams: every member its own process, assessed through a real green.

Every report these runs produce is also read against its figures (:mod:`support.consistency`):
no sentence or drawing contradicts a number, for every demo shape and every fault team.

- **A dead member is a failure, never an absence.** The star team with its writer SIGKILLed
  before the assessment never scores above the same star whose writer answers "failed", nor
  above the star that simply left the writer out of the work; the results name the writer as
  down.
- **A busy machine does not change the verdict.** Every demo shape, run quietly and then beside
  two CPU-bound processes, scores within 0.03 of its quiet run, and no evidence fires under load
  that did not fire quietly.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from coordbench.a2a import Messenger
from coordbench.demo import run_demo, shaped_teams
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.purple import load_team
from coordbench.purple.launcher import Fleet
from coordbench.purple.team import Team
from support.commands import ServerProcess
from support.consistency import contradictions

pytestmark = pytest.mark.slow

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"
CONFIG: dict[str, Any] = {
    "scenarios": [
        {
            "id": "launch",
            "task": "Plan the launch of the mobile app. The budget is 40,000 and the deadline is 2026-12-01.",
            "references": ["Owners, a dated timeline, the budget, and the risks."],
        }
    ],
    "trace_quiet": 0.5,
    "trace_timeout": 10,
    "timeout": 120,
}
TOLERANCE = 0.03
"""How far a busy machine may move a team's score (issue 31)."""


def _env(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k != LLM_API_KEY_ENV and not k.startswith("OTEL_")}


def _left_out(star: Team) -> Team:
    """The star whose coordinator never hands the writer any work (the writer still runs, declared)."""
    members = [
        m.model_copy(update={"delegates": [d for d in m.delegates if d != "writer"]}) if m.name == "coordinator" else m
        for m in star.members
    ]
    return star.model_copy(update={"name": "star-left-out", "members": members})


async def _assess(green: str, participants: dict[str, str], team: str) -> dict[str, Any]:
    request = {"participants": participants, "config": {**CONFIG, "team": team}}
    async with Messenger(timeout=600) as messenger:
        reply = await messenger.send(green, json.dumps(request), new_conversation=True)
    assert reply.state == "completed", reply.text
    row = json.loads(json.dumps(reply.data[0]))
    scenario = row["detail"]["scenarios"][0]
    assert scenario["status"] == "evaluated", scenario["error"]
    return row


def test_a_dead_member_counts_as_a_failure_never_as_an_absence(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    env = _env(subprocess_env)
    star = load_team(TEAMS / "star.toml")
    teams = [
        ("star-down", star.model_copy(update={"name": "star-down"})),
        ("star-failing", load_team(TEAMS / "star-failing.toml")),
        ("star-left-out", _left_out(star)),
    ]
    green = ServerProcess("green", "--output-dir", str(tmp_path / "green"), env=env)
    try:
        with Fleet(teams, endpoint=green.url, env=env, log_dir=tmp_path / "logs") as fleet:
            urls = fleet.start()
            writer = fleet.members[("star-down", "writer")]
            writer.kill()  # crashed before the assessment: its card cannot be read, its calls are refused

            async def all_three() -> list[dict[str, Any]]:
                return list(await asyncio.gather(*(_assess(green.url, urls[label], label) for label, _ in teams)))

            down, failing, left_out = asyncio.run(all_three())
            for row in (down, failing, left_out):
                page = httpx.get(f"{green.url}/reports/{row['assessment_id']}", timeout=30)
                page.raise_for_status()
                assert contradictions(row, page.text) == [], row["assessment_id"]
    finally:
        green.stop()
    score = {label: row["score"] for (label, _), row in zip(teams, (down, failing, left_out), strict=True)}
    assert down["score"] <= failing["score"], score
    assert down["score"] <= left_out["score"], score
    assert down["score"] < left_out["score"], "a crashed member must cost more than one left idle"
    parts = down["detail"]["scenarios"][0]["results"]["coordination"]["parts"]
    assert "members_down" in parts["robustness"]["fired"] and "writer" in parts["robustness"]["evidence"][0]
    assert "members_down" in parts["efficiency"]["fired"]
    assert "idle_members" in parts["participation"]["fired"] and "writer" in parts["participation"]["agents"]
    # the writer left out is declared but nothing asked for it: half a member, named as unused
    spare = left_out["detail"]["scenarios"][0]["results"]["coordination"]["parts"]["participation"]
    assert "unused_members" in spare["fired"] and spare["agents"] == ["writer"], spare


@contextmanager
def _busy(n: int = 2) -> Iterator[list[subprocess.Popen[bytes]]]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _verdicts(run_dir: Path, **kwargs: Any) -> dict[str, tuple[float, set[str]]]:
    run = run_demo(run_dir, teams=shaped_teams(), config=CONFIG, **kwargs)
    verdicts: dict[str, tuple[float, set[str]]] = {}
    for team in run.teams:
        assert team.ok, (team.shape, team.state, team.error)
        assert team.report is not None
        assert contradictions(team.row, team.report.read_text(encoding="utf-8")) == [], team.shape
        scenario = team.row["detail"]["scenarios"][0]
        verdicts[team.shape] = (scenario["score"], set(scenario["results"]["coordination"]["fired"]))
    return verdicts


def test_a_busy_machine_does_not_change_the_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LLM_API_KEY_ENV, raising=False)
    quiet = _verdicts(tmp_path / "quiet")
    with _busy():
        loaded = _verdicts(tmp_path / "loaded")
    report = {shape: (quiet[shape][0], loaded[shape][0]) for shape in quiet}
    for shape, (score, fired) in quiet.items():
        busy_score, busy_fired = loaded[shape]
        assert abs(busy_score - score) <= TOLERANCE, (shape, report)
        assert busy_fired <= fired, f"{shape}: fired only under load: {sorted(busy_fired - fired)}"
