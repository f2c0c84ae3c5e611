"""The assessor from the command line: ``coordbench green``, ``assess`` and ``evaluate``, as real processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from coordbench.evals.config import LLM_API_KEY_ENV
from support.processes import AgentProcess
from test_cli import COMMAND, free_port, serving

pytestmark = pytest.mark.slow


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=timeout, env=env)


def _evaluations(stdout: str) -> list[dict[str, object]]:
    """The scenario evaluations of ``evaluate``'s output for one trace: one JSON line."""
    (line,) = stdout.splitlines()
    document = json.loads(line)
    assert set(document) == {"trace_id", "evaluations"}
    return document["evaluations"]


def test_green_assess_and_evaluate(
    tmp_path: Path, start_participant: object, processes: list[AgentProcess], subprocess_env: dict[str, str]
) -> None:
    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV}
    with serving("green", "--output-dir", str(tmp_path / "green-output"), env=env) as (url, _green):
        coordinator = start_participant("coordinator", url, behaviour="fanout")  # type: ignore[operator]
        worker = start_participant("worker", url)  # type: ignore[operator]
        config = tmp_path / "config.json"
        config.write_text(
            json.dumps(
                {
                    "scenarios": [{"id": "review", "task": "Review the plan", "references": ["a careful review"]}],
                    "entry": "coordinator",
                    "trace_quiet": 0.3,
                    "trace_timeout": 20,
                    "team_notes": "a key coordbench does not know: listed, not fatal",
                }
            )
        )
        out = tmp_path / "out" / "results.json"
        assessed = run(
            "assess", "--green", url, "-p", f"coordinator={coordinator.url}", "-p", f"worker={worker.url}",
            "--config", str(config), "--output", str(out), env=env,
        )  # fmt: skip
        assert assessed.returncode == 0, assessed.stderr
        results = json.loads(out.read_text())
        assert results["participants"] == {"coordinator": coordinator.url, "worker": worker.url}
        (row,) = results["results"]
        entry = row["detail"]["scenarios"][0]
        assert entry["status"] == "evaluated" and entry["trace_complete"] is True
        assert "review" in assessed.stderr and "results written to" in assessed.stderr
        assert "ignored config keys (not known to coordbench): team_notes" in " ".join(assessed.stderr.split())
        assert f"scenario review: trace {entry['trace_id']}" in assessed.stderr  # to look it up
        assert "assess.py:" not in assessed.stderr  # no source locations on progress lines
        # one writer: the green's own copy and the one assess wrote from the artifact are the same bytes,
        # integers written as integers although the artifact's DataPart carried them as doubles
        assert out.read_bytes() == (tmp_path / "green-output" / "results.json").read_bytes()
        assert '"scenarios": 1,' in out.read_text() and '"live_scenarios": 1,' in out.read_text()

        # re-evaluating the stored trace reproduces the assessment's evaluation, byte for byte
        replay = run(
            "evaluate", "--trace-id", entry["trace_id"], "--receiver", url, "--config", str(config),
            env=env,
        )  # fmt: skip
        assert replay.returncode == 0, replay.stderr
        (evaluation,) = _evaluations(replay.stdout)
        assert evaluation["scenario"] == "review"
        assert evaluation["results"] == entry["results"]
        assert evaluation["score"] == entry["score_components"] and evaluation["passed"] == entry["passed"]
        assert evaluation["score"]["overall"] == entry["score"]
        assert evaluation["results"]["llm_judge"]["task_success"] is True  # the answer, read from the trace
        # a participant given as ROLE=URL (assess's form) is refused, not silently taken for a name
        wrong = run("evaluate", "--trace-id", entry["trace_id"], "--receiver", url, "--agent",
                    f"coordinator={coordinator.url}", env=env)  # fmt: skip
        assert wrong.returncode == 2 and "--agent takes an agent's name" in " ".join(wrong.stderr.split())
        again = run(
            "evaluate", "--trace-id", entry["trace_id"], "--receiver", url, "--config", str(config),
            env=env,
        )  # fmt: skip
        assert again.stdout == replay.stdout

        # the same trace from a file (the read API's JSON)
        trace_file = tmp_path / "trace.json"
        trace_file.write_text(httpx.get(f"{url}/v1/traces/{entry['trace_id']}").text)
        from_file = run("evaluate", str(trace_file), "--config", str(config), env=env)
        assert from_file.stdout == replay.stdout
        # without --config, the config the assessor recorded in the trace: the same evaluation again
        # (it used to score 0.875 where the green said 0.661: no references, no weights of its own)
        recorded = run("evaluate", str(trace_file), env=env)
        assert recorded.returncode == 0, recorded.stderr
        assert recorded.stdout == replay.stdout
        # and the results.json the assessment wrote is a config too
        as_results = run("evaluate", str(trace_file), "--config", str(out), env=env)
        assert as_results.returncode == 0, as_results.stderr
        assert as_results.stdout == replay.stdout

        # the report, rebuilt: from results.json without spans (and it says so), with them from
        # --receiver; from the stored trace alone, naming the agents it saw and the time it took
        page = tmp_path / "report.html"
        bare = run("report", str(out), "--output", str(page), env=env)
        assert bare.returncode == 0, bare.stderr
        assert "waterfalls are left out: give --receiver" in " ".join(bare.stderr.split())
        assert "spans not available here" in page.read_text()
        drawn = run("report", str(out), "--receiver", url, "--output", str(page), env=env)
        assert drawn.returncode == 0 and "left out" not in drawn.stderr
        assert "spans not available here" not in page.read_text() and "<h3>Spans</h3>" in page.read_text()
        traced = run("report", "--trace-id", entry["trace_id"], "--receiver", url, "--output", str(page), env=env)
        assert traced.returncode == 0, traced.stderr
        text = page.read_text()
        participants = text.split("Participants:", 1)[1].split("</p>", 1)[0]
        assert "coordinator" in participants and "worker" in participants and "seen in the trace" in participants
        took = re.search(r'data-field="time-used"><span data-value="([^"]+)"', text)
        assert took is not None and float(took.group(1)) > 0  # the trace's own span of time, not "0 s"


