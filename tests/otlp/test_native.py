"""The native OTLP/protobuf scanner: built, and never different from the protobuf path.

``coordbench.otlp._scan`` may decline a request (``None``: the protobuf path decides), but
whatever it accepts must be a request protobuf parses, giving exactly the spans, rejections and
envelopes the protobuf path gives. Checked on realistic requests, on hand-made edge cases and
on seeded mutations of valid bodies.
"""

from __future__ import annotations

import gc
import os
import random

import pytest
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from coordbench.otlp import OtlpDecodeError, decode_protobuf, export_request, native
from coordbench.otlp.decode import OTLP_PROTOBUF
from coordbench.otlp.model import DecodeResult
from coordbench.store.sizes import ENCODED_SPAN_OVERHEAD, group_by_trace, held_bytes
from support.fuzz_scan import ordered, reference_group, shuffled_batch
from support.mutate import mutate
from support.spans import varied_spans

needs_native = pytest.mark.skipif(not native.AVAILABLE, reason="coordbench.otlp._scan is not built")


def test_the_extension_is_built() -> None:
    """`uv sync` compiles it (hatch_build.py); only an explicit COORDBENCH_NATIVE=0 turns it off."""
    if os.environ.get("COORDBENCH_NATIVE", "1") == "0":
        pytest.skip("turned off with COORDBENCH_NATIVE=0")
    assert native.AVAILABLE, "coordbench.otlp._scan did not build: run `uv sync` and read the build hook's message"


def _protobuf_path(body: bytes, monkeypatch: pytest.MonkeyPatch) -> DecodeResult:
    with monkeypatch.context() as patch:
        patch.setattr(native, "AVAILABLE", False)
        return decode_protobuf(body)


def _same(fast: tuple[list, tuple[int, int, int]], reference: DecodeResult) -> None:  # type: ignore[type-arg]
    spans, rejected = fast
    assert spans == reference.spans  # ids, format, payload bytes and envelope, in wire order
    assert {r: n for r, n in zip(native.REJECTION_REASONS, rejected, strict=True) if n} == dict(reference.rejected)


@needs_native
def test_realistic_requests_take_the_native_path_and_match(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = varied_spans(40)
    body = export_request(sent).SerializeToString()
    fast = native.scan(body, OTLP_PROTOBUF, _envelope)
    assert fast is not None
    _same(fast, _protobuf_path(body, monkeypatch))
    assert sorted(s.decode() for s in fast[0]) == sorted(sent)
    # stored spans cannot be in a reference cycle: the cyclic collector need not walk them
    assert not any(gc.is_tracked(s) for s in fast[0])


def _envelope(resource: bytes | None, scope: bytes | None):  # type: ignore[no-untyped-def]
    from coordbench.otlp.decode import _envelope as envelope  # pyright: ignore[reportPrivateUsage]

    return envelope(resource, scope)


@needs_native
def test_envelopes_are_shared_across_requests() -> None:
    """The same resource and scope in two requests: one envelope object, not one per request."""
    first = decode_protobuf(export_request(varied_spans(3)).SerializeToString()).spans
    second = decode_protobuf(export_request(varied_spans(3)).SerializeToString()).spans
    assert first[0].envelope is second[0].envelope


def _request_with(span_bytes: bytes, *, extra_resource: bytes = b"") -> bytes:
    """A request of one resource and scope holding ``span_bytes`` as its only span, encoded by hand."""
    resource = _field(1, _field(1, b"service.name") + _field(2, _field(1, b"a")))  # Resource.attributes
    scope = _field(1, _field(1, b"s")) + _field(2, span_bytes)  # ScopeSpans: scope, spans
    return _field(1, _field(1, resource) + _field(2, scope) + extra_resource)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _nested(levels: int) -> bytes:
    """An ``AnyValue`` holding arrays ``levels`` deep (two message levels each), encoded by hand."""
    value = _field(1, b"leaf")  # AnyValue.string_value
    for _ in range(levels):
        value = _field(5, _field(1, value))  # AnyValue.array_value -> ArrayValue.values
    return value


GOOD = Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="good").SerializeToString()


