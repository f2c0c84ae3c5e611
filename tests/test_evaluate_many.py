"""``coordbench evaluate`` over files of many traces: each trace on its own, the same bytes however it is run.

The files are the shapes users export: one OTLP export holding several traces, OTLP JSON Lines
(the Collector's ``file`` exporter), and a Jaeger JSON export. Each trace's line must equal the
output of evaluating that trace alone, with one process or several (``--jobs``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coordbench.otlp import export_request_json
from coordbench.spans import SpanData
from coordbench.traces.file import load_traces
from evals.traces import client, server
from support.spans import sid, span

COMMAND = [sys.executable, "-m", "coordbench.cli"]


def _team(trace_id: str, host: str, workers: list[str], *, serial: bool = False) -> list[SpanData]:
    """A host asks a coordinator, which asks each worker (side by side, or one after another)."""
    spans = [span("invoke_workflow run", span_id=sid(1), service=host, trace_id=trace_id, start_ms=0, end_ms=100,
                  **{"a2a.step.call_type": "HOST"}),
             client(host, "coordinator", sid(2), sid(1), 0, 100, request="Plan it", reply="The plan"),
             server("coordinator", sid(3), sid(2), 1, 99)]  # fmt: skip
    for i, worker in enumerate(workers):
        start = 10 + (25 * i if serial else 0)
        spans.append(client("coordinator", worker, sid(10 + 2 * i), sid(3), start, start + 20,
                            request=f"Do part {i}", reply=f"{worker} did part {i} with care"))  # fmt: skip
        spans.append(server(worker, sid(11 + 2 * i), sid(10 + 2 * i), start + 1, start + 19))
    return [s._replace(trace_id=trace_id) for s in spans]


TRACES = {
    "0af7651916cd43dd8448eb211c80319c": _team("0af7651916cd43dd8448eb211c80319c", "host", ["a", "b"]),
    "4bf92f3577b34da6a3ce929d0e0e4736": _team("4bf92f3577b34da6a3ce929d0e0e4736", "host", ["x", "y", "z"], serial=True),
    "9cf92f3577b34da6a3ce929d0e0e4799": _team("9cf92f3577b34da6a3ce929d0e0e4799", "gate", ["solo"]),
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, "evaluate", *args], capture_output=True, text=True, timeout=600)


def _jaeger(traces: dict[str, list[SpanData]]) -> dict[str, object]:
    """The Jaeger UI's JSON export of ``traces`` (microseconds, tags, processes)."""
    data: list[dict[str, object]] = []
    for trace_id, spans in traces.items():
        processes: dict[str, dict[str, object]] = {}
        items: list[dict[str, object]] = []
        for s in spans:
            service = str(s.resource["service.name"])
            key = f"p{sorted({str(x.resource['service.name']) for x in spans}).index(service)}"
            processes[key] = {"serviceName": service, "tags": []}
            tags = [{"key": k, "type": "string", "value": v} for k, v in s.attributes.items() if isinstance(v, str)]
            tags.append({"key": "span.kind", "type": "string", "value": s.kind.name.lower()})
            items.append({
                "traceID": trace_id, "spanID": s.span_id, "operationName": s.name, "processID": key,
                "references": [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": s.parent_span_id}]
                if s.parent_span_id else [],
                "startTime": s.start_time_unix_nano // 1000, "duration": (s.end_time_unix_nano - s.start_time_unix_nano)
                // 1000, "tags": tags, "logs": [],
            })  # fmt: skip
        data.append({"traceID": trace_id, "spans": items, "processes": processes})
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each trace's line when its file holds that trace alone."""
    folder = tmp_path_factory.mktemp("alone")
    lines: dict[str, str] = {}
    for trace_id, spans in TRACES.items():
        path = folder / f"{trace_id}.json"
        path.write_text(json.dumps(export_request_json(spans)))
        result = _run(str(path))
        assert result.returncode == 0, result.stderr
        (lines[trace_id],) = result.stdout.splitlines()
    return lines


def test_one_export_of_three_traces_gives_three_lines_each_as_alone(tmp_path: Path, alone: dict[str, str]) -> None:
    together = tmp_path / "together.json"
    together.write_text(json.dumps(export_request_json([s for spans in TRACES.values() for s in spans])))
    result = _run(str(together))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [alone[t] for t in sorted(TRACES)]
    parallel = _run(str(together), "--jobs", "2")
    assert parallel.returncode == 0, parallel.stderr
    assert parallel.stdout == result.stdout
    assert "3 traces" in parallel.stderr
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["trace_id"] for d in documents] == sorted(TRACES)
    assert all(len(d["evaluations"]) == 1 for d in documents)  # no "3-traces" scenario: each its own


def test_collector_file_exporter_json_lines(tmp_path: Path, alone: dict[str, str]) -> None:
    path = tmp_path / "traces.jsonl"
    exports = [export_request_json(spans[:4]) for spans in TRACES.values()]
    exports += [export_request_json(spans[4:]) for spans in TRACES.values()]  # a trace may span lines
    path.write_text("".join(json.dumps(e) + "\n" for e in exports))
    assert sorted(load_traces(path)) == sorted(TRACES)
    result = _run(str(path), "--output", str(tmp_path / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.jsonl").read_text().splitlines() == [alone[t] for t in sorted(TRACES)]


def test_jaeger_json_export(tmp_path: Path) -> None:
    path = tmp_path / "jaeger.json"
    path.write_text(json.dumps(_jaeger(TRACES)))
    traces = load_traces(path)
    assert sorted(traces) == sorted(TRACES)
    for trace_id, spans in TRACES.items():
        read = {s.span_id: s for s in traces[trace_id]}
        assert set(read) == {s.span_id for s in spans}
        for original in spans:
            back = read[original.span_id]
            assert (back.parent_span_id, back.name, back.kind) == (
                original.parent_span_id,
                original.name,
                original.kind,
            )
            assert back.start_time_unix_nano == original.start_time_unix_nano
            assert back.resource["service.name"] == original.resource["service.name"]
    result = _run(str(path))
    assert result.returncode == 0, result.stderr
    edges = [
        sorted((e["caller"], e["callee"]) for e in json.loads(line)["evaluations"][0]["results"]["graph"]["edges"])
        for line in result.stdout.splitlines()
    ]
    assert edges[2] == [("coordinator", "solo"), ("gate", "coordinator")]


def test_a_broken_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(export_request_json(TRACES[sorted(TRACES)[0]])) + '\n{"resourceSpans": 7}\n')
    result = _run(str(path))
    assert result.returncode == 2
    assert "line 2" in result.stderr


def test_evaluating_tunes_the_collector_as_the_servers_do(tmp_path: Path) -> None:
    # every full collection walks the spans read and the evaluation's objects; the servers already
    # collect less often, and so does this command (the result cannot change: collection frees, never computes)
    import gc

    from typer.testing import CliRunner

    from coordbench.cli import app
    from coordbench.gcpolicy import THRESHOLDS

    path = tmp_path / "one.json"
    path.write_text(json.dumps(export_request_json(next(iter(TRACES.values())))))
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # CPython's defaults, whatever an earlier test in this worker chose
    try:
        result = CliRunner().invoke(app, ["evaluate", str(path)])
        assert result.exit_code == 0, result.output
        assert gc.get_threshold() == THRESHOLDS
    finally:
        gc.set_threshold(*before)