def test_embedded_assess_with_the_endpoint_in_the_shell_keeps_its_spans_to_itself(
    tmp_path: Path, start_participant: object, processes: list[AgentProcess], subprocess_env: dict[str, str]
) -> None:
    """The README tells agent authors to set OTEL_EXPORTER_OTLP_ENDPOINT; assess's own green must not export to itself.

    It used to, from a batch processor flushed after the embedded green had stopped: exporter
    errors and seconds of waiting. Two scenarios: the rule-based judge is mentioned once.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    coordinator = start_participant("coordinator", url, behaviour="fanout")  # type: ignore[operator]
    worker = start_participant("worker", url)  # type: ignore[operator]
    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV}
    env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    config = tmp_path / "config.json"
    scenarios = [{"id": "one", "task": "Plan the launch"}, {"id": "two", "task": "Plan the review"}]
    config.write_text(json.dumps({"scenarios": scenarios, "trace_quiet": 0.3, "trace_timeout": 20}))
    out = tmp_path / "results.json"
    assessed = run(
        "assess", "--port", str(port), "-p", f"coordinator={coordinator.url}", "-p", f"worker={worker.url}",
        "--config", str(config), "--output", str(out), env=env,
    )  # fmt: skip
    assert assessed.returncode == 0, assessed.stderr
    for trouble in ("Failed to export", "Exception while exporting", "Transient error", "Traceback"):
        assert trouble not in assessed.stderr, assessed.stderr
    assert "LLM judge unavailable" not in assessed.stderr  # not once per scenario
    assert assessed.stderr.count("judge: rule-based (no API key") == 1, assessed.stderr
    (row,) = json.loads(out.read_text())["results"]
    assert [e["trace_complete"] for e in row["detail"]["scenarios"]] == [True, True]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["assess", "-p", "nourl"], "expected ROLE=URL, got 'nourl'"),
        (
            ["assess", "-p", "a=not-a-url", "--green", "http://127.0.0.1:9/"],
            "participants.a: Input should be a valid URL",
        ),
        # these four used to get as far as starting a green or calling one (exit 1, or a traceback)
        (["assess", "-p", "a=http://127.0.0.1:9/", "--timeout", "-1"], "--timeout: must be a number of seconds > 0"),
        (["assess", "-p", "a=http://127.0.0.1:9/", "--timeout", "nan"], "--timeout: must be a number of seconds > 0"),
        (["assess", "-p", "a=http://127.0.0.1:9/", "--port", "70000"], "--port: must be a port number, 0 to 65535"),
        (["assess", "-p", "a=http://127.0.0.1:9/", "--green", "notaurl"], "--green: expected an http(s) URL"),
        (["assess", "-p", "a=http://127.0.0.1:9/", "--output", "/dev/null/results.json"], "--output: cannot write"),
        (["evaluate", "/dev/null", "--output", "/dev/null/out.json"], "--output: cannot write /dev/null/out.json"),
        (["evaluate"], "give a TRACE_FILE or --trace-id (one of them)"),
        (["evaluate", "/nonexistent/trace.json"], "cannot read /nonexistent/trace.json"),
        (
            ["evaluate", "--trace-id", "abc", "--receiver", "http://127.0.0.1:9"],
            "cannot reach http://127.0.0.1:9/v1/traces/abc",
        ),
    ],
)
def test_bad_arguments_exit_2_with_a_reason(args: list[str], message: str) -> None:
    result = run(*args, env=dict(os.environ))
    assert result.returncode == 2, result.stderr
    assert message in " ".join(result.stderr.split())


def test_evaluate_rejects_a_file_that_holds_no_spans(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    result = run("evaluate", str(bad))
    assert result.returncode == 2
    assert "expected an OTLP export" in result.stderr
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\xff\x10garbage")
    result = run("evaluate", str(garbage))
    assert result.returncode == 2 and "not OTLP protobuf either" in " ".join(result.stderr.split())


def test_evaluate_refuses_a_partly_invalid_export(tmp_path: Path) -> None:
    """Evaluating what is left of a file whose spans were partly rejected would mislead: exit 2, say why."""
    from coordbench.otlp import export_request_json
    from support.spans import sid, span

    document = export_request_json([span("a", span_id=sid(1)), span("b", span_id=sid(2))])
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "not-hex"
    broken = tmp_path / "partly.json"
    broken.write_text(json.dumps(document))
    result = run("evaluate", str(broken))
    assert result.returncode == 2
    assert "1 spans rejected: invalid trace_id" in " ".join(result.stderr.split())


def test_evaluate_takes_agent_names_with_half_an_emoji(tmp_path: Path) -> None:
    """A name whose JSON escapes a lone surrogate used to crash the evaluation (UnicodeEncodeError)."""
    from coordbench.otlp import export_request_json
    from support.spans import call, serve, sid

    host_call = call("host", "A@", span_id=sid(1))
    spans = [host_call, serve("A@", parent=host_call.span_id, span_id=sid(2))]
    text = json.dumps(export_request_json(spans)).replace("@", "\\udc00")  # as a JS exporter may write it
    trace_file = tmp_path / "halves.json"
    trace_file.write_text(text)
    result = run("evaluate", str(trace_file))
    assert result.returncode == 0, result.stderr
    (evaluation,) = _evaluations(result.stdout)
    agents = {a["name"] for a in evaluation["results"]["graph"]["agents"]}
    assert agents == {"host", "A\ufffd"}


def test_evaluate_ends_on_spans_whose_parents_loop(tmp_path: Path) -> None:
    """A step reported as its own parent, and two spans each other's, used to hang the evaluation."""
    from coordbench.otlp import export_request_json
    from support.spans import call, serve, sid, span

    host_call = call("host", "A", span_id=sid(1))
    spans = [
        host_call,
        serve("A", parent=host_call.span_id, span_id=sid(2)),
        span("own parent", span_id=sid(3), parent=sid(3), service="A"),
        call("A", "B", parent=sid(5), span_id=sid(4)),
        span("loop", span_id=sid(5), parent=sid(4), service="A"),
    ]
    trace_file = tmp_path / "loops.json"
    trace_file.write_text(json.dumps(export_request_json(spans)))
    result = run("evaluate", str(trace_file), timeout=60)
    assert result.returncode == 0, result.stderr
    (evaluation,) = _evaluations(result.stdout)
    calls = {(e["caller"], e["callee"]) for e in evaluation["results"]["graph"]["edges"]}
    assert calls == {("host", "A"), ("A", "B")}  # the call inside the loop still counts


