"""``coordbench attribute``: a trace file, a results.json, a trace held by a real receiver; and every bad input.

Each bad input exits 2 with one line saying what is wrong (``error: ...``), and nothing else.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from tests.conftest import Backend
from typer.testing import CliRunner

from coordbench.cli import app
from coordbench.evals.assessment_config import validate_config
from coordbench.results.writer import trace_results, write_results
from coordbench.traces.file import load_spans

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "data" / "attribution"
LABELS = {label["name"]: label for label in json.loads((DATA / "labels.json").read_text(encoding="utf-8"))["runs"]}
LINES = (DATA / "traces.jsonl").read_text(encoding="utf-8").splitlines()
KEYS = {"trace_id", "scenario", "agent", "span_id", "rule", "confidence", "ranker", "failure_visible", "reason",
        "evidence", "candidates"}  # fmt: skip


def _run(tmp_path: Path, name: str) -> tuple[Path, dict[str, object]]:
    """The labelled run ``name`` as its own OTLP/JSON file, and its label."""
    label = LABELS[name]
    index = list(LABELS).index(name)
    path = tmp_path / f"{name}.json"
    path.write_text(LINES[index], encoding="utf-8")
    return path, label


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["attribute", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_names_the_labelled_agent_and_span_with_every_key(tmp_path: Path) -> None:
    path, label = _run(tmp_path, "star-fail-3")
    code, out, _ = _invoke(str(path), "--json")
    assert code == 0
    [found] = [json.loads(line) for line in out.splitlines()]
    assert set(found) == KEYS
    assert (found["trace_id"], found["agent"], found["span_id"]) == (label["trace_id"], label["agent"],
                                                                      label["span_id"])  # fmt: skip
    assert found["ranker"] == "rules" and 0 < found["confidence"] <= 1
    assert found["evidence"][0]["span_id"] == found["span_id"] and found["candidates"][0]["agent"] == label["agent"]


def test_the_expected_answer_turns_an_invisible_wrong_fact_into_a_finding(tmp_path: Path) -> None:
    path, label = _run(tmp_path, "star-wrong_fact-0")
    _, out, _ = _invoke(str(path), "--json")
    assumed = json.loads(out)
    assert not assumed["failure_visible"] and assumed["confidence"] <= 0.35
    _, out, _ = _invoke(str(path), "--json", "--expected", str(label["expected"]))
    found = json.loads(out)
    assert (found["agent"], found["span_id"], found["rule"]) == (label["agent"], label["span_id"], "wrong_content")
    assert found["failure_visible"]


def test_words_for_a_person_name_the_agent_the_chain_and_the_candidates(tmp_path: Path) -> None:
    path, label = _run(tmp_path, "react-drop-5")
    code, out, _ = _invoke(str(path), "--expected", str(label["expected"]))
    assert code == 0
    assert f"{label['agent']} at span {label['span_id']}" in out
    assert "chain of evidence:" in out and "did not pass it on" in out
    path, label = _run(tmp_path, "star-fail-3")
    code, out, _ = _invoke(str(path))
    assert code == 0 and f"{label['agent']} at span {label['span_id']}" in out
    assert "candidate" in out and "answer_origin" in out  # the others, ranked below


def test_many_traces_give_one_line_each_and_the_output_file_holds_them(tmp_path: Path) -> None:
    output = tmp_path / "out" / "attributions.jsonl"
    code, out, _ = _invoke(str(DATA / "traces.jsonl"), "--json", "--output", str(output))
    assert code == 0 and out == ""
    lines = output.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(LABELS) and {json.loads(line)["trace_id"] for line in lines} == {
        label["trace_id"] for label in LABELS.values()
    }


def test_labels_print_the_accuracy_tables_beside_the_baselines() -> None:
    code, out, _ = _invoke(str(DATA / "traces.jsonl"), "--labels", str(DATA / "labels.json"))
    assert code == 0
    assert out.count("| method | agent right | decisive span exact | span within 3 steps |") == 2
    assert "| coordbench | 100% | 100% | 100% |" in out and "| PageRank |" in out


def test_a_trace_held_by_a_receiver_is_attributed_as_its_file_is(tmp_path: Path, backend: Backend) -> None:
    path, label = _run(tmp_path, "chain-relay_changed-6")
    posted = httpx.post(f"{backend.url}/v1/traces", content=path.read_bytes(),
                        headers={"Content-Type": "application/json"}, timeout=30)  # fmt: skip
    assert posted.status_code == 200, posted.text
    _, from_file, _ = _invoke(str(path), "--json")
    code, from_receiver, _ = _invoke("--trace-id", str(label["trace_id"]), "--receiver", backend.url, "--json")
    assert code == 0 and from_receiver == from_file
    assert json.loads(from_receiver)["agent"] == label["agent"]


def test_a_results_json_gives_what_its_failed_scenarios_recorded(tmp_path: Path) -> None:
    path, label = _run(tmp_path, "star-fail-3")
    spans = load_spans(path)
    document = tmp_path / "results.json"
    for threshold, failed in ((0.99, True), (0.0, False)):
        config = validate_config({"pass_threshold": threshold})
        results = asyncio.run(trace_results(spans, str(label["trace_id"]), config=config))
        write_results(document, results)
        code, out, err = _invoke(str(document), "--json")
        if failed:  # the scenario failed: its attribution was recorded, and is what the trace gives
            assert code == 0, err
            found = json.loads(out)
            from_trace = json.loads(_invoke(str(path), "--json")[1])
            assert (found["trace_id"], found["agent"], found["span_id"]) == (
                label["trace_id"], from_trace["agent"], from_trace["span_id"])  # fmt: skip
        else:  # it passed: nothing was attributed, and the command says so
            assert code == 2 and out == "" and "records no attribution" in err


def _bad(tmp_path: Path) -> list[tuple[list[str], str]]:
    trace, _ = _run(tmp_path, "star-fail-3")
    not_json = tmp_path / "labels.txt"
    not_json.write_text("{nope", encoding="utf-8")
    wrong_labels = tmp_path / "labels.json"
    wrong_labels.write_text(json.dumps({"runs": [{"trace_id": "xyz", "agent": ""}]}), encoding="utf-8")
    other_labels = tmp_path / "other.json"
    other_labels.write_text(json.dumps({"runs": [{"trace_id": "cd" * 16, "agent": "a"}]}), encoding="utf-8")
    not_spans = tmp_path / "config.json"
    not_spans.write_text(json.dumps({"hello": "world"}), encoding="utf-8")
    return [
        ([], "give a SOURCE or --trace-id (one of them)"),
        ([str(trace), "--trace-id", "ab" * 16], "give a SOURCE or --trace-id (one of them)"),
        (["--trace-id", "ab" * 16, "--receiver", "http://127.0.0.1:9", "--store", "chdb:///x"],
         "give --receiver or --store, not both"),
        ([str(trace), "--expected", "  "], "--expected is empty"),
        ([str(trace), "--expected", "x" * 100_001], "--expected is 100,001 characters; at most 100,000"),
        (["--trace-id", "ab" * 16, "--labels", str(other_labels)], "--labels scores a trace file"),
        ([str(tmp_path / "missing.json")], "missing.json"),
        ([str(not_spans)], "config.json"),
        ([str(trace), "--labels", str(not_json)], "is not JSON"),
        ([str(trace), "--labels", str(wrong_labels)], "trace_id"),
        ([str(trace), "--labels", str(other_labels)], "none of the 1 labelled traces is in the trace file"),
        (["--trace-id", "ab" * 16, "--receiver", "http://127.0.0.1:9"], "127.0.0.1:9"),
    ]  # fmt: skip


def test_every_bad_input_exits_2_with_one_line_saying_what_is_wrong(tmp_path: Path) -> None:
    for args, said in _bad(tmp_path):
        code, out, err = _invoke(*args)
        assert code == 2, (args, out, err)
        assert out == "", (args, out)
        assert said in " ".join(err.split()), (args, err)
        assert err.startswith("error:"), (args, err)


def test_an_output_that_cannot_be_written_is_refused_before_any_work(tmp_path: Path) -> None:
    trace, _ = _run(tmp_path, "star-fail-3")
    (tmp_path / "dir").mkdir()
    code, _, err = _invoke(str(trace), "--output", str(tmp_path / "dir"))
    assert code == 2 and "--output" in err


def test_an_unknown_trace_on_a_receiver_is_said(backend: Backend) -> None:
    code, out, err = _invoke("--trace-id", "ef" * 16, "--receiver", backend.url)
    assert code == 2 and out == ""
    assert "ef" * 16 in err or "not found" in err.lower() or "404" in err


@pytest.mark.parametrize("name", ["<b>[bold red]x[/]</b>", "agent\u202eevil"])
def test_agent_names_are_printed_as_data(tmp_path: Path, name: str) -> None:
    """An agent's chosen name is shown as it is: not rich markup, not an instruction to the terminal's renderer."""
    path, _ = _run(tmp_path, "star-fail-3")
    text = path.read_text(encoding="utf-8").replace('"analyst"', json.dumps(name))
    path.write_text(text, encoding="utf-8")
    code, out, _ = _invoke(str(path), "--json")
    assert code == 0
    assert json.loads(out)["agent"] in (name, "coordinator", "researcher", "writer", "reviewer", "planner")
    code, out, _ = _invoke(str(path))
    assert code == 0
    if name.startswith("<b>"):
        assert "[bold red]x[/]" in out


def test_the_same_traces_give_the_same_bytes_whatever_the_hash_seed() -> None:
    """Sets iterate in a different order under another PYTHONHASHSEED: nothing attribution prints may depend on it."""
    import os
    import subprocess
    import sys

    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-m", "coordbench", "attribute", str(DATA / "held-out-traces.jsonl"),
                              "--json"], env=env, capture_output=True, timeout=600, check=True)  # fmt: skip
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") == len(LABELS)
