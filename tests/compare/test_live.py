"""``coordbench compare`` on live purple teams: every member its own process, assessed by a real green.

A star team is run against itself and against four changes of it, each scenario twice
(``repeats``: intervals are measured). The same team again is no regression, with its interval
shown; each change is the matching regression, naming the part and the agents, and ``--fail-on``
exits 1 for it (and 0 for the same team). "Dropping a member" is the writer left out of the work
while it is still on the team (a member removed from the team entirely is no coordination fault).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from coordbench.cli import app
from coordbench.demo import run_demo
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.purple import load_team
from coordbench.purple.team import Member, Team

pytestmark = pytest.mark.slow

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"
CONFIG = {
    "scenarios": [
        {
            "id": "launch",
            "task": "Plan the launch of the mobile app. The budget is 40,000 and the deadline is 2026-12-01.",
            "references": ["Owners, a dated timeline, the budget, and the risks."],
        }
    ],
    "repeats": 2,
    "trace_quiet": 0.5,
    "trace_timeout": 10,
    "timeout": 120,
}


def _variant(star: Team, name: str, members: list[Member]) -> Team:
    return star.model_copy(update={"name": name, "members": members})


def _teams() -> list[tuple[str, Team, list[str]]]:
    star = load_team(TEAMS / "star.toml")
    coordinator, *workers = star.members
    teams = {
        "star": star,
        "star-again": star.model_copy(update={"name": "star-again"}),
        "star-serial": _variant(star, "star-serial", [coordinator.model_copy(update={"mode": "serial"}), *workers]),
        "star-left-out": _variant(
            star, "star-left-out", [coordinator.model_copy(update={"delegates": ["researcher", "analyst"]}), *workers]
        ),
        "star-relay": _variant(
            star,
            "star-relay",
            [
                coordinator.model_copy(update={"delegates": ["relay"]}),
                Member(name="relay", role="relay", delegates=[w.name for w in workers]),
                *workers,
            ],
        ),
        "star-failing": load_team(TEAMS / "star-failing.toml"),
    }
    return [(label, team, []) for label, team in teams.items()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("live")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(LLM_API_KEY_ENV, raising=False)
        run = run_demo(output, teams=_teams(), config=CONFIG)
    for team in run.teams:
        assert team.ok, (team.shape, team.state, team.error)
    return output


def _compare(runs: Path, head: str, *args: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(
        app, ["compare", str(runs / "star" / "results.json"), str(runs / head / "results.json"), "--json", *args]
    )
    return result.exit_code, json.loads(result.stdout), " ".join(result.output.split())


def _scenario(data: dict[str, object]) -> dict[str, object]:
    return data["scenarios"][0]  # type: ignore[index,return-value]


def _deltas(data: dict[str, object]) -> dict[str, dict[str, object]]:
    return {d["name"]: d for d in _scenario(data)["deltas"]}  # type: ignore[index,union-attr,misc]


def _new(data: dict[str, object]) -> dict[str, list[str]]:
    return {e["evidence"]: e["agents"] for e in _scenario(data)["evidence_new"]}  # type: ignore[index,union-attr,misc]


def test_the_same_team_twice_is_no_regression_with_its_interval(runs: Path) -> None:
    code, data, _ = _compare(runs, "star-again", "--fail-on", "regression")
    assert code == 0, data
    score = _deltas(data)["score"]
    assert score["runs"] == [2, 2] and score["interval"] is not None and score["verdict"] == "unchanged", score
    low, high = score["interval"]  # type: ignore[misc]
    assert low <= score["change"] <= high  # type: ignore[operator]


@pytest.mark.parametrize(
    ("head", "part", "evidence", "agents", "rule"),
    [
        ("star-serial", "parallelism", "parallelism.serialised_work", ["coordinator"], "parallelism<-0.1"),
        ("star-left-out", "participation", "participation.unused_members", ["writer"], "new:unused_members"),
        # the relay now does the coordinating: the coordinator only passes the task on, and is named
        ("star-relay", "information_flow", "information_flow.relays_add_nothing", ["coordinator"],
         "information_flow<-0.05"),
        ("star-failing", "robustness", "robustness.failed_calls", ["writer"], "robustness<-0.1"),
    ],
)  # fmt: skip
def test_each_change_is_the_matching_regression_and_fails_the_build(
    runs: Path, head: str, part: str, evidence: str, agents: list[str], rule: str
) -> None:
    code, data, said = _compare(runs, head)
    assert code == 0  # no --fail-on: shown, not failed
    delta = _deltas(data)[part]
    assert delta["verdict"] == "regression", delta
    assert _new(data).get(evidence) == agents, _new(data)
    code, _, said = _compare(runs, head, "--fail-on", rule)
    assert code == 1 and f"regression: {rule}: scenario launch" in said, said
    assert _compare(runs, "star-again", "--fail-on", rule)[0] == 0


def test_the_page_opens_in_chromium_with_both_graphs(runs: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    page = tmp_path / "compare.html"
    code, _, _ = _compare(runs, "star-relay", "--html", str(page))
    assert code == 0
    offline = ["--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9",
               f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run([chromium, *offline, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout  # fmt: skip
    assert 'data-comparison="regression"' in dom
    base, head = dom.split('data-side="base"', 1)[1], dom.split('data-side="head"', 1)[1]
    assert (
        'data-agent="writer"' in base.split("</svg>", 1)[0] and 'data-agent="relay"' not in base.split("</svg>", 1)[0]
    )
    assert 'data-agent="relay"' in head.split("</svg>", 1)[0]
