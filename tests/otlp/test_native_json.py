"""The native OTLP/JSON scanner: built, and never different from the Python decoder.

``coordbench.otlp._jsonscan`` may leave a whole body to the Python decoder (``None``) or mark
single spans for it, but whatever it takes must be what the Python decoder takes, giving
exactly the same spans (ids, decoded span, envelope, in order), rejections and errors. Checked
on realistic requests, on a table of edge cases saying which path each takes and what it gets,
and on seeded edits of valid bodies (:mod:`support.fuzz_json`).
"""

from __future__ import annotations

import gc
import json
import os
from typing import Any

import pytest

from coordbench.otlp import OTLP_JSON, OTLP_JSON_TEXT, OtlpDecodeError, decode_json, export_request_json, native
from coordbench.otlp.jsondecode import _envelope  # pyright: ignore[reportPrivateUsage]
from coordbench.store.sizes import ENCODED_SPAN_OVERHEAD, held_bytes
from support.fuzz_json import outcome, python_outcome, run
from support.spans import varied_spans

needs_native = pytest.mark.skipif(not native.JSON_AVAILABLE, reason="coordbench.otlp._jsonscan is not built")


def test_the_extension_is_built() -> None:
    """`uv sync` compiles it (hatch_build.py); only an explicit COORDBENCH_NATIVE=0 turns it off."""
    if os.environ.get("COORDBENCH_NATIVE", "1") == "0":
        pytest.skip("turned off with COORDBENCH_NATIVE=0")
    assert native.JSON_AVAILABLE, (
        "coordbench.otlp._jsonscan did not build: run `uv sync` and read the build hook's message"
    )


def _path(body: bytes) -> str:
    """Which way the native scanner sends ``body``: taken whole, taken with spans marked, or declined."""
    try:
        scanned = native.scan_json(body, OTLP_JSON_TEXT, _envelope)
    except OtlpDecodeError:
        return "declined"
    if scanned is None:
        return "declined"
    return "marked" if scanned[1] else "taken"


@needs_native
def test_realistic_requests_are_taken_whole_and_match_the_python_decoder() -> None:
    sent = varied_spans(40)
    body = json.dumps(export_request_json(sent)).encode()
    result = decode_json(body)
    assert _path(body) == "taken"
    assert outcome(body) == python_outcome(body)
    assert sorted(s.decode() for s in result.spans) == sorted(sent)
    for span in result.spans:
        # the span's JSON text as sent, which the store counts by its size and writes as it is
        assert span.codec is OTLP_JSON_TEXT and json.loads(span.payload)["spanId"] == span.span_id.hex()
        assert held_bytes(span) == len(span.payload) + ENCODED_SPAN_OVERHEAD
        assert span.dump() == ("otlp/json-text", span.payload)
    # stored spans cannot be in a reference cycle: the cyclic collector need not walk them
    assert not any(gc.is_tracked(s) for s in result.spans)


_GOOD_SPAN: dict[str, Any] = {
    "traceId": "ab" * 16,
    "spanId": "cd" * 8,
    "parentSpanId": "ef" * 8,
    "name": "call",
    "kind": 3,
    "startTimeUnixNano": "1700000000000000000",
    "endTimeUnixNano": "1700000000000001000",
    "attributes": [{"key": "k", "value": {"stringValue": "v"}}],
    "status": {"code": 0, "message": ""},
}


def _body(span: Any = None, *, text: str | None = None, resource: Any = None) -> bytes:
    """A request of one span (``span`` merged into a valid one, or the span's raw ``text``)."""
    span_text = text if text is not None else json.dumps({**_GOOD_SPAN, **(span or {})})
    resource_text = json.dumps(resource if resource is not None else {"attributes": []})
    return (
        f'{{"resourceSpans": [{{"resource": {resource_text}, '
        f'"scopeSpans": [{{"scope": {{"name": "s"}}, "spans": [{span_text}]}}]}}]}}'
    ).encode()


