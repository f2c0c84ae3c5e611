"""Mutated export requests: every body is either refused with OtlpDecodeError or decoded faithfully.

Deterministic (seeded) mutations of valid bodies. For protobuf, what we keep is checked against
an independent reading: protobuf's own parse of the same body, span by span. For JSON, every
span of the document is either kept (and decodes) or counted as rejected, and nothing else
escapes: a stray TypeError here is a 500 and a lost export at the receiver.
"""

from __future__ import annotations

import copy
import json
import logging
import random
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from coordbench.otlp import OtlpDecodeError, decode_json, decode_protobuf, export_request, export_request_json
from coordbench.spans import SpanData
from support.mutate import mutate, paths, replace
from support.spans import varied_spans

ROUNDS = 1500


def _valid_ids(s: Span) -> bool:
    return (
        len(s.trace_id) == 16
        and len(s.span_id) == 8
        and any(s.trace_id)
        and any(s.span_id)
        and len(s.parent_span_id) in (0, 8)
    )


@pytest.mark.usefixtures("decode_path")  # native scanner, then protobuf path
def test_mutated_protobuf_is_refused_or_decoded_exactly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)  # slices that do not line up log a warning; that path is checked too
    rng = random.Random(20261122)
    bodies = [export_request(varied_spans(n)).SerializeToString() for n in (1, 3, 6)]
    outcomes = {"refused": 0, "decoded": 0}
    for _ in range(ROUNDS):
        body = mutate(rng.choice(bodies), rng)
        try:
            expected = ExportTraceServiceRequest.FromString(body)
        except DecodeError:
            expected = None
        try:
            result = decode_protobuf(body)
        except OtlpDecodeError:
            assert expected is None, "protobuf parses a body we refused"
            outcomes["refused"] += 1
            continue
        assert expected is not None
        parsed = [s for r in expected.resource_spans for scope in r.scope_spans for s in scope.spans]
        assert result.received == len(parsed)
        kept = [s for s in parsed if _valid_ids(s)]
        assert len(result.spans) == len(kept)
        for encoded, reference in zip(result.spans, kept, strict=True):
            assert (encoded.trace_id, encoded.span_id) == (reference.trace_id, reference.span_id)
            assert encoded.parent_span_id == reference.parent_span_id
            assert Span.FromString(encoded.payload) == reference
            encoded.decode()
        outcomes["decoded"] += 1
    assert min(outcomes.values()) > 50, outcomes  # both paths were exercised


_JUNK: list[Any] = [
    None,
    0,
    -1,
    1.5,
    10**30,
    -(2**63) - 1,
    "18446744073709551616",
    {"intValue": str(2**63)},
    {"intValue": 10**400},
    {"doubleValue": 10**400},
    True,
    "",
    "zz",
    [],
    [1],
    {},
    {"a": 1},
    {"stringValue": 1},
    {"intValue": "x"},
    {"kvlistValue": []},
    {"arrayValue": 1},
    {"arrayValue": {"values": 2}},
    {"bytesValue": "!!"},
    {"doubleValue": "NaN"},
]


def _span_entries(doc: Any) -> int | None:
    """How many span entries the document holds, or ``None`` if its outer shape is broken."""
    try:
        return sum(len(scope["spans"] or []) for r in doc["resourceSpans"] for scope in r["scopeSpans"])
    except (KeyError, TypeError):
        return None


def test_mutated_json_is_refused_or_every_span_accounted_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    rng = random.Random(1122)
    docs = [export_request_json(varied_spans(n)) for n in (2, 4)]
    outcomes = {"refused": 0, "decoded": 0, "rejected spans": 0}
    for _ in range(ROUNDS):
        doc = copy.deepcopy(rng.choice(docs))
        places = list(paths(doc))[1:]
        for _ in range(rng.randint(1, 2)):
            replace(doc, rng.choice(places), rng.choice(_JUNK))
            places = list(paths(doc))[1:]
        body = json.dumps(doc).encode()
        try:
            result = decode_json(body)
        except OtlpDecodeError:
            outcomes["refused"] += 1
            continue
        entries = _span_entries(doc)
        if entries is not None:
            assert result.received == entries
        for encoded in result.spans:
            assert isinstance(encoded.decode(), SpanData)
            encoded.dump()  # what is accepted can be stored durably (as protobuf) too
        outcomes["decoded"] += 1
        outcomes["rejected spans"] += result.rejected_count
    assert min(outcomes.values()) > 50, outcomes
