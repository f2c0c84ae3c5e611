"""tau2 → a2a_agent → a real A2A agent on loopback → tools run in tau2: rewards, contexts, metrics, errors."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from coordbench.tau2.cli import main
from tau2bench.conftest import RunTau2, StartMockAgent

pytestmark = pytest.mark.slow

MOCK_TASKS = ("create_task_1", "update_task_1", "impossible_task_1")


def test_a_good_agent_solves_mock_tasks_side_by_side_each_in_its_own_context(
    start_mock_agent: StartMockAgent, run_tau2: RunTau2
) -> None:
    agent = start_mock_agent("good")
    run = run_tau2("--agent", "a2a_agent", "--a2a-endpoint", agent.url, "--max-concurrency", "3", tasks=MOCK_TASKS)
    assert run.code == 0
    assert run.rewards() == dict.fromkeys(MOCK_TASKS, 1.0)
    # one context per task, kept across its turns, never shared, although the three ran at once
    contexts = {t["task_id"]: t["context_id"] for t in run.metrics["tasks"]}
    assert sorted(contexts) == sorted(MOCK_TASKS) and len(set(contexts.values())) == 3
    assert set(agent.executor.contexts) == set(contexts.values())
    for task in run.metrics["tasks"]:
        assert [r["turn"] for r in task["requests"]] == [0, 1]  # the request, then the tool's result
        assert {r["context_id"] for r in task["requests"]} == {task["context_id"]}
        assert all(r["http_status"] == 200 and r["state"] == "completed" for r in task["requests"])
        assert task["totals"]["tool_calls"] == 1 and task["totals"]["errors"] == {}
    # the first turn carried the policy and the tools; the tools ran here, not at the agent
    first = next(iter(agent.executor.first_turns.values()))
    assert "Only existing users can create tasks" in (first.policy or "")
    assert {t["function"]["name"] for t in first.tools} >= {"create_task", "get_users", "update_task_status"}
    # bytes as the agent's server counted them, on the other side of the socket
    totals = run.metrics["totals"]
    assert totals["requests"] == agent.wire.posts == 6
    assert (totals["request_bytes"], totals["response_bytes"]) == (agent.wire.request_bytes, agent.wire.response_bytes)
    assert run.metrics["agent"] == "mock-domain-agent" and run.metrics["endpoint"] == agent.url
    # the A2A settings are where tau2 keeps its own; the run id is ours
    llm_args = run.results["info"]["agent_info"]["llm_args"]
    assert llm_args["a2a_endpoint"] == agent.url and llm_args["a2a_timeout"] == 300


def test_an_agent_that_fails_gets_reward_zero_not_a_crash(start_mock_agent: StartMockAgent, run_tau2: RunTau2) -> None:
    agent = start_mock_agent("fail")
    run = run_tau2("--agent", "a2a_agent", "--a2a-endpoint", agent.url, tasks=MOCK_TASKS)
    assert run.code == 0
    assert run.rewards() == dict.fromkeys(MOCK_TASKS, 0.0)
    assert {s["termination_reason"] for s in run.results["simulations"]} == {"agent_stop"}
    assert run.errors() == ["agent_failed"] * 3
    assert run.metrics["totals"]["reasoning_errors"] == 3 and run.metrics["totals"]["transport_errors"] == 0


def test_a_tool_that_does_not_exist_is_told_to_the_agent_which_then_uses_the_right_one(
    start_mock_agent: StartMockAgent, run_tau2: RunTau2
) -> None:
    agent = start_mock_agent("unknown_tool")
    run = run_tau2("--agent", "a2a_agent", "--a2a-endpoint", agent.url)
    assert run.rewards() == {"create_task_1": 1.0}
    (task,) = run.metrics["tasks"]
    assert [r["error_kind"] for r in task["requests"]] == ["unknown_tool", None, None]
    assert "there is no tool 'delete_task'" in task["requests"][0]["error"]
    assert task["totals"]["reasoning_errors"] == 1


def test_tool_calls_as_json_in_text_are_used(start_mock_agent: StartMockAgent, run_tau2: RunTau2) -> None:
    agent = start_mock_agent("text_json")
    run = run_tau2("--agent", "a2a_agent", "--a2a-endpoint", agent.url)
    assert run.rewards() == {"create_task_1": 1.0}
    assert run.errors() == [None, None]


@pytest.mark.parametrize(
    ("behaviour", "kind", "error_class", "requests"),
    [
        ("always_unknown", "unknown_tool", "reasoning", 3),  # told twice, then the task ends
        ("bad_arguments", "invalid_arguments", "reasoning", 3),
        ("empty", "malformed_reply", "transport", 1),
    ],
)
def test_answers_tau2_cannot_use_end_the_task_with_reward_zero_and_are_counted(
    start_mock_agent: StartMockAgent,
    run_tau2: RunTau2,
    caplog: pytest.LogCaptureFixture,
    behaviour: str,
    kind: str,
    error_class: str,
    requests: int,
) -> None:
    agent = start_mock_agent(behaviour)
    with caplog.at_level(logging.WARNING, logger="coordbench.tau2"):
        run = run_tau2("--agent", "a2a_agent", "--a2a-endpoint", agent.url)
    assert run.code == 0 and run.rewards() == {"create_task_1": 0.0}
    (task,) = run.metrics["tasks"]
    assert [r["error_kind"] for r in task["requests"]] == [kind] * requests
    assert {r["error_class"] for r in task["requests"]} == {error_class}
    # logged with what was expected and what came back
    (ended,) = [r.message for r in caplog.records if "expected an A2A reply with text or tool calls" in r.message]
    assert f"got {kind}: " in ended


def test_timeouts_401s_500s_and_vanished_endpoints_are_transport_errors_with_reward_zero(
    start_mock_agent: StartMockAgent, run_tau2: RunTau2, caplog: pytest.LogCaptureFixture
) -> None:
    slow = start_mock_agent("slow", delay=3.0)
    locked = start_mock_agent("good", token="right-token")
    # a card that sends messages to a port nobody listens on
    vanished = start_mock_agent("good", message_url="http://127.0.0.1:9/")
    broken = start_mock_agent("good", http_status=500)
    cases = {
        "timeout": ["--a2a-endpoint", slow.url, "--a2a-timeout", "1"],
        "auth": ["--a2a-endpoint", locked.url, "--a2a-auth-token", "wrong-token"],
        "connection": ["--a2a-endpoint", vanished.url],
        "protocol": ["--a2a-endpoint", broken.url],
    }
    for kind, flags in cases.items():
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="coordbench.tau2"):
            run = run_tau2("--agent", "a2a_agent", *flags)
        assert run.code == 0, kind
        assert run.rewards() == {"create_task_1": 0.0}, kind
        (request,) = run.metrics["tasks"][0]["requests"]
        assert (request["error_kind"], request["error_class"]) == (kind, "transport")
        assert request["http_status"] == {"auth": 401, "protocol": 500}.get(kind)  # none when no answer came
        assert run.metrics["totals"]["transport_errors"] == 1
        (record,) = [r for r in caplog.records if "expected an A2A reply" in r.message]
        assert f"got {kind}" in record.message
        assert "wrong-token" not in caplog.text and "wrong-token" not in str(run.metrics) + str(run.results)
    assert run_tau2(
        "--agent", "a2a_agent", "--a2a-endpoint", locked.url, "--a2a-auth-token", "right-token"
    ).rewards() == {"create_task_1": 1.0}


def test_llm_agent_runs_through_the_wrapper_as_through_tau2(run_tau2: RunTau2, scripted_user: object) -> None:
    from support.scripted_user import ScriptedUser

    assert isinstance(scripted_user, ScriptedUser)
    run = run_tau2(
        "--agent", "llm_agent", "--agent-llm", "openai/scripted-agent", "--agent-llm-args", scripted_user.llm_args()
    )
    assert run.code == 0 and run.rewards() == {"create_task_1": 1.0}
    assert scripted_user.agent_requests == 2 and run.metrics == {}  # tau2's own agent: no A2A metrics


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--agent a2a_agent needs --a2a-endpoint URL"),
        (["--a2a-endpoint", "ftp://example.org/"], "invalid A2A setting endpoint: must be an http:// or https:// URL"),
        (["--a2a-endpoint", "http://127.0.0.1:9/", "--a2a-timeout", "0"], "invalid A2A setting timeout"),
        (["--a2a-endpoint", "http://127.0.0.1:9/", "--a2a-auth-token", " "], "invalid A2A setting auth-token"),
        (["--a2a-endpoint", "http://127.0.0.1:9/"], "cannot use http://127.0.0.1:9/ as the agent (connection)"),
        (
            ["--a2a-endpoint", "http://127.0.0.1:9/", "--agent-llm-args", '{"a2a_endpoint": "x"}'],
            "give a2a_endpoint with the --a2a-* flags",
        ),
        (
            ["--a2a-endpoint", "http://127.0.0.1:9/", "--agent-llm-args", "[1]"],
            "--agent-llm-args must be a JSON object",
        ),
    ],
)
def test_command_lines_that_cannot_run_exit_2_before_tau2_starts(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--domain", "mock", "--agent", "a2a_agent", *args])
    assert code == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_without_the_simulated_users_key_one_line_says_what_is_missing(
    start_mock_agent: StartMockAgent, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to end in a 250-line litellm traceback after 32 s."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = start_mock_agent()
    code = main(["run", "--domain", "mock", "--agent", "a2a_agent", "--a2a-endpoint", agent.url,
                 "--user-llm", "openai/gpt-4.1-mini", "--num-tasks", "1"])  # fmt: skip
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--user-llm openai/gpt-4.1-mini) needs OPENAI_API_KEY, which is not set" in err
    assert "--user scripted_user" in err and "Traceback" not in err


def test_a2a_flags_with_another_agent_and_a_missing_card_are_refused(
    start_mock_agent: StartMockAgent, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--domain", "mock", "--agent", "llm_agent", "--a2a-endpoint", "http://127.0.0.1:9/"]) == 2
    assert "--a2a-endpoint applies to `run --agent a2a_agent` only" in capsys.readouterr().err
    agent = start_mock_agent()
    assert main(["run", "--domain", "mock", "--agent", "a2a_agent", "--a2a-endpoint", agent.url + "nowhere/"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "(card): cannot read the agent card" in err


def test_run_help_shows_the_a2a_flags_before_tau2s_own(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.index("--a2a-endpoint URL") < out.index("usage: tau2 run")
    assert "a2a_agent" in out[out.index("usage: tau2 run") :]  # registered before tau2 built its parser


def test_the_offline_path_of_the_readme_needs_no_key_and_no_network(
    start_mock_agent: StartMockAgent, tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    """``--user scripted_user``: the command the README and ``coordbench tau2 --help`` give first, as a process."""
    agent = start_mock_agent("good")
    env = {k: v for k, v in subprocess_env.items() if "API_KEY" not in k and not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-m", "coordbench", "tau2", "run", "--domain", "mock", "--agent", "a2a_agent",
         "--a2a-endpoint", agent.url, "--user", "scripted_user", "--num-tasks", "2",
         "--results-dir", str(tmp_path), "--save-to", "offline"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "offline.json").read_text())
    rewards = [s["reward_info"]["reward"] for s in results["simulations"]]
    assert len(rewards) == 2 and all(r == 1.0 for r in rewards), rewards
    # the user asked for what its task says, then stopped once the agent had answered
    first = results["simulations"][0]["messages"]
    said = [m["content"] for m in first if m["role"] == "user"]
    assert said[-1] == "###STOP###" and said[0] and said[0] != "###STOP###"
    assert (tmp_path / "offline_a2a_metrics.json").exists()
