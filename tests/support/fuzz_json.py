"""Fuzz the native OTLP/JSON scanner against the Python decoder, optionally with another build of it.

``python -m support.fuzz_json [--extension PATH] [--seed N] [--count N]`` (from ``tests/``)
feeds :func:`coordbench.otlp.decode_json` OTLP/JSON bodies edited three ways: bytes
(:func:`support.mutate.mutate`), JSON values replaced by junk of every type and form OTLP/JSON
allows or refuses (:data:`JUNK`), and text edits aimed at what the scanner reads (escapes,
digits, hex, signs, nesting). Whatever the native path makes of a body must be exactly what
the Python decoder alone makes of it: the same error, or the same spans (ids, full decoded span,
envelope, in order) and the same rejections by reason; every span it keeps must decode and
dump. Bodies go to the scanner in buffers of exactly their size, so an over-read is visible to
AddressSanitizer. ``--extension`` loads that build of ``coordbench.otlp._jsonscan`` instead of
the installed one (the sanitizer test passes one built with AddressSanitizer and
UndefinedBehaviorSanitizer). Prints one JSON line: the extension that ran and the outcome
counts; exits non-zero on the first difference.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from typing import Any

from support.fuzz_scan import fuzz_arguments
from support.mutate import paths, replace

JUNK: list[Any] = [
    None,
    0,
    -1,
    -0.0,
    1.5,
    1e300,
    10**30,
    -(2**63) - 1,
    2**63,
    "",
    "zz",
    "0",
    "-7",
    "+7",
    " 7",
    "1_000",
    "18446744073709551615",
    "18446744073709551616",
    "0" * 32,
    "AB" * 16,
    "ab" * 8,
    "SPAN_KIND_CLIENT",
    "STATUS_CODE_ERROR",
    "span_kind_client",
    "NaN",
    "Infinity",
    "cut \ud83d",
    "\ud83d\ude00",
    True,
    False,
    [],
    [1],
    [{}],
    {},
    {"a": 1},
    {"stringValue": 1},
    {"stringValue": None},
    {"stringValue": "a", "intValue": "x"},
    {"intValue": "x"},
    {"intValue": "-12"},
    {"intValue": str(2**63)},
    {"intValue": 10**18},
    {"intValue": 1.0},
    {"boolValue": "true"},
    {"doubleValue": 10**400},
    {"doubleValue": "-Infinity"},
    {"doubleValue": "nan"},
    {"doubleValue": 3},
    {"bytesValue": "!!"},
    {"bytesValue": "QUJD"},
    {"bytesValue": "QQ=="},
    {"bytesValue": "QQ"},
    {"arrayValue": {"values": 2}},
    {"arrayValue": {"values": None}},
    {"arrayValue": {"values": [{"boolValue": True}, {"kvlistValue": {"values": [{"key": "k"}]}}]}},
    {"kvlistValue": {"values": [{"key": 1}]}},
    {"kvlistValue": []},
    {"key": "k", "value": {"stringValue": "v"}},
    {"key": "k", "value": None},
    {"traceId": "ab" * 16, "spanId": "cd" * 8},
]
"""Values put in place of any value of a valid body."""


def _nested(levels: int, kind: str) -> Any:
    """An attribute value with ``levels`` arrayValue or kvlistValue levels inside each other."""
    value: Any = {"stringValue": "bottom"}
    for _ in range(levels):
        value = {kind: {"values": [value if kind == "arrayValue" else {"key": "k", "value": value}]}}
    return value


# the Python decoder takes 64 levels of nesting (coordbench.otlp.model.MAX_VALUE_DEPTH), not 65
JUNK += [_nested(levels, kind) for levels in (63, 64, 65) for kind in ("arrayValue", "kvlistValue")]

_TEXT_EDITS: list[tuple[bytes, bytes]] = [
    (b'"traceId"', b'"trace\\u0049d"'),
    (b'"name"', b'"spanI\\u0064": "00000000000000ff", "name"'),  # after the real spanId: json.loads keeps it
    (b'"kind"', b'"trace\\u0049d": "000000000000000000000000000000ff", "kind"'),
    (b'"spanId": "', b'"spanId": "\\u0030'),
    (b'"name": "', b'"name": "\\ud83d'),
    (b'"name": "', b'"name": "\\ud83d\\ude00'),
    (b'"name": "', b'"name": "\\udc00'),
    (b'"name": "', b'"name": "\\t\\"\\/'),
    (b'"key": "', b'"key": "\\n'),
    (b'"kind": ', b'"kind": -'),
    (b'"kind": ', b'"kind": 1'),
    (b'"startTimeUnixNano": "', b'"startTimeUnixNano": "-'),
    (b'"startTimeUnixNano": "', b'"startTimeUnixNano": "9'),
    (b'"intValue": "', b'"intValue": "-'),
    (b'"intValue": "', b'"intValue": "99'),
    (b'{"', b'{"x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], "'),
    (b'{"', b'{"dup": 1, "dup": 2, "'),
    (b'"spans": [', b'"spans": [1, '),
    (b'"resource": {', b'"resource": {"attributes": 5, '),
    (b'"scope": {', b'"scope": {"name": 5, '),
    (b": ", b": \xed\xa0\x80"),
    (b'"', b'"\xc3\xa9'),
    (b'"', b'"\xc0\xaf'),
    (b"0", b"0.0"),
    (b"0", b"0e0"),
    (b"1", b"1E+2"),
    (b"{", b"{ \r\n\t"),
    (b"]", b" ]"),
]
"""Text edits, each applied at one random place where its first part occurs."""


def junk_edit(document: Any, rng: random.Random) -> bytes:
    """``document`` with one or two of its values replaced by :data:`JUNK`, as JSON text."""
    doc = copy.deepcopy(document)
    for _ in range(rng.randint(1, 2)):
        replace(doc, rng.choice(list(paths(doc))[1:]), rng.choice(JUNK))
    return json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, None, 1])).encode(
        "utf-8", "surrogatepass"
    )


def text_edit(body: bytes, rng: random.Random) -> bytes:
    """One of :data:`_TEXT_EDITS` at a random place its pattern occurs (``body`` itself if none)."""
    old, new = rng.choice(_TEXT_EDITS)
    places = [i for i in range(len(body)) if body.startswith(old, i)]
    if not places:
        return body
    at = rng.choice(places)
    return body[:at] + new + body[at + len(old) :]


def outcome(body: bytes) -> tuple[Any, ...]:
    """What :func:`coordbench.otlp.decode_json` makes of ``body``: the error, or spans and rejections."""
    from coordbench.otlp import OtlpDecodeError, decode_json

    try:
        result = decode_json(body)
    except OtlpDecodeError as exc:
        return ("refused", str(exc))
    spans = [(s.trace_id, s.span_id, s.parent_span_id, repr(s.decode()), repr(s.envelope)) for s in result.spans]  # NaN
    return ("decoded", spans, sorted(result.rejected.items()))


def python_outcome(body: bytes) -> tuple[Any, ...]:
    """:func:`outcome` with the native scanner turned off."""
    from coordbench.otlp import native

    native.JSON_AVAILABLE = False
    try:
        return outcome(body)
    finally:
        native.JSON_AVAILABLE = True


def run(seed: int, count: int) -> dict[str, int]:
    """``count`` edited bodies from ``seed``; the outcome counts (raises AssertionError on a difference)."""
    from coordbench.otlp import OtlpDecodeError, export_request_json, native
    from coordbench.otlp.jsondecode import OTLP_JSON_TEXT, _envelope  # pyright: ignore[reportPrivateUsage]
    from support.fuzz_scan import exact_buffer
    from support.mutate import mutate
    from support.spans import varied_spans

    assert native.JSON_AVAILABLE, "coordbench.otlp._jsonscan is not built"
    rng = random.Random(seed)
    documents = [export_request_json(varied_spans(n)) for n in (1, 2, 4, 9)]
    bodies = [json.dumps(d).encode() for d in documents]
    counts = {"taken": 0, "taken, spans marked": 0, "declined, Python decodes": 0, "declined, Python refuses": 0}
    for i in range(count):
        pick = rng.random()
        if pick < 0.4:
            body = junk_edit(rng.choice(documents), rng)
        elif pick < 0.7:
            body = text_edit(text_edit(rng.choice(bodies), rng), rng)
        elif pick < 0.97:
            body = mutate(rng.choice(bodies), rng)
        else:
            body = rng.randbytes(rng.randint(0, 200))
        try:
            scanned = native.scan_json(exact_buffer(body), OTLP_JSON_TEXT, _envelope)  # pyright: ignore[reportArgumentType]
        except OtlpDecodeError:
            scanned = None
        mine, reference = outcome(body), python_outcome(body)
        assert mine == reference, (
            f"seed {seed}, body {i}: {body!r}\nnative: {mine!r:.3000}\npython: {reference!r:.3000}"
        )
        if scanned is None:
            counts["declined, Python decodes" if reference[0] == "decoded" else "declined, Python refuses"] += 1
            continue
        spans, marked = scanned
        assert marked == sum(s.trace_id is None for s in spans)
        for span in spans:
            if span.trace_id is not None:
                assert span.codec is OTLP_JSON_TEXT and span.payload.startswith(b"{")
                span.dump()
        counts["taken, spans marked" if marked else "taken"] += 1
    return counts


def main() -> None:
    """Command line: see the module docstring."""
    args = fuzz_arguments(__doc__.splitlines()[0] if __doc__ else None, "coordbench.otlp._jsonscan", 20_000)
    counts = run(args.seed, args.count)
    extension = sys.modules["coordbench.otlp._jsonscan"].__file__
    print(json.dumps({"extension": extension, "counts": counts}))


if __name__ == "__main__":
    main()
