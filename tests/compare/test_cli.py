"""``coordbench compare`` as a user runs it: files, folders of runs, traces; exit codes; JSON, Markdown, HTML."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compare.runs import SERIAL, STAR, document
from coordbench.cli import app
from coordbench.spans import span_to_dict
from evals.teams import team_spans

runner = CliRunner()


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    return {
        "star": _write(root / "star.json", document(STAR, 2)),
        "star-again": _write(root / "star-again.json", document(STAR, 2)),
        "serial": _write(root / "serial.json", document(SERIAL, 2)),
    }


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


def test_the_same_team_twice_exits_0_and_the_json_is_the_same_bytes_each_time(files: dict[str, Path]) -> None:
    first = runner.invoke(app, ["compare", str(files["star"]), str(files["star-again"]), "--json",
                                "--fail-on", "regression"])  # fmt: skip
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["scenarios"][0]["runs"] == [2, 2]
    second = runner.invoke(app, ["compare", str(files["star"]), str(files["star-again"]), "--json"])
    assert second.stdout == first.stdout


def test_a_regression_named_by_fail_on_exits_1_naming_it(files: dict[str, Path], tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    rules = "parallelism<-0.1,new:idle_members"
    result = runner.invoke(
        app, ["compare", str(files["star"]), str(files["serial"]), "--fail-on", rules, "--markdown", str(summary)]
    )
    assert result.exit_code == 1, result.output
    said = _said(result)
    assert "regression: parallelism<-0.1: scenario s1: parallelism 1.000 -> 0.351" in said
    assert "new:idle_members" not in said.split("regression:", 1)[1]  # that rule did not fire
    text = summary.read_text(encoding="utf-8")
    assert "### Failed rules" in text and "| parallelism | 1.000 | 0.351 | -0.649 |" in text


def test_without_fail_on_a_regression_is_shown_and_exits_0(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["compare", str(files["star"]), str(files["serial"])])
    assert result.exit_code == 0, result.output
    assert "regression" in result.stdout and "parallelism.serialised_work (coordinator)" in _said(result)


def test_folders_are_sets_of_runs(files: dict[str, Path], tmp_path: Path) -> None:
    for side, source in (("base", "star"), ("head", "star-again")):
        shutil.copy(files[source], tmp_path / side / "one.json") if (tmp_path / side).mkdir() is None else None
        shutil.copy(files[source], tmp_path / side / "two.json")
    result = runner.invoke(app, ["compare", str(tmp_path / "base"), str(tmp_path / "head"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scenarios"][0]["runs"] == [4, 4]


def test_two_trace_files_are_evaluated_and_compared(tmp_path: Path) -> None:
    base = _write(tmp_path / "base.json", json.dumps({"spans": [span_to_dict(s) for s in team_spans(STAR)]}))
    head = _write(tmp_path / "head.json", json.dumps({"spans": [span_to_dict(s) for s in team_spans(SERIAL)]}))
    page = tmp_path / "compare.html"
    result = runner.invoke(app, ["compare", str(base), str(head), "--json", "--html", str(page)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    scenario = data["scenarios"][0]
    assert scenario["scenario"] == "trace" and scenario["runs"] == [1, 1]
    assert {d["name"]: d["verdict"] for d in scenario["deltas"]}["parallelism"] == "regression"
    html = page.read_text(encoding="utf-8")
    assert html.count('data-side="base"') == 2 and html.count('data-side="head"') == 2  # graph and waterfall each
    assert html.count('class="agent-graph"') == 2 and "spans not available" not in html


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("score<<1", "cannot read 'score<<1'"),
        ("nosuch<-0.1", "cannot read 'nosuch<-0.1'"),
        ("score<abc", "cannot read 'score<abc'"),
        ("regression<1", "cannot read 'regression<1'"),  # regression takes no number
        ("new:", "new: takes an evidence name"),
        ("new:<script>", "new: takes an evidence name"),
        ("score<-0.05,,new:x", "empty rule"),
        ("score<" + "9" * 10_000, "cannot read"),
        (",".join(["score<-1"] * 65), "at most 64 rules"),
    ],
)
def test_a_bad_fail_on_exits_2_saying_what_is_wrong(files: dict[str, Path], rule: str, said: str) -> None:
    result = runner.invoke(app, ["compare", str(files["star"]), str(files["serial"]), "--fail-on", rule])
    assert result.exit_code == 2, result.output
    assert said in _said(result)
    assert len(result.output) < 2_000  # the rule is quoted cut, never echoed whole


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: str(p / "missing.json"), "not a file, a folder of results.json files, or a trace id"),
        (lambda p: "4bf92f3577b34da6a3ce929d0e0e4736", "a trace id needs --receiver"),
        (lambda p: str(_write(p / "bad.json", '{"results": [{"score": 1}]}')),
         "is not a results.json document: results.0.domain: Field required"),
        (lambda p: str(_write(p / "spans.json", '{"spans": [{"name": 1}]}')), "spans.json"),
        (lambda p: str(_write(p / "nothing" / "notes.txt", "x").parent), "a folder with no .json file"),
    ],
)  # fmt: skip
def test_a_side_that_cannot_be_read_exits_2_naming_it(
    files: dict[str, Path], tmp_path: Path, make: object, said: str
) -> None:
    source = make(tmp_path)  # type: ignore[operator]
    result = runner.invoke(app, ["compare", str(files["star"]), str(source)])
    assert result.exit_code == 2, result.output
    assert said in _said(result)


def test_names_from_the_data_are_inert_in_the_markdown(files: dict[str, Path], tmp_path: Path) -> None:
    hostile = tmp_path / "a|<img src=x onerror=alert(1)>`.json"
    shutil.copy(files["serial"], hostile)
    summary = tmp_path / "summary.md"
    result = runner.invoke(app, ["compare", str(files["star"]), str(hostile), "--markdown", str(summary)])
    assert result.exit_code == 0, result.output
    text = summary.read_text(encoding="utf-8")
    assert "<img" not in text and "&lt;img" in text and "\\|" in text


@pytest.mark.slow
def test_the_page_opens_in_chromium_with_both_graphs(files: dict[str, Path], tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    page = tmp_path / "compare.html"
    result = runner.invoke(app, ["compare", str(files["star"]), str(files["serial"]), "--html", str(page)])
    assert result.exit_code == 0, result.output
    offline = ["--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9",
               f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    dom = subprocess.run([chromium, *offline, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout  # fmt: skip
    assert 'data-comparison="regression"' in dom
    assert dom.count("<svg") >= 2 and 'data-side="base"' in dom and 'data-side="head"' in dom
    assert 'data-delta="parallelism" data-verdict="regression"' in dom


def _traced(team: object, trace_id: str) -> list[object]:
    return [s._replace(trace_id=trace_id) for s in team_spans(team)]  # type: ignore[arg-type]


def test_trace_ids_on_a_receiver_and_waterfalls_for_results(files: dict[str, Path], tmp_path: Path) -> None:
    import httpx

    from coordbench.otlp.encode import export_request
    from support.commands import ServerProcess

    base_id, head_id, absent = "1" * 32, "2" * 32, "3" * 32
    receiver = ServerProcess("receiver", "--no-grpc")
    try:
        for trace_id, team in ((base_id, STAR), (head_id, SERIAL)):
            body = export_request(_traced(team, trace_id)).SerializeToString()  # type: ignore[arg-type]
            sent = httpx.post(f"{receiver.url}/v1/traces", content=body,
                              headers={"Content-Type": "application/x-protobuf"}, timeout=30)  # fmt: skip
            assert sent.status_code == 200, sent.text
        page = tmp_path / "ids.html"
        result = runner.invoke(app, ["compare", base_id, head_id, "--receiver", receiver.url, "--json",
                                     "--html", str(page), "--fail-on", "parallelism<-0.1"])  # fmt: skip
        assert result.exit_code == 1, result.output
        assert json.loads(result.stdout)["scenarios"][0]["trace_ids"] == [[base_id], [head_id]]
        assert page.read_text(encoding="utf-8").count('<svg class="waterfall"') == 2  # base and head, one scale
        missing = runner.invoke(app, ["compare", base_id, absent, "--receiver", receiver.url])
        assert missing.exit_code == 2 and f"/v1/traces/{absent} answered 404" in _said(missing)
        # results.json whose trace ids the receiver does not hold: the page is written, the waterfalls left out
        page = tmp_path / "results.html"
        kept = runner.invoke(app, ["compare", str(files["star"]), str(files["serial"]), "--receiver", receiver.url,
                                   "--html", str(page)])  # fmt: skip
        assert kept.exit_code == 0 and "is left out" in _said(kept) and page.exists()
    finally:
        receiver.stop()
