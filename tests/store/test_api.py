"""Read API: one trace with completeness, waiting, paged listing, counters, and bad input."""

from __future__ import annotations

import threading

import httpx

from conftest import Backend, StartBackend
from coordbench.otlp import export_request
from support.spans import TRACE, call, serve, sid, span

PROTO = {"Content-Type": "application/x-protobuf"}


def post(backend: Backend, *spans: object) -> None:
    body = export_request(spans).SerializeToString()  # type: ignore[arg-type]
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTO).status_code == 200


def test_trace_with_completeness(backend: Backend) -> None:
    post(backend, span("root", span_id=sid(1), service="host"), call("host", "B", parent=sid(1), span_id=sid(2)))
    body = httpx.get(f"{backend.url}/v1/traces/{TRACE.upper()}").json()
    assert body["trace_id"] == TRACE
    assert body["completeness"]["complete"] is False
    assert body["completeness"]["unmatched_clients"] == [sid(2)]
    first = body["spans"][0]
    assert (first["name"], first["kind"], first["status"]["code"]) == ("root", "INTERNAL", "UNSET")


def test_wait_for_completion(backend: Backend) -> None:
    post(backend, span("root", span_id=sid(1), service="host"), call("host", "B", parent=sid(1), span_id=sid(2)))
    threading.Timer(0.3, lambda: post(backend, serve("B", parent=sid(2), span_id=sid(3)))).start()
    body = httpx.get(f"{backend.url}/v1/traces/{TRACE}", params={"wait": 10, "quiet": 0.2}, timeout=15).json()
    # it answered on the span's arrival, not at the end of the wait: complete, and not timed out
    assert body["completeness"]["complete"] is True and len(body["spans"]) == 3
    assert body["completeness"]["timed_out"] is False


def test_errors(backend: Backend) -> None:
    missing = httpx.get(f"{backend.url}/v1/traces/{'ab' * 16}")
    assert missing.status_code == 404 and missing.json()["detail"] == f"trace {'ab' * 16} not found"
    bad = httpx.get(f"{backend.url}/v1/traces/not-hex")
    assert bad.status_code == 400 and "32 hex digits" in bad.json()["detail"]
    assert httpx.get(f"{backend.url}/v1/traces", params={"limit": 0}).status_code == 422
    assert httpx.get(f"{backend.url}/v1/traces", params={"cursor": "%%%"}).status_code == 400
    assert httpx.get(f"{backend.url}/v1/traces/{TRACE}", params={"wait": -1}).status_code == 422


def test_listing(backend: Backend) -> None:
    for i in range(3):
        post(backend, span("s", trace_id=f"{i + 1:032x}", span_id=sid(1), service=f"svc{i}"))
    first = httpx.get(f"{backend.url}/v1/traces", params={"limit": 2}).json()
    second = httpx.get(f"{backend.url}/v1/traces", params={"limit": 2, "cursor": first["next"]}).json()
    assert [t["trace_id"][-1] for t in first["traces"] + second["traces"]] == ["3", "2", "1"]
    assert second["next"] is None
    assert first["traces"][0]["services"] == ["svc2"]


def test_a_large_trace_is_streamed_whole_and_in_order(backend: Backend) -> None:
    """Over two chunks of spans: the streamed document is one valid JSON object, spans by start time."""
    count = 1_234
    spans = [
        span(f"s{i}", span_id=sid(i + 1), parent=sid(1) if i else None, start_ms=(i * 7919) % count, end_ms=count)
        for i in range(count)
    ]
    for i in range(0, count, 500):
        post(backend, *spans[i : i + 500])
    response = httpx.get(f"{backend.url}/v1/traces/{TRACE}", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "content-length" not in response.headers  # streamed
    body = response.json()
    assert body["completeness"]["span_count"] == count
    got = [(s["start_time_unix_nano"], s["span_id"]) for s in body["spans"]]
    assert got == sorted((int(((i * 7919) % count) * 1e6), sid(i + 1)) for i in range(count))
    # the same again (but for the idle time): reading does not change what is read
    again = httpx.get(f"{backend.url}/v1/traces/{TRACE}", timeout=30).json()
    assert again["spans"] == body["spans"]
    assert {**again["completeness"], "idle_seconds": 0} == {**body["completeness"], "idle_seconds": 0}


def test_non_finite_doubles_are_null_in_json(backend: Backend) -> None:
    post(backend, span("odd", span_id=sid(1), nan=float("nan"), inf=float("-inf"), ok=0.5))
    attributes = httpx.get(f"{backend.url}/v1/traces/{TRACE}").json()["spans"][0]["attributes"]
    assert {k: attributes[k] for k in ("nan", "inf", "ok")} == {"nan": None, "inf": None, "ok": 0.5}


def _prometheus(text: str) -> dict[str, float]:
    """Samples of the Prometheus text format, keyed by name and labels (a small parser for the test)."""
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def test_metrics_for_a_prometheus_scrape(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=1_000, max_bytes=2_000_000)
    post(backend, span("root", span_id=sid(1), service="host"), call("host", "B", parent=sid(1), span_id=sid(2)))
    post(backend, span("root", span_id=sid(1), service="host"))  # a duplicate
    bad = export_request([span("x", span_id=sid(3))])
    bad.resource_spans[0].scope_spans[0].spans[0].trace_id = b"\x01" * 3  # rejected by the decoder
    httpx.post(f"{backend.url}/v1/traces", content=bad.SerializeToString(), headers=PROTO)
    response = httpx.get(f"{backend.url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = _prometheus(response.text)
    assert samples["coordbench_spans_received_total"] == 4
    assert samples["coordbench_spans_stored_total"] == 3
    assert samples["coordbench_spans_duplicates_total"] == 1
    assert samples["coordbench_spans_rejected_total"] == 1
    assert (
        samples['coordbench_spans_rejected_by_reason_total{reason="invalid trace_id (must be 16 non-zero bytes)"}'] == 1
    )
    assert (samples["coordbench_store_spans"], samples["coordbench_store_traces"]) == (2, 1)
    assert samples["coordbench_store_bytes"] == backend.stats()["bytes"] > 0
    assert (samples["coordbench_store_max_spans"], samples["coordbench_store_max_bytes"]) == (1_000, 2_000_000)
    assert samples["coordbench_exports_inflight"] == 0
    # every sample has its HELP and TYPE lines
    names = {key.split("{")[0] for key in samples}
    for name in names:
        assert f"# TYPE {name} " in response.text and f"# HELP {name} " in response.text
