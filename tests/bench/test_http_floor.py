"""The naive OTLP/JSON receiver the ingest benchmark measures coordbench against: it counts every span."""

from __future__ import annotations

import gzip
import json

import httpx

from benchmarks.http_floor import create_app
from benchmarks.payloads import bodies
from coordbench.testing import LoopbackServer


def test_the_parse_and_count_receiver_counts_plain_and_gzip_bodies() -> None:
    plain, squeezed = bodies(2, fmt="json", compress=False, spans_per_request=7)
    with LoopbackServer(lambda url: create_app(count_json=True)) as url, httpx.Client(base_url=url) as http:
        headers = {"Content-Type": "application/json"}
        assert http.post("/v1/traces", content=plain, headers=headers).status_code == 200
        gzipped = {**headers, "Content-Encoding": "gzip"}
        assert http.post("/v1/traces", content=gzip.compress(squeezed), headers=gzipped).status_code == 200
        # 7 spans a body, counted independently from the documents
        counted = sum(
            len(s["spans"]) for b in (plain, squeezed) for r in json.loads(b)["resourceSpans"] for s in r["scopeSpans"]
        )
        assert counted == 14
        assert http.get("/v1/stats").json() == {"stored": 14}


def test_the_floor_reads_and_drops_without_counting() -> None:
    (body,) = bodies(1, fmt="json", compress=False, spans_per_request=3)
    with LoopbackServer(lambda url: create_app()) as url, httpx.Client(base_url=url) as http:
        assert http.post("/v1/traces", content=body).status_code == 200
        assert http.get("/v1/stats").json() == {"stored": 0}