def _nested(levels: int) -> Any:
    value: Any = {"stringValue": "bottom"}
    for _ in range(levels):
        value = {"arrayValue": {"values": [value]}}
    return value


_GOOD = json.dumps(_GOOD_SPAN)

# (case, body, the path it takes, what the request gets: "stored", "rejected: <reason>" or "400: <error>")
CASES: list[tuple[str, bytes, str, str]] = [
    ("a plain span", _body(), "taken", "stored"),
    ("ids in upper-case hex", _body({"traceId": "AB" * 16, "spanId": "CD" * 8}), "taken", "stored"),
    ("a root: parentSpanId empty", _body({"parentSpanId": ""}), "taken", "stored"),
    ("a root: parentSpanId null", _body({"parentSpanId": None}), "taken", "stored"),
    ("kind by its protobuf name", _body({"kind": "SPAN_KIND_CLIENT"}), "taken", "stored"),
    ("kind as a decimal string", _body({"kind": "3"}), "marked", "stored"),
    ("kind out of int32", _body({"kind": 2**31}), "marked", "rejected: invalid kind (out of int32 range)"),
    ("times as JSON numbers", _body({"startTimeUnixNano": 1, "endTimeUnixNano": 2}), "taken", "stored"),
    ("a 20-digit time", _body({"endTimeUnixNano": str(2**64 - 1)}), "marked", "stored"),
    (
        "a time past uint64",
        _body({"endTimeUnixNano": str(2**64)}),
        "marked",
        "rejected: invalid endTimeUnixNano (out of uint64 range)",
    ),
    (
        "a time as a float",
        _body({"endTimeUnixNano": 2.0}),
        "marked",
        "rejected: invalid endTimeUnixNano (not an integer)",
    ),
    (
        "intValue as a signed string",
        _body({"attributes": [{"key": "n", "value": {"intValue": "-12"}}]}),
        "taken",
        "stored",
    ),
    (
        "intValue with a plus sign",
        _body({"attributes": [{"key": "n", "value": {"intValue": "+12"}}]}),
        "marked",
        "stored",
    ),
    ("doubleValue NaN", _body({"attributes": [{"key": "d", "value": {"doubleValue": "NaN"}}]}), "taken", "stored"),
    (
        "doubleValue in lower case",
        _body({"attributes": [{"key": "d", "value": {"doubleValue": "nan"}}]}),
        "marked",
        "stored",
    ),
    ("bytesValue padded", _body({"attributes": [{"key": "b", "value": {"bytesValue": "QQ=="}}]}), "taken", "stored"),
    (
        "bytesValue unpadded",
        _body({"attributes": [{"key": "b", "value": {"bytesValue": "QQ"}}]}),
        "marked",
        "rejected: invalid bytesValue (not base64)",
    ),
    (
        "boolValue as a string",
        _body({"attributes": [{"key": "b", "value": {"boolValue": "true"}}]}),
        "marked",
        "rejected: invalid boolValue (not true or false)",
    ),
    (
        "an attribute without a key",
        _body({"attributes": [{"value": {}}]}),
        "marked",
        "rejected: invalid attribute (needs a string key)",
    ),
    ("values nested 64 levels", _body({"attributes": [{"key": "deep", "value": _nested(64)}]}), "taken", "stored"),
    (
        "values nested 65 levels",
        _body({"attributes": [{"key": "deep", "value": _nested(65)}]}),
        "marked",
        "rejected: invalid attribute value (nested deeper than 64 levels)",
    ),
    ("unknown fields of any shape", _body({"flags": 1, "x": [[{"y": None}]], "traceState": "a=b"}), "taken", "stored"),
    ("a lone surrogate escape in the name", _body(text=_GOOD.replace('"call"', '"cut \\ud83d"')), "marked", "stored"),
    ("an escaped key", _body(text=_GOOD.replace('"name"', '"n\\u0061me"')), "marked", "stored"),
    (
        "an escaped duplicate of spanId",
        _body(text=_GOOD.replace('"name"', '"spanI\\u0064": "00000000000000ff", "name"')),
        "marked",
        "stored",
    ),
    (
        "an all-zero trace id",
        _body({"traceId": "0" * 32}),
        "marked",
        "rejected: invalid trace_id (must be 16 non-zero bytes)",
    ),
    ("a short span id", _body({"spanId": "cd"}), "marked", "rejected: invalid span_id (must be 8 bytes)"),
    (
        "a missing trace id",
        _body(text=_GOOD.replace('"traceId"', '"other"')),
        "marked",
        "rejected: invalid trace_id (missing)",
    ),
    ("a link without ids", _body({"links": [{}]}), "marked", "rejected: invalid link traceId (missing)"),
    ("resourceSpans twice", b'{"resourceSpans": [], ' + _body()[1:], "declined", "stored"),
    ("a byte-order mark", b"\xef\xbb\xbf" + _body(), "declined", "stored"),
    (
        "a bare NaN (Python's json takes it)",
        _body(text=_GOOD.replace('"kind": 3', '"kind": 3, "x": NaN')),
        "declined",
        "stored",
    ),
    ("nesting of 300 in an unknown field", _body({"x": json.loads("[" * 300 + "]" * 300)}), "declined", "stored"),
    ("a span that is not an object", _body(text="1"), "declined", "400: spans must be a list of objects"),
    (
        "a resource attribute without a key",
        _body(resource={"attributes": [{"value": {}}]}),
        "declined",
        "400: resource: invalid attribute (needs a string key)",
    ),
    ("a body that is a list", b"[]", "declined", "400: the body must be an object"),
    ("a truncated body", _body()[:-3], "declined", "400: Expecting ',' delimiter"),
    ("data after the body", _body() + b" {}", "declined", "400: Extra data"),
    (
        "a raw control character in a string",
        _body(text=_GOOD.replace('"call"', '"a\x01b"')),
        "declined",
        "400: Invalid control character",
    ),
    ("invalid UTF-8", _body().replace(b'"call"', b'"\xff"'), "declined", "400: 'utf-8' codec can't decode"),
]


