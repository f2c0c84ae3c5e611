"""The main job end to end: every team shape through a real green, over real A2A and real OTLP.

Each team runs as one OS process per member, the green as its own process, and each team is
assessed over A2A through the green (as AgentBeats does). The live classification of each shape
is the counterpart of the ground truth; the fault variants still produce completed assessments
that name what went wrong; the report renders in a real browser with networking off; and no
process is left behind, after success or after Ctrl-C.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coordbench.cli import app
from coordbench.demo import DemoRun, run_demo, shaped_teams
from coordbench.purple import load_team
from support.consistency import contradictions

pytestmark = pytest.mark.slow

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"
ARTEFACTS = Path(__file__).parent.parent.parent / "output" / "test-artifacts"
ONE_SCENARIO = {
    "scenarios": [
        {
            "id": "launch",
            "task": "Plan the launch of the mobile app. The budget is 40,000 and the deadline is 2026-12-01. "
            "Marketing depends on the design team. Testing may slip if the devices arrive late.",
            "references": ["Owners, a dated timeline, the budget, and the risks: design dependency, late devices."],
        }
    ],
    "trace_quiet": 0.5,
    "trace_timeout": 5,
}
EXPECTED = {  # shape -> (topology, label): what the live team's structure must be called
    "star": ("star", "bottleneck"),
    "chain": ("chain", "bottleneck"),  # three in a line: the middle one brokers every path
    "tree": ("tree", "medium_coordination"),
    "mesh": ("mesh", "high_coordination"),
    "bottleneck": ("bottleneck_relay", "bottleneck"),
    "isolated": ("star", "partial_isolation"),
}
TIMING = {"critical_path", "parallelism"}  # metrics of span times: they differ between runs


README = Path(__file__).resolve().parents[2] / "README.md"


def _marker_processes(marker: str) -> list[int]:
    """Processes whose environment carries ``marker`` (this test's children and theirs)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def _scenario(run: DemoRun, shape: str) -> dict[str, Any]:
    (team,) = [t for t in run.teams if t.shape == shape]
    assert team.ok, (shape, team.state, team.error)
    return team.row["detail"]["scenarios"][0]


def test_every_shape_is_told_apart_twice_alike_and_nothing_is_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"coordbench-test-{uuid.uuid4()}"
    monkeypatch.setenv("COORDBENCH_TEST_MARKER", marker)
    monkeypatch.delenv("AGENTBEATS_LLM_API_KEY", raising=False)
    runs = [run_demo(tmp_path / f"run{i}", teams=shaped_teams(), config=ONE_SCENARIO) for i in (1, 2)]
    right = 0
    for shape, (topology, label) in EXPECTED.items():
        entry = _scenario(runs[0], shape)
        graph = entry["results"]["graph"]
        right += (graph["topology"], graph["label"]) == (topology, label)
        assert entry["trace_complete"] is True, (shape, entry["completeness"])
    print(f"\nlive shapes classified as their labels say: {right}/{len(EXPECTED)}")
    assert right == len(EXPECTED)
    # the same teams and task give identical structure metrics (span times aside)
    for shape in EXPECTED:
        first, second = (_scenario(run, shape)["results"]["graph"] for run in runs)
        for key in ("agents", "edges"):
            assert [{k: v for k, v in a.items() if "ms" not in k} for a in first[key]] == [
                {k: v for k, v in a.items() if "ms" not in k} for a in second[key]
            ], shape
        assert {k: v for k, v in first["metrics"].items() if k not in TIMING} == {
            k: v for k, v in second["metrics"].items() if k not in TIMING
        }, shape
        assert first["detections"] == second["detections"] and first["label"] == second["label"]
    # the benchmark tells the shapes apart: the team that uses everyone side by side scores above
    # the one that funnels everything through a relay working one worker at a time, and above the
    # star that leaves a member idle
    score = {t.shape: t.row["score"] for t in runs[0].teams}
    assert score["star"] > score["isolated"] and score["star"] > score["bottleneck"]
    assert "relay" in _scenario(runs[0], "bottleneck")["results"]["coordination"]["parts"]["parallelism"]["agents"]
    assert (tmp_path / "run1" / "index.html").exists() and (tmp_path / "run1" / "star" / "report.html").exists()
    assert _marker_processes(marker) == []
    # the same team twice is no coordination regression (one run a side: the busy-machine tolerance)
    for shape in EXPECTED:
        same = CliRunner().invoke(
            app,
            [
                "compare",
                str(tmp_path / "run1" / shape / "results.json"),
                str(tmp_path / "run2" / shape / "results.json"),
                "--fail-on",
                "regression",
            ],
        )
        assert same.exit_code == 0, (shape, same.output)
    # the README's comparison, as written, on these results: the bottleneck is the star's regression
    command = re.search(r"^(coordbench compare .*?)$", README.read_text(encoding="utf-8").replace("\\\n", ""), re.M)
    assert command is not None, "README lost its compare command"
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "demo").symlink_to(tmp_path / "run1")
    argv = [str(Path(sys.executable).parent / "coordbench"), *shlex.split(command.group(1))[1:]]
    readme = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=False,
                            timeout=300, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert readme.returncode == 1, readme.stderr
    assert "regression: parallelism<-0.1: scenario" in readme.stderr
    assert (tmp_path / "output" / "compare.html").exists()


