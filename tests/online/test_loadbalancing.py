"""Three receivers behind the Collector's load balancer evaluate what one receiver would.

The load-balancing exporter cannot run here, so a small router routes the load as it does
(:mod:`support.hashring`): each batch split by trace, each trace sent to the endpoint its id hashes
to on the ring built from ``collector/loadbalancing.yaml``'s own hostnames. Three receiver processes
stand for those hostnames; a fourth takes the whole load alone. Each trace's evaluation, and every
evaluation metric summed over the three, must equal the single receiver's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from coordbench.spans import SpanData
from online.traces import CRASHED, FAILING, GOOD, SERIAL, evaluation, post, team_trace, trace_id
from support.commands import ServerProcess
from support.hashring import HashRing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COMMAND = [sys.executable, "-m", "coordbench.cli"]

TIMING = ("coordbench_evaluation_duration", "coordbench_evaluation_run_duration")
"""Evaluation metrics that time the machine, not the traces: left out of the comparison."""
HELD_NOW = ("coordbench_store_", "coordbench_evaluation_queue", "coordbench_evaluation_pending", "coordbench_exports")
"""Gauges of what a receiver holds at the moment: each receiver's own."""


def _hostnames() -> list[str]:
    config = yaml.safe_load((ROOT / "collector" / "loadbalancing.yaml").read_text())
    return list(config["exporters"]["load_balancing"]["resolver"]["static"]["hostnames"])


def _load() -> list[SpanData]:
    """A mixed load: four team shapes from three teams, 24 traces."""
    shapes = [(GOOD, "travel"), (SERIAL, "travel"), (FAILING, "billing"), (CRASHED, "support")]
    spans: list[SpanData] = []
    for n in range(24):
        team, namespace = shapes[n % len(shapes)]
        spans += team_trace(100 + n, team, namespace=namespace)
    return spans


def _batches(spans: list[SpanData], traces_per_batch: int = 5) -> list[list[SpanData]]:
    """The load as a collector receives it: batches that mix traces, their spans shuffled among each other.

    Each trace's spans travel in one batch, so each receiver gets them in one request, as the single
    receiver does: a trace split over requests further apart than the quiet period could be evaluated
    before its last spans on one side and not the other (a second revision), which is timing, not routing.
    """
    by_trace: dict[str, list[SpanData]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    ids = sorted(by_trace)
    batches: list[list[SpanData]] = []
    for i in range(0, len(ids), traces_per_batch):
        batch = [s for t in ids[i : i + traces_per_batch] for s in by_trace[t]]
        batches.append(sorted(batch, key=lambda s: (s.span_id, s.trace_id)))
    return batches


def _evaluation_samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        if not family.name.startswith("coordbench_") or family.name.startswith(TIMING + HELD_NOW):
            continue
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def test_receivers_behind_the_load_balancer_evaluate_as_one_receiver(tmp_path: Path) -> None:
    env = {**os.environ, "COORDBENCH_EVALUATE_QUIET": "0.3", "COORDBENCH_EVALUATE_SETTLE": "2"}
    hostnames = _hostnames()
    assert len(hostnames) == 3
    ring = HashRing(hostnames)
    spans = _load()
    traces = sorted({s.trace_id for s in spans})
    with (
        ServerProcess("receiver", "--evaluate", "--no-grpc", env=env) as alone,
        ServerProcess("receiver", "--evaluate", "--no-grpc", env=env) as first,
        ServerProcess("receiver", "--evaluate", "--no-grpc", env=env) as second,
        ServerProcess("receiver", "--evaluate", "--no-grpc", env=env) as third,
    ):
        receivers = {hostnames[0]: first, hostnames[1]: second, hostnames[2]: third}
        routed: dict[str, list[SpanData]] = defaultdict(list)
        for batch in _batches(spans):
            post(alone.url, batch)
            by_endpoint: dict[str, list[SpanData]] = defaultdict(list)
            for span in batch:
                by_endpoint[ring.endpoint_for(span.trace_id)].append(span)
            for endpoint, part in sorted(by_endpoint.items()):
                post(receivers[endpoint].url, part)
                routed[endpoint] += part
        owner = {t: receivers[ring.endpoint_for(t)] for t in traces}
        assert all(routed[h] for h in hostnames), "each receiver takes part of the load"

        for trace in traces:
            single = evaluation(alone.url, trace)
            shared = evaluation(owner[trace].url, trace)
            assert shared["evaluation"] == single["evaluation"], trace
            assert {k: v for k, v in shared.items() if k != "evaluated_unix_nano"} == {
                k: v for k, v in single.items() if k != "evaluated_unix_nano"
            }
        assert sum(not evaluation(alone.url, t)["complete"] for t in traces) == 6  # the crashed team's, settled

        # every evaluation metric (and the span counters), summed over the three, is the single receiver's
        summed: dict[tuple[str, tuple[tuple[str, str], ...]], float] = defaultdict(float)
        for receiver in receivers.values():
            for key, value in _evaluation_samples(receiver.url).items():
                summed[key] += value
        whole = _evaluation_samples(alone.url)
        assert any(name == "coordbench_evaluation_score_count" for name, _ in whole)
        assert dict(summed) == pytest.approx(whole)

        # with --peer, any receiver answers for a trace another holds
        with ServerProcess(
            "receiver", "--no-grpc", "--evaluate", "--peer", first.url, "--peer", third.url, env=env
        ) as front:
            elsewhere = next(t for t in traces if owner[t] is third)
            answer = httpx.get(f"{front.url}/v1/traces/{elsewhere}", timeout=30)
            assert answer.status_code == 200 and answer.headers["x-coordbench-peer"] == third.url
            assert len(answer.json()["spans"]) == sum(s.trace_id == elsewhere for s in spans)
            record = httpx.get(f"{front.url}/v1/traces/{elsewhere}/evaluation", timeout=30)
            assert record.status_code == 200 and record.json() == evaluation(third.url, elsewhere)
            missing = httpx.get(f"{front.url}/v1/traces/{trace_id(999)}", timeout=30)
            assert missing.status_code == 404  # no peer holds it: the front's own answer

        # coordbench evaluate finds each trace on whichever receiver holds it
        every = [arg for r in receivers.values() for arg in ("--receiver", r.url)]
        for trace in traces[:4]:
            done = subprocess.run(
                [*COMMAND, "evaluate", "--trace-id", trace, *every], capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, done.stderr
            raw = httpx.get(f"{owner[trace].url}/v1/traces/{trace}/evaluation", timeout=30).text
            assert raw.endswith(',"evaluation":' + done.stdout.strip() + "}")
        done = subprocess.run(
            [*COMMAND, "evaluate", "--trace-id", trace_id(999), *every], capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 2
        assert f"trace {trace_id(999)} is on none of the 3 receivers" in " ".join(done.stderr.split())


def test_a_peer_that_is_no_url_is_refused() -> None:
    done = subprocess.run(
        [*COMMAND, "receiver", "--no-grpc", "--port", "0", "--peer", "receiver-2:4318"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2
    assert "a peer is a receiver's http(s):// URL, got 'receiver-2:4318'" in " ".join(done.stderr.split())
