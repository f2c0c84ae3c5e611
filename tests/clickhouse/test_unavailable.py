"""ClickHouse going away under a running receiver: every route says so with 503 and Retry-After, nothing is lost.

The receiver answers an export it could not write with 503, so the sender (an SDK, a Collector)
keeps the spans and retries; reads answer 503 too, never a 500 or a hang.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from conftest import StartBackend
from coordbench.clickhouse import ClickHouseStore
from coordbench.otlp import export_request
from coordbench.server.state import backend_of
from online.traces import GOOD, PROTOBUF, team_trace, trace_id


def test_clickhouse_gone_answers_503_with_retry_after(start_backend: StartBackend, tmp_path: Path) -> None:
    backend = start_backend(store=f"chdb://{tmp_path / 'ch'}?create=true")
    body = export_request(team_trace(1, GOOD)).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTOBUF, timeout=30).status_code == 200
    store = backend_of(backend.app).store
    assert isinstance(store, ClickHouseStore)
    store.traces.connection.close()  # the server goes away

    export = httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTOBUF, timeout=30)
    assert export.status_code == 503 and int(export.headers["retry-after"]) >= 1
    read = httpx.get(f"{backend.url}/v1/traces/{trace_id(1)}", timeout=30)
    assert read.status_code == 503 and "ClickHouse" in read.json()["detail"]
    listing = httpx.get(f"{backend.url}/v1/traces", timeout=30)
    assert listing.status_code == 503
    counters = httpx.get(f"{backend.url}/v1/stats", timeout=30).json()
    spans = len(team_trace(1, GOOD))
    assert (counters["received"], counters["stored"], counters["rejected"]) == (2 * spans, spans, spans)
    assert counters["rejected_reasons"] == {"store_unavailable": spans}


def test_a_span_past_2262_is_refused_and_counted_the_rest_stored(start_backend: StartBackend, tmp_path: Path) -> None:
    backend = start_backend(store=f"chdb://{tmp_path / 'ch'}?create=true")
    spans = team_trace(1, GOOD)
    far = spans[0]._replace(span_id="00000000000000ff", start_time_unix_nano=2**63, end_time_unix_nano=2**63 + 5)
    body = export_request([*spans, far]).SerializeToString()
    assert httpx.post(f"{backend.url}/v1/traces", content=body, headers=PROTOBUF, timeout=30).status_code == 200
    counters = httpx.get(f"{backend.url}/v1/stats", timeout=30).json()
    assert (counters["received"], counters["stored"], counters["rejected"]) == (len(spans) + 1, len(spans), 1)
    assert counters["rejected_reasons"] == {"time_out_of_range": 1}
    document = httpx.get(f"{backend.url}/v1/traces/{trace_id(1)}", timeout=30).json()
    assert len(document["spans"]) == len(spans)


def test_strange_text_reaches_clickhouse_and_back(start_backend: StartBackend, tmp_path: Path) -> None:
    """A lone surrogate escaped in OTLP/JSON, NUL, a 100 kB value and a key of every script: stored, read back."""
    backend = start_backend(store=f"chdb://{tmp_path / 'ch'}?create=true")
    body = (
        '{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},'
        '"scopeSpans":[{"spans":[{"traceId":"' + "ab" * 16 + '","spanId":"' + "cd" * 8 + '","name":"n\\u0000\\ud800",'
        '"kind":1,"startTimeUnixNano":"1795000000000000000","endTimeUnixNano":"1795000000000000100",'
        '"attributes":[{"key":"k\\ud800\\u2028λ漢","value":{"stringValue":"' + "v" * 100_000 + '\\udfff"}}]}]}]}]}'
    )
    answer = httpx.post(
        f"{backend.url}/v1/traces", content=body.encode(), headers={"Content-Type": "application/json"}, timeout=30
    )
    assert answer.status_code == 200, answer.text  # the JSON decoder mends a lone surrogate to U+FFFD
    document = httpx.get(f"{backend.url}/v1/traces/{'ab' * 16}", timeout=30).json()
    (span,) = document["spans"]
    assert span["name"] == "n\u0000\ufffd"
    assert span["attributes"] == {"k\ufffd\u2028λ漢": "v" * 100_000 + "\ufffd"}