@needs_native
@pytest.mark.parametrize(("case", "body", "path", "gets"), CASES, ids=[c[0] for c in CASES])
def test_each_edge_case_takes_its_path_and_gets_what_the_python_decoder_gives(
    case: str, body: bytes, path: str, gets: str
) -> None:
    assert _path(body) == path
    mine = outcome(body)
    assert mine == python_outcome(body)  # the same spans, rejections or error, whichever path
    if gets == "stored":
        assert mine[0] == "decoded" and len(mine[1]) == 1 and not mine[2], mine
    elif gets.startswith("rejected: "):
        assert mine[0] == "decoded" and mine[1] == [] and mine[2] == [(gets.removeprefix("rejected: "), 1)], mine
    else:
        assert mine[0] == "refused" and gets.removeprefix("400: ") in mine[1], mine


@needs_native
def test_a_marked_span_taken_by_python_is_kept_decoded_beside_the_others() -> None:
    marked = {**_GOOD_SPAN, "spanId": "01" * 8, "kind": "3"}
    body = _body(text=_GOOD + ", " + json.dumps(marked) + ", " + json.dumps({**_GOOD_SPAN, "spanId": "02" * 8}))
    spans = decode_json(body).spans
    assert [s.span_id.hex() for s in spans] == ["cd" * 8, "01" * 8, "02" * 8]  # document order
    assert [s.codec for s in spans] == [OTLP_JSON_TEXT, OTLP_JSON, OTLP_JSON_TEXT]
    assert len({id(s.envelope) for s in spans}) == 1  # one scope, one envelope


@needs_native
def test_fuzzed_bodies_match_the_python_decoder() -> None:
    """A short in-process run of the campaign the sanitizer test runs longer (every path exercised)."""
    counts = run(seed=7, count=3000)
    assert min(counts.values()) >= 50, counts
