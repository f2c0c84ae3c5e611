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
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from coordbench.otlp import OtlpDecodeError, decode_json, decode_protobuf, export_request, export_request_json
from coordbench.spans import SpanData, SpanEvent, SpanKind, SpanLink
from support.spans import sid, span

ROUNDS = 1500


def _spans(count: int) -> list[SpanData]:
    out = [
        span(
            f"s{i}",
            kind=SpanKind(1 + i % 3),
            service=f"agent-{i % 2}",
            parent=sid(1) if i else None,
            n=i,
            ok=True,
            f=0.5,
            tags=("a", "b"),
            kv={"k": i},
        )
        for i in range(count)
    ]
    out[0] = out[0]._replace(events=(SpanEvent("e", 5, {"x": 1}),), links=(SpanLink("ab" * 16, sid(9), {"y": 2}),))
    return out


def _valid_ids(s: Span) -> bool:
    return (
        len(s.trace_id) == 16
        and len(s.span_id) == 8
        and any(s.trace_id)
        and any(s.span_id)
        and len(s.parent_span_id) in (0, 8)
    )


def _mutate(body: bytes, rng: random.Random) -> bytes:
    out = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        if op < 0.4 and out:
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif op < 0.55 and out:
            del out[rng.randrange(len(out)) :]
        elif op < 0.8:
            out.insert(rng.randrange(len(out) + 1), rng.randrange(256))
        elif out:
            start = rng.randrange(len(out))
            out[start:start] = out[start : start + rng.randint(1, 40)]  # repeat a stretch
    return bytes(out)


def test_mutated_protobuf_is_refused_or_decoded_exactly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)  # slices that do not line up log a warning; that path is checked too
    rng = random.Random(20261122)
    bodies = [export_request(_spans(n)).SerializeToString() for n in (1, 3, 6)]
    outcomes = {"refused": 0, "decoded": 0}
    for _ in range(ROUNDS):
        body = _mutate(rng.choice(bodies), rng)
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


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from _paths(value, (*path, index))


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = copy.deepcopy(value)


def _span_entries(doc: Any) -> int | None:
    """How many span entries the document holds, or ``None`` if its outer shape is broken."""
    try:
        return sum(len(scope["spans"] or []) for r in doc["resourceSpans"] for scope in r["scopeSpans"])
    except (KeyError, TypeError):
        return None


def test_mutated_json_is_refused_or_every_span_accounted_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    rng = random.Random(1122)
    docs = [export_request_json(_spans(n)) for n in (2, 4)]
    outcomes = {"refused": 0, "decoded": 0, "rejected spans": 0}
    for _ in range(ROUNDS):
        doc = copy.deepcopy(rng.choice(docs))
        paths = list(_paths(doc))[1:]
        for _ in range(rng.randint(1, 2)):
            _replace(doc, rng.choice(paths), rng.choice(_JUNK))
            paths = list(_paths(doc))[1:]
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
