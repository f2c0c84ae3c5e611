"""A participant (or a requester) that sends hostile text cannot freeze, crash or stall the assessor.

The green runs as its own process with a token; the attacker is a participant process that
answers with long runs of letters, digits or spaces, many URLs with credentials, a regex
trap, markup, deep nesting, 50 MB, or bytes that are not JSON. Throughout, ``/healthz`` must
answer within a second, the assessment must end within its configured timeout with a
result, and no secret the attacker planted in URLs may reach an output.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.commands import HealthProbe, ServerProcess, send_assessment, stream_assessment
from support.processes import AgentProcess

HOSTILE = str(Path(__file__).parent.parent / "agents" / "hostile.py")
TOKEN = "green-token-6b1d"
TIMEOUT = 60.0


@pytest.fixture
def green(tmp_path: Path) -> Iterator[ServerProcess]:
    env = {**os.environ, "COORDBENCH_TOKEN": TOKEN}
    with ServerProcess("green", "--output-dir", str(tmp_path / "out"), env=env, token=TOKEN) as server:
        yield server


def _participant(payload: str, size: int, subprocess_env: dict[str, str]) -> AgentProcess:
    command = [sys.executable, HOSTILE, "--payload", payload, "--size", str(size)]
    return AgentProcess(command, {**subprocess_env, "PYTHONPATH": str(Path(__file__).parent.parent)})


def _assess(green: ServerProcess, participant_url: str, *, task: str = "Review the design.") -> dict[str, object]:
    request = {
        "participants": {"coordinator": participant_url},
        "config": {
            "scenarios": [{"id": "hostile", "task": task, "references": ["a careful design review " * 50]}],
            "timeout": TIMEOUT,
            "trace_timeout": 2,
            "trace_quiet": 0.2,
        },
    }
    return send_assessment(green.url, request, timeout=TIMEOUT * 3)


def _state(answer: dict[str, object]) -> str:
    result = answer.get("result")
    assert isinstance(result, dict), answer
    task = result.get("task")
    assert isinstance(task, dict), answer
    status = task["status"]
    assert isinstance(status, dict)
    return str(status["state"])


def _scenario(answer: dict[str, object]) -> dict[str, object]:
    """The one scenario's entry in the result row the artifact carries."""
    result = answer["result"]
    assert isinstance(result, dict)
    parts = result["task"]["artifacts"][0]["parts"]
    row = next(part["data"] for part in parts if "data" in part)
    return row["detail"]["scenarios"][0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("payload", "size", "status", "error"),
    [
        ("letters", 100_000, "evaluated", None),
        ("letters", 5_000_000, "evaluated", None),
        ("digits", 1_000_000, "evaluated", None),
        ("spaces", 1_000_000, "evaluated", None),
        ("urls", 2_000_000, "evaluated", None),
        ("injection", 1_000_000, "evaluated", None),
        ("markup", 1_000_000, "evaluated", None),
        ("nested", 100_000, "error", "RecursionError"),
        ("letters", 50_000_000, "error", "more than the limit of 16777216"),
        ("raw", 50_000_000, "error", "the reply exceeded 16777216 bytes"),
    ],
)
def test_hostile_answer_neither_stalls_nor_leaks(
    payload: str,
    size: int,
    status: str,
    error: str | None,
    green: ServerProcess,
    processes: list[AgentProcess],
    subprocess_env: dict[str, str],
) -> None:
    participant = _participant(payload, size, subprocess_env)
    processes.append(participant)
    started = time.monotonic()
    with HealthProbe(green.url) as probe:
        answer = _assess(green, participant.url)
    took = time.monotonic() - started
    assert probe.errors == []
    assert probe.answers > 0
    assert probe.worst < 1.0, f"/healthz took {probe.worst:.2f} s while the assessor read the answer"
    assert took < TIMEOUT, f"the assessment took {took:.1f} s, more than its {TIMEOUT:g} s timeout"
    assert _state(answer) == "TASK_STATE_COMPLETED"
    assert "SECRET-hostile" not in str(answer)
    scenario = _scenario(answer)
    assert scenario["status"] == status
    if error is None:
        # it answered but exports no spans (the next test covers hostile spans): the row says so
        assert str(scenario["error"]).startswith("no span from the team arrived")
        output = scenario["outcome"]["output"]  # type: ignore[index]
        assert 0 < len(output) <= 100_000  # the answer as kept: cut to the recorded length
    else:
        assert error in str(scenario["error"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("payload", "spans", "size"),
    [("injection", 200, 16_000), ("letters", 200, 16_000), ("urls", 2_000, 4_000), ("markup", 50, 200_000)],
)
def test_hostile_spans_are_evaluated_without_stalling_or_leaking(
    payload: str,
    spans: int,
    size: int,
    green: ServerProcess,
    processes: list[AgentProcess],
    subprocess_env: dict[str, str],
) -> None:
    """The participant exports its own spans: many calls, each carrying long hostile message content."""
    command = [sys.executable, HOSTILE, "--payload", payload, "--size", str(size), "--spans", str(spans),
               "--export", green.url, "--token", TOKEN]  # fmt: skip
    participant = AgentProcess(command, {**subprocess_env, "PYTHONPATH": str(Path(__file__).parent.parent)})
    processes.append(participant)
    started = time.monotonic()
    with HealthProbe(green.url) as probe:
        answer = _assess(green, participant.url)
    took = time.monotonic() - started
    assert probe.errors == []
    assert probe.worst < 1.0, f"/healthz took {probe.worst:.2f} s while the assessor evaluated the spans"
    assert took < TIMEOUT, f"the assessment took {took:.1f} s"
    scenario = _scenario(answer)
    assert scenario["status"] == "evaluated"
    graph = scenario["results"]["graph"]  # type: ignore[index]
    assert len(graph["agents"]) > 10  # the exported calls were read and evaluated
    assert "SECRET-hostile" not in json.dumps(answer)


@pytest.mark.slow
def test_a_task_of_letters_naming_the_green_as_participant_does_not_stall_it(green: ServerProcess) -> None:
    """The unauthenticated request of the finding: the green asked to assess itself with 100,000 letters."""
    with HealthProbe(green.url) as probe:
        answer = _assess(green, f"{green.url}/", task="a" * 100_000)
    assert probe.errors == []
    assert probe.worst < 1.0, f"/healthz took {probe.worst:.2f} s"
    assert _state(answer) in {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED"}


@pytest.mark.slow
def test_sigterm_stops_the_green_during_an_assessment(
    green: ServerProcess, processes: list[AgentProcess], subprocess_env: dict[str, str]
) -> None:
    """An assessment in flight (a participant that takes minutes) does not hold the green up on SIGTERM."""
    import threading

    from support.processes import RELAY

    slow = AgentProcess([sys.executable, RELAY, "--name", "slow", "--delay", "600"], subprocess_env)
    processes.append(slow)
    request = {"participants": {"coordinator": slow.url}, "config": {"scenarios": [{"id": "s1", "task": "Wait"}]}}
    working = threading.Event()
    threading.Thread(target=stream_assessment, args=(green.url, request, "scenario 1/1", working), daemon=True).start()
    assert working.wait(timeout=600), "the assessment never started"
    started = time.monotonic()
    green.proc.terminate()
    green.proc.wait(timeout=120)
    assert time.monotonic() - started < 60  # the grace period is 10 s; a busy machine adds to it
