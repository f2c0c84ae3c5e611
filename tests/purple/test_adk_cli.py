"""``python -m coordbench.purple.adk``: what each bad start gets (exit 2 and the reason, before serving)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("google.adk", reason="Google ADK is not installed: uv sync --extra adk (make test installs it)")

MODEL = {"PURPLE_LLM_BASE_URL": "http://127.0.0.1:9/v1", "PURPLE_LLM_API_KEY": "local-model"}


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "coordbench.purple.adk", *args]
    return subprocess.run(command, env={**env, "PATH": ""}, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (["member", "researcher"], {}, "an ADK team needs a model: set PURPLE_LLM_BASE_URL and PURPLE_LLM_API_KEY"),
        (["member", "research-er"], MODEL, "must be a Python identifier"),
        (["member", "researcher"], {**MODEL, "PURPLE_LLM_MAX_TOKENS": "0"}, "PURPLE_LLM_MAX_TOKENS must be a whole"),
        (["coordinator"], MODEL, "the following arguments are required: --member"),
        (["coordinator", "--member", "writer"], MODEL, "expected NAME=URL"),
        (["coordinator", "--member", "writer=ftp://x/"], MODEL, "expected NAME=URL (an http(s) URL)"),
        (["member", "writer", "--port", "70000"], MODEL, "expected a port from 0 to 65535, got '70000'"),
        (["member", "writer", "--host", "192.0.2.1"], MODEL, "cannot bind 192.0.2.1:0"),
    ],
)  # fmt: skip
def test_a_bad_start_exits_2_with_the_reason(args: list[str], env: dict[str, str], said: str) -> None:
    done = _run(args, env)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert said in done.stderr, done.stderr[-2000:]
    assert "READY" not in done.stdout
    assert "local-model" not in done.stderr  # the key is never said
