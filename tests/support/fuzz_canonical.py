"""Fuzz the native canonical JSON writer against the Python path, optionally with another build of it.

``python -m support.fuzz_canonical [--extension PATH] [--seed N] [--count N]`` (from ``tests/``)
writes random values with :func:`coordbench.graph.metrics.result.canonical_json` (the C writer
first) and with :func:`~coordbench.graph.metrics.result.python_canonical_json`: nested dicts,
lists and tuples of every JSON type, floats of every magnitude and the non-finite ones,
integers past 64 bits, strings of any code point (control characters, lone surrogates,
characters of four UTF-8 bytes), keys that collide once sorted, and what the C writer must hand
back (subclasses, keys that are not strings, nesting past its bound). Both must write the same
bytes or raise the same exception type. ``--extension`` loads that build of
``coordbench.graph.metrics._canonical`` instead of the installed one (the sanitizer test passes
one built with AddressSanitizer and UndefinedBehaviorSanitizer). Prints one JSON line: the
extension that ran and the outcome counts; exits non-zero on the first difference.
"""

from __future__ import annotations

import enum
import json
import math
import random
import sys
from typing import Any

from support.fuzz_scan import fuzz_arguments

NAME = "coordbench.graph.metrics._canonical"
FLOATS = [0.0, -0.0, 1.0, 0.1, 1 / 3, 2.0**53, 2.0**53 - 1, 1e12, 1e16, 1e-7, 5e-324, 1.7976931348623157e308,
          math.inf, -math.inf, math.nan]  # fmt: skip


class _Kind(enum.IntEnum):
    A = 1


class _Number(float):
    __slots__ = ()


def _text(rng: random.Random) -> str:
    size = rng.choice([0, 1, 2, 5, 20, 200])
    pools = [
        lambda: chr(rng.randrange(0x20)),  # control characters
        lambda: rng.choice('"\\/\x7f'),
        lambda: chr(rng.randrange(0x20, 0x7F)),
        lambda: chr(rng.randrange(0x80, 0x800)),
        lambda: chr(rng.randrange(0x800, 0xD800)),
        lambda: chr(rng.randrange(0xD800, 0xE000)),  # a lone surrogate: handed back
        lambda: chr(rng.randrange(0xE000, 0x110000)),
    ]
    weights = [2, 1, 10, 2, 2, 0.05, 2]
    return "".join(rng.choices(pools, weights)[0]() for _ in range(size))


def _scalar(rng: random.Random) -> Any:
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 1, 2**63, -(2**63) - 1, 10**30, rng.randrange(-(10**6), 10**6)])
    if kind == 2:
        return rng.choice(FLOATS)
    if kind == 3:
        return rng.uniform(-1e13, 1e13)
    if kind == 4:
        return math.ldexp(rng.random(), rng.randrange(-1074, 1024))
    if kind == 5:
        return rng.choice([_Kind.A, _Number(0.5), b"x", {1, 2}]) if rng.random() < 0.1 else rng.random()
    return _text(rng)


def _key(rng: random.Random) -> Any:
    if rng.random() < 0.02:
        return rng.choice([1, None, 1.5, _Kind.A])  # not a string: handed back
    return rng.choice(["a", "A", "b", "", "a\x00", "é", "ab"]) if rng.random() < 0.5 else _text(rng)


def _value(rng: random.Random, depth: int) -> Any:
    if depth <= 0 or rng.random() < 0.35:
        return _scalar(rng)
    kind = rng.randrange(3)
    width = rng.randrange(6)
    if kind == 0:
        return {_key(rng): _value(rng, depth - 1) for _ in range(width)}
    items = [_value(rng, depth - 1) for _ in range(width)]
    return items if kind == 1 else tuple(items)


def _deep(rng: random.Random, bound: int) -> Any:
    value: Any = _scalar(rng)
    for _ in range(bound + rng.randrange(-2, 3)):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _outcome(write: Any, value: Any) -> tuple[str, str]:
    try:
        return "written", write(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return "raised", type(exc).__name__


def main(argv: list[str] | None = None) -> None:
    args = fuzz_arguments(__doc__, NAME, 20_000, argv)
    from coordbench.graph.metrics import result

    native = sys.modules[NAME]
    if result._NATIVE is not native.canonical_json:  # pyright: ignore[reportPrivateUsage]
        raise SystemExit("the native writer is not in use")
    rng = random.Random(args.seed)
    counts = {"written": 0, "handed back": 0, "raised": 0}
    for n in range(args.count):
        value = _deep(rng, native.MAX_DEPTH) if n % 50 == 0 else _value(rng, rng.randrange(1, 6))
        try:
            handed = native.canonical_json(value) is None
        except (TypeError, ValueError, RecursionError):
            handed = True  # raised: the Python path raises its own
        expected = _outcome(result.python_canonical_json, value)
        got = _outcome(result.canonical_json, value)
        if got != expected:
            raise SystemExit(f"value {n} (seed {args.seed}): {value!r}\nnative: {got!r}\npython: {expected!r}")
        if expected[0] == "written":
            json.loads(got[1])
        counts["raised" if expected[0] == "raised" else "handed back" if handed else "written"] += 1
    print(json.dumps({"extension": getattr(native, "__file__", None), "counts": counts}))


if __name__ == "__main__":
    main()
