"""The compose ``scale`` profile's coordbench parts, run as processes with their compose commands and variables.

Docker cannot run here, so each image is stood in for: the two receivers run as local processes
from their compose ``entrypoint``, ``command`` and ``environment`` (service names mapped to loopback
ports); the ClickHouse server by the same engine embedded (chdb), one directory per receiver,
since an embedded engine belongs to one process; the Collector's load balancer by a router
sending OTLP/gRPC to each receiver's ``--grpc-port`` by the exporter's hash ring over
``collector/scale.yaml``'s hostnames; its ClickHouse exporter by coordbench's own row mapping.
Then the Grafana ClickHouse dashboard's SQL runs over what the receivers wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

from coordbench.clickhouse import ClickHouseTraces, connect
from coordbench.dashboards.clickhouse import SQL_PANELS
from coordbench.otlp import export_request
from coordbench.spans import SpanData
from online.traces import FAILING, GOOD, SERIAL, evaluation, team_trace
from support.hashring import HashRing
from support.serving import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent.parent
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SCALE: dict[str, Any] = yaml.safe_load((ROOT / "collector" / "scale.yaml").read_text())


def _compose_value(value: str) -> str:
    """Compose's interpolation of ``${NAME:-default}`` (from this environment, else the default)."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m[1]) or m[2], value)


