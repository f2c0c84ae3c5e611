"""``POST /traces`` on the plain receiver: Steps in, spans out; each bad input gets its status and reason."""

from __future__ import annotations

from typing import Any

import httpx

from conftest import StartBackend


def step(n: int, trace: str = "trace-1") -> dict[str, Any]:
    return {
        "step_id": f"step-{n}",
        "trace_id": trace,
        "call_type": "AGENT",
        "start_time": f"2026-01-01T00:00:0{n}Z",
        "end_time": f"2026-01-01T00:00:0{n + 1}Z",
        "step_action": {"agent_url": "http://b/", "agent_name": "B"},
    }


def test_the_receiver_takes_steps_and_answers_each_bad_input_with_its_reason(start_backend: StartBackend) -> None:
    backend = start_backend()
    with httpx.Client(base_url=backend.url, timeout=10) as http:
        ok = http.post("/traces", json={"agent": "A", "steps": [step(1), step(2)]})
        assert ok.status_code == 200 and (ok.json()["accepted"], ok.json()["stored"]) == (2, 2)
        (trace,) = ok.json()["traces"]
        spans = http.get(f"/v1/traces/{trace}").json()["spans"]
        assert {s["resource"]["service.name"] for s in spans} == {"A"}
        bad = http.post("/traces", json=[step(1), {**step(2), "call_type": "BOSS"}])
        assert bad.status_code == 400 and bad.json()["detail"].startswith("steps[1].call_type")
        not_json = http.post("/traces", content=b"{", headers={"content-type": "application/json"})
        assert not_json.status_code == 400 and not_json.json()["detail"].startswith("body is not JSON")
        plain = http.post("/traces", content=b"x", headers={"content-type": "text/plain"})
        assert plain.status_code == 415
        blank = http.post("/traces", content=b" " * 100, headers={"content-type": "application/json"})
        assert blank.status_code == 400 and blank.json()["detail"].startswith("body is not JSON")
        empty = http.post("/traces", json={"steps": []})
        assert (empty.status_code, empty.json()["detail"]) == (400, "steps: must be a non-empty list of Steps")


def test_a_full_store_answers_steps_with_503_and_retry_after(start_backend: StartBackend) -> None:
    backend = start_backend(max_spans=3, evict_after=3600)
    with httpx.Client(base_url=backend.url, timeout=10) as http:
        assert http.post("/traces", json=[step(1, "t-1"), step(2, "t-1")]).status_code == 200
        full = http.post("/traces", json=[step(3, "t-2"), step(4, "t-2")])
        assert full.status_code == 503 and int(full.headers["retry-after"]) >= 1
        assert "full" in full.json()["detail"]
        too_big = http.post("/traces", json=[step(n, "t-3") for n in range(1, 6)])
        assert too_big.status_code == 413


def test_a_body_over_the_cap_gets_413_before_it_is_read(start_backend: StartBackend) -> None:
    backend = start_backend(max_body_bytes=1024)
    with httpx.Client(base_url=backend.url, timeout=10) as http:
        answer = http.post("/traces", content=b"[" + b" " * 4096 + b"]", headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "larger than 1024 bytes" in answer.json()["detail"]