def test_fault_variants_complete_and_name_what_went_wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTBEATS_LLM_API_KEY", raising=False)
    variants = [(name, load_team(TEAMS / f"{name}.toml"), ["--team", str(TEAMS / f"{name}.toml")])
                for name in ("star-slow", "star-failing", "star-silent")]  # fmt: skip
    run = run_demo(tmp_path, teams=variants, config=ONE_SCENARIO)
    for team in run.teams:  # each report agrees with its own figures
        assert team.report is not None
        assert contradictions(team.row, team.report.read_text(encoding="utf-8")) == [], team.shape
    slow, failing, silent = (_scenario(run, name) for name, _, _ in variants)
    assert slow["results"]["latency"]["slowest_agent"] == "writer"
    robustness = failing["results"]["coordination"]["parts"]["robustness"]
    assert "failed_calls" in robustness["fired"] and "writer" in robustness["agents"]
    assert failing["results"]["protocol"]["failed"] == 1 and failing["outcome"]["state"] == "completed"
    assert silent["trace_complete"] is False and silent["completeness"]["unmatched_clients"]
    assert "unverified_calls" in silent["results"]["coordination"]["parts"]["robustness"]["fired"]


def test_ctrl_c_stops_every_process_the_demo_started(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    marker = f"coordbench-test-{uuid.uuid4()}"
    # members that work slowly (5 s per unit of work): the assessment is still running when Ctrl-C
    # comes, however fast the machine (it used to finish first now and then, and exit 0)
    env = {**subprocess_env, "COORDBENCH_TEST_MARKER": marker, "PURPLE_PACE": "5"}
    demo = subprocess.Popen(
        [sys.executable, "-m", "coordbench", "demo", "--shape", "tree", "--output-dir", str(tmp_path)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_marker_processes(marker)) < 1 + 1 + 6:  # demo, green, 6 members
        time.sleep(0.2)
    assert len(_marker_processes(marker)) >= 8, "the team did not come up"
    demo.send_signal(signal.SIGINT)
    demo.communicate(timeout=60)
    deadline = time.monotonic() + 20
    while _marker_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marker_processes(marker) == []
    assert demo.returncode == 128 + signal.SIGINT, demo.returncode
    assert not (tmp_path / "index.html").exists()  # interrupted before any team was assessed


class _Dom(HTMLParser):
    """Collects the attributes the test checks from a rendered DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.section: str | None = None
        self.nodes: dict[str, list[str]] = {}
        self.edges: dict[str, list[str]] = {}
        self.values: dict[tuple[str | None, str], str] = {}
        self._field: str | None = None
        self._part: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("data-scenario"):
            self.section = a["data-scenario"]
        if a.get("data-agent"):
            self.nodes.setdefault(self.section or "", []).append(a["data-agent"] or "")
        if a.get("data-edge"):
            self.edges.setdefault(self.section or "", []).append(a["data-edge"] or "")
        if a.get("data-field"):
            self._field = a["data-field"]
        if a.get("data-part"):
            self._part = a["data-part"]
        if "data-value" in a and self._field:
            self.values[(self.section, self._field)] = a["data-value"] or ""
            self._field = None
        elif "data-value" in a and self._part:
            self.values[(self.section, f"part:{self._part}")] = a["data-value"] or ""
            self._part = None


def test_the_report_renders_in_a_real_browser_with_the_numbers_of_results_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    monkeypatch.delenv("AGENTBEATS_LLM_API_KEY", raising=False)
    run = run_demo(tmp_path, teams=shaped_teams(["isolated"]), config=ONE_SCENARIO)
    (team,) = run.teams
    assert team.report is not None
    offline = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--proxy-server=127.0.0.1:9",
               "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    url = team.report.resolve().as_uri()
    dom = subprocess.run(
        [chromium, *offline, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    )
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "report-isolated.png"
    subprocess.run([chromium, *offline, "--window-size=1200,2600", f"--screenshot={shot}", url],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    assert shot.stat().st_size > 10_000
    parsed = _Dom()
    parsed.feed(dom.stdout)
    entry = team.row["detail"]["scenarios"][0]
    graph = entry["results"]["graph"]
    assert sorted(parsed.nodes["launch"]) == sorted(a["name"] for a in graph["agents"])
    assert sorted(parsed.edges["launch"]) == sorted(f"{e['caller']}->{e['callee']}" for e in graph["edges"])
    assert "observer" in parsed.nodes["launch"]  # the isolated member is drawn
    assert float(parsed.values[("launch", "score")]) == pytest.approx(entry["score"], abs=1e-12)
    for name, part in entry["results"]["coordination"]["parts"].items():
        if part["value"] is not None:
            assert float(parsed.values[("launch", f"part:{name}")]) == pytest.approx(part["value"], abs=1e-12), name
    assert float(parsed.values[(None, "row-score")]) == pytest.approx(team.row["score"], abs=1e-9)
