"""``coordbench demo --serve``: the demo's runs, then the green stays up with them in its live UI until Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from online.traces import until
from support.serving import free_port

pytestmark = pytest.mark.slow


def test_demo_serve_keeps_the_green_up_with_its_runs_in_the_ui_until_ctrl_c(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PYTEST_"))}
    command = [sys.executable, "-m", "coordbench", "demo", "--serve", "--shape", "star", "--port", str(port),
               "--output-dir", str(tmp_path / "demo")]  # fmt: skip
    demo = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        said: list[str] = []
        assert demo.stderr is not None
        for line in demo.stderr:  # the demo says where the UI is once its runs are assessed
            said.append(line)
            if "live UI:" in line:
                break
        assert f"live UI: http://127.0.0.1:{port}/ui/" in "".join(said), "".join(said)[-2000:]
        url = f"http://127.0.0.1:{port}"

        def listed() -> list[dict[str, object]]:
            return httpx.get(f"{url}/v1/evaluations", timeout=30).json()["evaluations"]

        until(lambda: any(e["team"] == "star" for e in listed()), "the demo's run was evaluated online")
        page = httpx.get(f"{url}/ui/", timeout=30)
        assert page.status_code == 200
        (run,) = [e for e in listed() if e["team"] == "star"]
        assert f'data-trace="{run["trace_id"]}"' in page.text and 'data-team="star"' in page.text
        results = (tmp_path / "demo" / "star" / "results.json").read_text(encoding="utf-8")
        assert '"assessment_id": "' in results or '"assessment_id":"' in results
        demo.send_signal(signal.SIGINT)
        rest = demo.communicate(timeout=120)[1]
        assert demo.returncode == 0, rest
        assert "stopped: the green and every team the demo started" in rest
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/healthz", timeout=5)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
