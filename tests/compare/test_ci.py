"""The CI recipe: the workflow in docs/compare.md is the repository's own, and its comparison script runs.

``scripts/coordination/compare.sh`` is run as the workflow runs it (a process, on folders laid out
as ``coordbench demo --output-dir`` writes them); the workflow's ``FAIL_ON`` rules parse.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compare.runs import SERIAL, STAR, document
from coordbench.compare import parse_rules

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "coordination" / "compare.sh"
WORKFLOW = ROOT / ".github" / "workflows" / "coordination.yml"


def _team(folder: Path, team: str, text: str) -> None:
    (folder / team).mkdir(parents=True, exist_ok=True)
    (folder / team / "results.json").write_text(text, encoding="utf-8")


def _run(base: Path, head: Path, summary: Path, fail_on: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "COORDBENCH": str(Path(sys.executable).parent / "coordbench")}
    if fail_on is not None:
        env["FAIL_ON"] = fail_on
    return subprocess.run(["bash", str(SCRIPT), str(base), str(head), str(summary)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {"star": document(STAR), "serial": document(SERIAL)}


def test_the_same_teams_pass_and_the_summary_holds_each_comparison(texts: dict[str, str], tmp_path: Path) -> None:
    for side in ("base", "head"):
        _team(tmp_path / side, "star", texts["star"])
        _team(tmp_path / side, "green", texts["serial"])  # the green's own copy: never compared
    _team(tmp_path / "head", "newcomer", texts["star"])
    summary = tmp_path / "summary.md"
    done = _run(tmp_path / "base", tmp_path / "head", summary)
    assert done.returncode == 0, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert "## Team star" in text and "**no regression**" in text and "## Team green" not in text
    assert "Team newcomer: new, no stored results to compare with." in text
    assert "Compared 1 team(s); no regression." in done.stdout


def test_a_regression_fails_the_job_and_is_in_the_summary(texts: dict[str, str], tmp_path: Path) -> None:
    _team(tmp_path / "base", "star", texts["star"])
    _team(tmp_path / "head", "star", texts["serial"])
    summary = tmp_path / "summary.md"
    done = _run(tmp_path / "base", tmp_path / "head", summary)
    assert done.returncode == 1, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert "### Failed rules" in text
    assert "new:\\*: scenario s1: parallelism.serialised\\_work fired (coordinator)" in text


def test_no_baseline_yet_is_said_and_passes(texts: dict[str, str], tmp_path: Path) -> None:
    _team(tmp_path / "head", "star", texts["star"])
    summary = tmp_path / "summary.md"
    done = _run(tmp_path / "missing", tmp_path / "head", summary)
    assert done.returncode == 0 and "nothing to compare" in summary.read_text(encoding="utf-8")


def test_bad_rules_stop_with_2(texts: dict[str, str], tmp_path: Path) -> None:
    for side in ("base", "head"):
        _team(tmp_path / side, "star", texts["star"])
    done = _run(tmp_path / "base", tmp_path / "head", tmp_path / "summary.md", fail_on="score<<1")
    assert done.returncode == 2 and "cannot read 'score<<1'" in " ".join(done.stderr.split())


def test_the_documented_workflow_is_the_repositorys_and_its_rules_parse() -> None:
    docs = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- workflow:coordination -->\s*```yaml\n(.*?)```", docs, re.S)
    assert found is not None, "docs/compare.md lost its workflow"
    assert found.group(1) == WORKFLOW.read_text(encoding="utf-8")
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["coordination"]["steps"]
    compare = next(s for s in steps if "compare.sh" in s.get("run", ""))
    assert parse_rules(compare["env"]["FAIL_ON"])
    assert any("--output-dir coordination/head" in s.get("run", "") for s in steps)
