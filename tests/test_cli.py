"""The coordbench command: help, version, the receiver, bad settings, and no self-tracing loop."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typer

from coordbench import __version__
from coordbench.otlp import export_request
from coordbench.testing import bind_loopback
from support.serving import free_port
from support.spans import TRACE, sid, span

COMMAND = [sys.executable, "-m", "coordbench"]


def test_help_and_version() -> None:
    help_text = subprocess.run([*COMMAND, "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "receiver" in help_text and "groundtruth" in help_text
    version = subprocess.run([*COMMAND, "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.strip() == __version__


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--port", "70000"], {}, "port: Input should be less than or equal to 65535"),
        ([], {"COORDBENCH_MAX_SPANS": "lots"}, "COORDBENCH_MAX_SPANS: Input should be a valid integer"),
        ([], {"COORDBENCH_EVICT_AFTER": "-1"}, "COORDBENCH_EVICT_AFTER: Input should be greater than or equal to 0"),
        ([], {"COORDBENCH_EVALUATE_NICE": "20"}, "COORDBENCH_EVALUATE_NICE: Input should be less than or equal to 19"),
    ],
)
def test_bad_settings_fail_fast_naming_the_variable(args: list[str], env: dict[str, str], message: str) -> None:
    command = [*COMMAND, "receiver", "--no-grpc", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())


def test_an_unusable_data_directory_is_one_clear_line(tmp_path: Path) -> None:
    a_file = tmp_path / "spans"
    a_file.write_text("not a directory")
    not_a_database = tmp_path / "db"
    not_a_database.mkdir()
    (not_a_database / "traces.sqlite3").write_bytes(b"junk that is not SQLite" * 100)
    cases = [
        (a_file, f"cannot keep spans in data directory '{a_file}': it is not a directory"),
        (
            not_a_database,
            f"cannot use '{not_a_database / 'traces.sqlite3'}' as the span database: file is not a database",
        ),
    ]
    for data_dir, message in cases:
        command = [*COMMAND, "receiver", "--no-grpc", "--port", str(free_port()), "--data-dir", str(data_dir)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 2
        assert result.stderr.strip() == f"error: {message}"
    assert (not_a_database / "traces.sqlite3").read_bytes() == b"junk that is not SQLite" * 100  # left alone


@pytest.mark.parametrize("which", ["HTTP", "OTLP/gRPC"])
def test_a_port_in_use_is_one_clear_line(which: str) -> None:
    holder = bind_loopback()
    holder.listen()
    taken = holder.getsockname()[1]
    http, grpc = (taken, free_port()) if which == "HTTP" else (free_port(), taken)
    try:
        for command in (["receiver"], ["green"]):
            args = [*COMMAND, *command, "--port", str(http), "--grpc-port", str(grpc)]
            result = subprocess.run(args, capture_output=True, text=True, timeout=60)
            assert result.returncode == 2  # as every command answers a port it cannot use
            assert (
                result.stderr.strip() == f"error: {which}: cannot listen on 127.0.0.1:{taken}: address already in use"
            )
    finally:
        holder.close()


def test_every_command_answers_a_taken_port_with_exit_code_2() -> None:
    holder = bind_loopback()
    holder.listen()
    taken = str(holder.getsockname()[1])
    try:
        for args in (["receiver", "--no-grpc", "--port", taken], ["green", "--port", taken],
                     ["purple", "--role", "writer", "--port", taken],
                     ["assess", "-p", "a=http://127.0.0.1:9/", "--port", taken]):  # fmt: skip
            result = subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=120)
            assert result.returncode == 2, (args, result.stderr)
            assert taken in result.stderr and "error:" in result.stderr
    finally:
        holder.close()


def test_no_help_text_shows_markup_literally() -> None:
    """Docstrings written for Sphinx (``x``) used to reach --help as double backticks.

    In this process (the help Typer renders is the same text a terminal gets; the console entry
    point itself is run by the tests of each command).
    """
    from typer.testing import CliRunner

    from coordbench.cli import app

    for args in ([], ["demo"], ["green"], ["assess"], ["evaluate"], ["attribute"], ["compare"], ["receiver"],
                 ["report"], ["groundtruth"], ["purple"], ["team", "up"]):  # fmt: skip
        result = CliRunner().invoke(app, [*args, "--help"])
        assert result.exit_code == 0, (args, result.output)
        assert "``" not in result.stdout and ":class:" not in result.stdout and ":func:" not in result.stdout, args
        assert "Usage:" in result.stdout, args


@contextlib.contextmanager
def serving(*args: str, env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``coordbench ARGS --port P`` on a free loopback port while the block runs: its URL and process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([*COMMAND, *args, "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _wait_ready(url, proc)
        yield url, proc
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _wait_ready(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(proc.communicate()[1])
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("receiver did not start")


@pytest.mark.slow
def test_receiver_does_not_trace_itself_into_a_loop() -> None:
    """Run under opentelemetry-instrument, exporting its own telemetry to itself: only our spans get stored."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    assert instrument is not None
    env = {
        **os.environ,
        "OTEL_SERVICE_NAME": "receiver",
        "OTEL_TRACES_EXPORTER": "otlp,console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    proc = subprocess.Popen(
        [instrument, *COMMAND, "receiver", "--port", str(port), "--no-grpc"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_ready(url, proc)
        body = export_request([span(f"s{i}", span_id=sid(i + 1)) for i in range(3)]).SerializeToString()
        for _ in range(5):
            response = httpx.post(f"{url}/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"})
            assert response.status_code == 200
            httpx.get(f"{url}/v1/traces/{TRACE}")
        stats = httpx.get(f"{url}/v1/stats").json()
        assert (stats["spans"], stats["traces"], stats["received"]) == (3, 1, 15)
    finally:
        proc.terminate()
        printed, _ = proc.communicate(timeout=20)
    # the console exporter, flushed at exit, prints any span the process made of itself: there is none
    assert '"trace_id"' not in printed, printed[:500]


def test_an_output_path_is_checked_without_leaving_a_file_or_touching_one(tmp_path: Path) -> None:
    from coordbench.cli.output import check_writable

    fresh = tmp_path / "new" / "results.json"
    check_writable(fresh, "--output")
    assert fresh.parent.is_dir() and not fresh.exists()
    kept = tmp_path / "kept.json"
    kept.write_text("earlier results")
    check_writable(kept, "--output")
    assert kept.read_text() == "earlier results"
    with pytest.raises(typer.BadParameter, match=r"cannot write .*: Is a directory"):
        check_writable(tmp_path, "--output")


def test_bad_purple_settings_are_all_named_at_once() -> None:
    from typer.testing import CliRunner

    from coordbench.cli import app

    result = CliRunner().invoke(app, ["purple", "--role", "writer", "--shape", "star", "--port", "70000",
                                      "--pace", "-1"])  # fmt: skip
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "port: Input should be less than or equal to 65535; pace: Input should be greater than or equal to 0" in said


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        # PURPLE_TEAM beats PURPLE_SHAPE (the image sets PURPLE_SHAPE=star by default)
        (["--role", "nobody"], {"PURPLE_TEAM": str(ROOT / "data/teams/star-failing.toml"), "PURPLE_SHAPE": "chain"},
         "is not a member of team 'star-failing'"),
        # the command line beats the environment
        (["--role", "nobody", "--shape", "tree"], {"PURPLE_TEAM": str(ROOT / "data/teams/star-failing.toml")},
         "is not a member of team 'tree'"),
        (["--role", "nobody"], {"PURPLE_SHAPE": "mesh", "PURPLE_SIZE": "4"}, "is not a member of team 'mesh'"),
        (["--role", "x", "--team", str(ROOT / "data/teams/star.toml"), "--shape", "tree"], {},
         "give --team FILE or --shape NAME, not both"),
        ([], {}, "give --role NAME (or PURPLE_ROLE)"),
        (["--role", "writer"], {"PURPLE_SIZE": "99"}, "PURPLE_SIZE: Input should be less than or equal to 16"),
        (["--role", "writer"], {"PURPLE_PORT": "x"}, "PURPLE_PORT: Input should be a valid integer"),
    ],
)  # fmt: skip
def test_purple_reads_its_settings_from_one_place(args: list[str], env: dict[str, str], said: str) -> None:
    from typer.testing import CliRunner

    from coordbench.cli import app

    clean = dict.fromkeys(("PURPLE_ROLE", "PURPLE_TEAM", "PURPLE_SHAPE", "PURPLE_SIZE", "PURPLE_PORT"))
    result = CliRunner().invoke(app, ["purple", *args], env={**clean, **env})
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split())


def test_the_demo_names_each_bad_option_before_it_starts_anything() -> None:
    """Unknown shape, size out of range, unknown collector, unknown model choice: exit 2, one line naming it."""
    for args, said in (
        (["--shape", "ring"], "unknown shape(s) ring; known: star, chain, tree, mesh, bottleneck, isolated, react, "
                              "groupchat, handoff"),
        (["--size", "40"], "--size must be 2 to 16, got 40"),
        (["--collector", "otelcol"], "--collector must be direct or rotel, got 'otelcol'"),
        (["--llm", "gpt-5"], "--llm must be none or local, got 'gpt-5'"),
    ):  # fmt: skip
        result = subprocess.run([*COMMAND, "demo", *args], capture_output=True, text=True, timeout=60)
        assert result.returncode == 2, (args, result.stderr)
        assert said in " ".join(result.stderr.split()), (args, result.stderr)