def test_evaluate_refuses_a_config_with_a_bad_weight(tmp_path: Path) -> None:
    """It used to exit 1 with pydantic's report once the spans were loaded; now 2, with the field."""
    config = tmp_path / "config.json"
    config.write_text('{"weights": {"graph": -1}}')
    trace_file = tmp_path / "unused.json"
    trace_file.write_text('{"spans": []}')
    result = run("evaluate", str(trace_file), "--config", str(config))
    assert result.returncode == 2
    assert "config.weights: weight of 'graph' must be a finite number >= 0, got -1.0" in " ".join(result.stderr.split())


def test_a_config_key_with_a_typo_is_refused_naming_the_right_one(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"timout": 30}')
    result = run("assess", "-p", "a=http://127.0.0.1:9/", "--config", str(config), "--green", "http://127.0.0.1:9/")
    assert result.returncode == 2
    assert "unknown config key 'timout': did you mean 'timeout'?" in " ".join(result.stderr.split())
    trace_file = tmp_path / "unused.json"
    trace_file.write_text('{"spans": []}')
    result = run("evaluate", str(trace_file), "--config", str(config))
    assert result.returncode == 2 and "config: unknown config key 'timout': did you mean 'timeout'?" in " ".join(
        result.stderr.split()
    )


def test_evaluate_says_what_a_wrong_receiver_answered() -> None:
    """Something else on the port (an HTML 404, JSON that is not a trace) is exit 2 with a reason, not a traceback."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    from coordbench.testing import LoopbackServer

    async def answer(request: object) -> object:
        trace_id = request.path_params["trace_id"]  # type: ignore[attr-defined]
        if trace_id.startswith("0"):
            return HTMLResponse("<html><h1>Not Found</h1></html>", status_code=404)
        return JSONResponse({"nope": 1})

    app = Starlette(routes=[Route("/v1/traces/{trace_id}", answer)])
    with LoopbackServer(lambda _url: app) as url:
        for trace_id, reason in (
            ("0af7651916cd43dd8448eb211c80319c", "answered 404: <html><h1>Not Found</h1></html>"),
            ("1af7651916cd43dd8448eb211c80319c", "did not answer a trace (GET /v1/traces/{id} output): KeyError"),
        ):
            result = run("evaluate", "--trace-id", trace_id, "--receiver", url)
            assert result.returncode == 2, result.stderr
            assert reason in " ".join(result.stderr.split())


def test_help_lists_the_assessor_commands() -> None:
    help_text = run("--help").stdout
    for command in ("green", "assess", "evaluate", "receiver", "groundtruth"):
        assert command in help_text


def test_assess_says_why_each_scenario_went_wrong_and_exits_1_when_none_was_evaluated(
    tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    """Every scenario errored (the team is unreachable): the reasons are printed, not only in results.json."""
    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"scenarios": [{"id": "one", "task": "Hi"}, {"id": "two", "task": "Hi"}],
                                  "trace_timeout": 0}))  # fmt: skip
    with serving("green", "--output-dir", str(tmp_path / "green-output"), env=env) as (url, _green):
        result = run("assess", "--green", url, "-p", f"coordinator=http://127.0.0.1:{free_port()}/",
                     "--config", str(config), "--output", str(tmp_path / "results.json"), env=env)  # fmt: skip
    assert result.returncode == 1, result.stderr
    said = " ".join(result.stderr.split())
    assert said.count("cannot read the agent card") >= 2  # both scenarios, each with its reason
    assert "no scenario could be evaluated normally" in said
    assert (tmp_path / "results.json").exists()  # the results are written all the same


def test_assess_says_when_no_span_from_the_team_arrived(
    tmp_path: Path, processes: list[AgentProcess], subprocess_env: dict[str, str]
) -> None:
    """A team that exports nowhere (team up without an endpoint) used to score 0 with status 'evaluated', silently."""
    import sys

    from support.processes import RELAY

    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV and not k.startswith("OTEL_")}
    silent = AgentProcess([sys.executable, RELAY, "--name", "silent"], env)  # no tracing configured: no spans
    processes.append(silent)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"scenarios": [{"id": "one", "task": "Hi"}], "trace_timeout": 1,
                                  "trace_quiet": 0.2}))  # fmt: skip
    with serving("green", "--output-dir", str(tmp_path / "green-output"), env=env) as (url, _green):
        result = run("assess", "--green", url, "-p", f"silent={silent.url}", "--config", str(config),
                     "--output", str(tmp_path / "results.json"), env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr  # evaluated: the team answered
    assert "no span from the team arrived" in " ".join(result.stderr.split())