@pytest.fixture
def receivers(tmp_path: Path, subprocess_env: dict[str, str]) -> Iterator[dict[str, dict[str, Any]]]:
    """receiver-1 and receiver-2 as processes: ``{service: {"url", "grpc", "store", "process"}}``."""
    names = sorted(n for n, s in COMPOSE["services"].items() if n.startswith("receiver-"))
    ports = {n: (free_port(), free_port()) for n in names}
    running: dict[str, dict[str, Any]] = {}
    logs: list[Any] = []
    for name in names:
        service = COMPOSE["services"][name]
        http, grpc_port = ports[name]
        store = f"chdb://{tmp_path / name}?create=true"  # the ClickHouse server's stand-in, one per process
        command: list[str] = []
        for part in (str(p) for p in service["command"]):
            part = part.replace("0.0.0.0", "127.0.0.1")  # noqa: S104 - rewriting the compose bind address
            part = part.replace("clickhouse://coordbench@clickhouse:8123/otel", store)
            for other, (other_http, _) in ports.items():
                part = part.replace(f"http://{other}:4318", f"http://127.0.0.1:{other_http}")
            command.append(part)
        command[command.index("--port") + 1] = str(http)
        command[command.index("--grpc-port") + 1] = str(grpc_port)
        env = {**subprocess_env, **{k: _compose_value(str(v)) for k, v in service["environment"].items()}}
        env["COORDBENCH_EVALUATE_QUIET"] = "0.3"
        assert service["entrypoint"][0] == "coordbench"
        log = (tmp_path / f"{name}.log").open("wb")
        logs.append(log)
        process = subprocess.Popen(
            [sys.executable, "-m", "coordbench", *service["entrypoint"][1:], *command],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        running[name] = {"url": f"http://127.0.0.1:{http}", "grpc": grpc_port, "store": store, "process": process}
    try:
        for name, receiver in running.items():
            health = COMPOSE["services"][name]["healthcheck"]["test"][-1].replace(
                "127.0.0.1:4318", receiver["url"].removeprefix("http://")
            )
            while True:  # the process's own answer decides, however slow the machine
                assert receiver["process"].poll() is None, (tmp_path / f"{name}.log").read_text()
                try:
                    if httpx.get(health, timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
        yield running
    finally:
        for receiver in running.values():
            receiver["process"].terminate()
        for receiver in running.values():
            receiver["process"].wait(60)
        for log in logs:
            log.close()


def _load() -> list[SpanData]:
    shapes = [(GOOD, "travel"), (SERIAL, "travel"), (FAILING, "billing")]
    spans: list[SpanData] = []
    for n in range(12):
        team, namespace = shapes[n % len(shapes)]
        spans += team_trace(300 + n, team, namespace=namespace)
    at = time.time_ns()
    return [
        s._replace(start_time_unix_nano=s.start_time_unix_nano + at, end_time_unix_nano=s.end_time_unix_nano + at)
        for s in spans
    ]


def _expand(sql: str, since: int, until: int) -> str:
    """Grafana's ClickHouse data source's ``$__timeFilter(column)``, for the range ``since`` to ``until``."""
    return re.sub(
        r"\$__timeFilter\((\w+)\)", lambda m: f"{m[1]} >= toDateTime({since}) AND {m[1]} <= toDateTime({until})", sql
    )


def test_the_scale_profile_routes_evaluates_and_writes_evaluations_to_clickhouse(
    receivers: dict[str, dict[str, Any]],
) -> None:
    hostnames = SCALE["exporters"]["load_balancing"]["resolver"]["static"]["hostnames"]
    ring = HashRing(hostnames)
    spans = _load()
    traces = sorted({s.trace_id for s in spans})
    by_receiver: dict[str, list[SpanData]] = defaultdict(list)
    for span in spans:
        by_receiver[ring.endpoint_for(span.trace_id).split(":")[0]].append(span)
    assert set(by_receiver) == set(receivers), "both receivers take part of the load"
    for name, part in by_receiver.items():  # OTLP/gRPC to the port the load balancer's hostnames name
        with grpc.insecure_channel(f"127.0.0.1:{receivers[name]['grpc']}") as channel:
            TraceServiceStub(channel).Export(export_request(part), timeout=60)
    owner = {t: ring.endpoint_for(t).split(":")[0] for t in traces}
    records = {t: evaluation(receivers[owner[t]]["url"], t) for t in traces}
    assert all(r["complete"] for r in records.values())
    # either receiver answers for a trace the other holds (--peer)
    for trace in traces[:3]:
        other = next(n for n in receivers if n != owner[trace])
        answer = httpx.get(f"{receivers[other]['url']}/v1/traces/{trace}/evaluation", timeout=30)
        assert answer.status_code == 200 and answer.json() == records[trace]
    # the profile's Prometheus scrapes each receiver's /metrics
    scraped = yaml.safe_load((ROOT / "dashboards/prometheus/prometheus-scale.yml").read_text())["scrape_configs"][0]
    for receiver in receivers.values():
        metrics = httpx.get(f"{receiver['url']}{scraped['metrics_path']}", timeout=30).text
        assert "coordbench_evaluation_score_count" in metrics
    for receiver in receivers.values():
        receiver["process"].terminate()
        receiver["process"].wait(60)

    # each receiver wrote the evaluations of the traces it holds to its ClickHouse
    for name, receiver in receivers.items():
        connection = connect(receiver["store"])
        try:
            written = connection.rows(
                "SELECT TraceId, Team, Score FROM otel.coordbench_evaluations FINAL ORDER BY TraceId"
            )
            assert written == [
                [t, records[t]["team"], records[t]["scenarios"][0]["score"]] for t in traces if owner[t] == name
            ]
            # the Collector's exporter would have written the spans beside them; the dashboard's SQL joins both
            ClickHouseTraces(connection).insert(by_receiver[name])
            now = int(time.time())
            results = [connection.rows(_expand(p.sql, now - 3600, now + 60)) for p in SQL_PANELS]
        finally:
            connection.close()
        mine = [t for t in traces if owner[t] == name]
        by_team = {row[0]: row for row in results[0]}
        assert set(by_team) == {records[t]["team"] for t in mine}
        assert sum(int(row[1]) for row in by_team.values()) == len(mine)
        weakest = results[1][0]
        lowest = min(mine, key=lambda t: (records[t]["scenarios"][0]["score"], t))
        assert weakest[0] == lowest and weakest[5] == sum(s.trace_id == lowest for s in spans)
        fired = {(row[0], row[1]) for row in results[2]}
        expected = {(records[t]["team"], f) for t in mine for f in records[t]["scenarios"][0]["fired"]}
        assert fired == expected