@needs_native
@pytest.mark.parametrize(
    ("case", "body"),
    [
        # a known field with another wire type: protobuf keeps it as an unknown field
        ("span name sent as a varint", _request_with(GOOD + b"\x28\x01")),
        # a singular message sent twice: protobuf merges the two
        ("resource sent twice", _request_with(GOOD, extra_resource=_field(1, b"\x0a\x00"))),
        ("group field inside a span", _request_with(GOOD + bytes([0x9B, 0x06, 0x9C, 0x06]))),
        (
            "attribute values nested deeper than the scanner goes",
            # 2 x 40 message levels: within protobuf's limit of 100, beyond the scanner's 64
            _request_with(GOOD + _field(9, _field(1, b"deep") + _field(2, _nested(40)))),
        ),
    ],
)
def test_what_the_scanner_declines_the_protobuf_path_decodes(
    case: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert native.scan(body, OTLP_PROTOBUF, _envelope) is None, case
    ExportTraceServiceRequest.FromString(body)  # legal protobuf
    result = decode_protobuf(body)
    assert result.spans == _protobuf_path(body, monkeypatch).spans
    assert len(result.spans) == 1
    result.spans[0].decode()


@needs_native
@pytest.mark.parametrize(
    ("case", "span_bytes"),
    [
        ("bad UTF-8 in the span name", GOOD + b"\x2a\x02\xff\xfe"),
        ("a surrogate in UTF-8", GOOD + b"\x2a\x03\xed\xa0\x80"),
        ("an overlong encoding", GOOD + b"\x2a\x02\xc0\xaf"),
        ("bad UTF-8 in an attribute key", GOOD + _field(9, _field(1, b"\x80"))),
        ("a length past the end of the span", GOOD + b"\x2a\x7f"),
        ("field number 0", GOOD + b"\x02\x00"),
        ("wire type 7", GOOD + b"\x0f"),
    ],
)
def test_what_protobuf_refuses_the_scanner_declines(case: str, span_bytes: bytes) -> None:
    body = _request_with(span_bytes)
    with pytest.raises(DecodeError):
        ExportTraceServiceRequest.FromString(body)
    assert native.scan(body, OTLP_PROTOBUF, _envelope) is None, case
    with pytest.raises(OtlpDecodeError, match=r"cannot decode ExportTraceServiceRequest \(protobuf\)"):
        decode_protobuf(body)


@needs_native
def test_mutated_bodies_the_scanner_accepts_are_parsed_identically(monkeypatch: pytest.MonkeyPatch) -> None:
    """Differential check against protobuf: accepted ⊆ parseable, and then the same spans."""
    rng = random.Random(20261123)
    bodies = [export_request(varied_spans(n)).SerializeToString() for n in (1, 4, 9)]
    outcomes = {"accepted": 0, "declined, protobuf parses": 0, "declined, protobuf refuses": 0}
    for _ in range(3000):
        body = mutate(rng.choice(bodies), rng)
        try:
            ExportTraceServiceRequest.FromString(body)
            parses = True
        except DecodeError:
            parses = False
        fast = native.scan(body, OTLP_PROTOBUF, _envelope)
        if fast is None:
            outcomes["declined, protobuf parses" if parses else "declined, protobuf refuses"] += 1
            continue
        assert parses, "the scanner accepted a body protobuf refuses"
        _same(fast, _protobuf_path(body, monkeypatch))
        for encoded in fast[0]:
            encoded.decode()
        outcomes["accepted"] += 1
    assert min(outcomes.values()) >= 10, outcomes  # every branch was exercised


@needs_native
def test_spans_with_bad_ids_are_counted_like_the_protobuf_path(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = [
        Span(trace_id=b"\x01" * 15, span_id=b"\x02" * 8),
        Span(trace_id=bytes(16), span_id=b"\x02" * 8),
        Span(trace_id=b"\x01" * 16, span_id=bytes(8)),
        Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, parent_span_id=b"\x03"),
        Span(span_id=b"\x02" * 8),
    ]
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    scope.spans.extend([*bad, Span.FromString(GOOD)])
    body = request.SerializeToString()
    fast = native.scan(body, OTLP_PROTOBUF, _envelope)
    assert fast is not None
    assert fast[1] == (3, 1, 1)
    _same(fast, _protobuf_path(body, monkeypatch))


@needs_native
def test_group_matches_plain_python_on_shuffled_batches_with_repeats() -> None:
    """What the store calls for every batch: C grouping against a plain reference, order included."""
    rng = random.Random(20261124)
    sent = [s._replace(trace_id=f"{i % 5 + 1:032x}") for i, s in enumerate(varied_spans(60))]
    spans = decode_protobuf(export_request(sent).SerializeToString()).spans
    assert len({s.trace_id for s in spans}) == 5
    for _ in range(200):
        batch = shuffled_batch(rng.sample(spans, rng.randint(1, len(spans))), rng)
        grouped = native.group(batch, ENCODED_SPAN_OVERHEAD)
        assert grouped is not None
        assert ordered(grouped) == ordered(reference_group(batch, ENCODED_SPAN_OVERHEAD))
    assert native.group([], ENCODED_SPAN_OVERHEAD) == ({}, {})


@needs_native
def test_group_leaves_other_batches_to_python_and_refuses_non_spans() -> None:
    """Decoded payloads (OTLP/JSON) or ids that are not bytes: ``None``; anything but span tuples: TypeError."""
    span = decode_protobuf(export_request(varied_spans(1)).SerializeToString()).spans[0]
    decoded = span._replace(payload=span.decode())
    assert native.group([span, decoded], ENCODED_SPAN_OVERHEAD) is None
    assert native.group([span._replace(span_id="00" * 8)], ENCODED_SPAN_OVERHEAD) is None
    groups, sizes = group_by_trace([span, decoded])  # the Python code takes it: sizes from held_bytes
    assert list(groups[span.trace_id].values()) == [span]
    assert sizes == {span.trace_id: held_bytes(span)}
    with pytest.raises(TypeError, match="stored-span tuples"):
        native.group([span, "not a span"], ENCODED_SPAN_OVERHEAD)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="stored-span tuples"):
        native.group([(span.trace_id, span.span_id)], ENCODED_SPAN_OVERHEAD)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        native.group((span,), ENCODED_SPAN_OVERHEAD)  # type: ignore[arg-type]
