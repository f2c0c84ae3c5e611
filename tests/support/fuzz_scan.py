"""Fuzz the native OTLP/protobuf scanner against protobuf, optionally with another build of it.

``python -m support.fuzz_scan [--extension PATH] [--seed N] [--count N]`` (from ``tests/``)
feeds the scanner mutated request bodies: the edits of :func:`support.mutate.mutate`, stacked
edits, length fields replaced by huge or overlong varints, and random bytes. Whatever the
scanner accepts must be a body protobuf parses, decoded to exactly the spans and rejections
of the protobuf path, and every accepted span must decode; the accepted spans, repeated and
shuffled, must also be grouped by trace (``group``) exactly as plain Python groups them.
Bodies are handed over in buffers of exactly their size, so an over-read is visible to
AddressSanitizer. ``--extension`` loads that build of
``coordbench.otlp._scan`` instead of the installed one (the sanitizer test passes one built
with AddressSanitizer and UndefinedBehaviorSanitizer). Prints one JSON line: the extension that
ran and the outcome counts; exits non-zero on the first difference.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import random
import sys
from collections.abc import Sequence
from typing import Any


def load_extension(path: str, name: str = "coordbench.otlp._scan") -> None:
    """Make ``path`` the extension module ``name`` that coordbench imports (before it imports it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load an extension from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module


def fuzz_arguments(description: str | None, name: str, count: int, argv: list[str] | None = None) -> argparse.Namespace:
    """A fuzz harness's command line (``--extension PATH --seed N --count N``); the build named is loaded as ``name``.

    ``count``: the default ``--count``; ``argv``: the arguments (default: the process's).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--extension", help=f"a build of {name} to load instead of the installed one")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=count)
    args = parser.parse_args(argv)
    if args.extension:
        load_extension(args.extension, name)
    return args


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _length_attack(body: bytes, rng: random.Random) -> bytes:
    """Overwrite a few bytes with a varint a length field should never hold, or an overlong one."""
    out = bytearray(body)
    at = rng.randrange(len(out))
    if rng.random() < 0.3:
        value = bytes([0xFF] * rng.randint(1, 12))  # runs past the 10 bytes a varint may take
    else:
        value = _varint(
            rng.choice([0, 1, 127, 128, 2**31 - 1, 2**31, 2**32 + 5, 2**63 - 1, 2**64 - 1, len(out), len(out) + 1])
        )
    out[at : at + rng.randint(0, 3)] = value
    return bytes(out)


def exact_buffer(body: bytes) -> ctypes.Array[ctypes.c_char]:
    """A copy of ``body`` in a buffer of exactly its size (a ``bytes`` has a NUL after its end).

    So under AddressSanitizer with ``PYTHONMALLOC=malloc``, reading even one byte past the end
    of the body is caught.
    """
    return (ctypes.c_char * len(body)).from_buffer_copy(body)


def reference_group(batch: Sequence[Any], overhead: int) -> tuple[dict[Any, dict[Any, Any]], dict[Any, int]]:
    """The batch grouped by trace then span id, first copy kept, and each group's bytes: written plainly."""
    groups: dict[Any, dict[Any, Any]] = {}
    for span in batch:
        groups.setdefault(span[0], {}).setdefault(span[1], span)
    return groups, {t: sum(len(s[4]) + overhead for s in g.values()) for t, g in groups.items()}


def ordered(grouped: tuple[dict[Any, dict[Any, Any]], dict[Any, int]]) -> list[Any]:
    """``(groups, sizes)`` as nested lists, so that comparing them compares the order too."""
    groups, sizes = grouped
    return [[(t, list(g.items()), sizes[t]) for t, g in groups.items()], list(sizes)]


def shuffled_batch(spans: list[Any], rng: random.Random) -> list[Any]:
    """``spans`` with repeats, interleaved, some trace ids as equal but distinct objects."""
    batch = [*spans, *rng.sample(spans, rng.randint(0, len(spans)))]
    rng.shuffle(batch)
    return [s._replace(trace_id=bytes(bytearray(s.trace_id))) if rng.random() < 0.3 else s for s in batch]


def run(seed: int, count: int) -> dict[str, int]:
    """``count`` mutated bodies from ``seed``; the outcome counts (raises AssertionError on a difference)."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from coordbench.otlp import decode_protobuf, export_request, native
    from coordbench.otlp.decode import OTLP_PROTOBUF, _envelope  # pyright: ignore[reportPrivateUsage]
    from support.mutate import mutate
    from support.spans import varied_spans

    assert native.AVAILABLE, "coordbench.otlp._scan is not built"
    rng = random.Random(seed)
    bodies = [export_request(varied_spans(n)).SerializeToString() for n in (1, 2, 4, 9, 30)]
    counts = {"accepted": 0, "declined, protobuf parses": 0, "declined, protobuf refuses": 0}
    for i in range(count):
        pick = rng.random()
        body = rng.choice(bodies)
        if pick < 0.6:
            body = mutate(body, rng)
        elif pick < 0.85:
            body = _length_attack(body, rng)
        elif pick < 0.95:
            body = mutate(mutate(mutate(body, rng), rng), rng)
        else:
            body = rng.randbytes(rng.randint(0, 200))
        try:
            ExportTraceServiceRequest.FromString(body)
            parses = True
        except DecodeError:
            parses = False
        fast = native.scan(exact_buffer(body), OTLP_PROTOBUF, _envelope)  # pyright: ignore[reportArgumentType]
        if fast is None:
            counts["declined, protobuf parses" if parses else "declined, protobuf refuses"] += 1
            continue
        assert parses, f"seed {seed}, body {i}: the scanner accepted a body protobuf refuses"
        native.AVAILABLE = False
        try:
            reference = decode_protobuf(body)
        finally:
            native.AVAILABLE = True
        spans, rejected = fast
        assert spans == reference.spans, f"seed {seed}, body {i}: spans differ from the protobuf path"
        reasons = {r: n for r, n in zip(native.REJECTION_REASONS, rejected, strict=True) if n}
        assert reasons == dict(reference.rejected), f"seed {seed}, body {i}: rejections differ"
        for span in spans:
            span.decode()
        batch = shuffled_batch(spans, rng) if spans else []
        grouped = native.group(batch, 330)
        assert grouped is not None and ordered(grouped) == ordered(reference_group(batch, 330)), (
            f"seed {seed}, body {i}: group() differs from the reference"
        )
        counts["accepted"] += 1

    class _Raised(Exception):
        pass

    def failing_envelope(resource: bytes | None, scope: bytes | None) -> object:
        raise _Raised

    for body in bodies:  # an error in the envelope callback comes out as itself
        try:
            native.scan(body, OTLP_PROTOBUF, failing_envelope)
        except _Raised:
            continue
        raise AssertionError("the envelope callback's error was lost")
    return counts


def main() -> None:
    """Command line: see the module docstring."""
    args = fuzz_arguments(__doc__.splitlines()[0] if __doc__ else None, "coordbench.otlp._scan", 100_000)
    counts = run(args.seed, args.count)
    extension = sys.modules["coordbench.otlp._scan"].__file__
    print(json.dumps({"extension": extension, "counts": counts}))


if __name__ == "__main__":
    main()
