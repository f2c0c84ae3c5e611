"""Fuzz the text measures' C loops against their Python versions, optionally with another build of them.

``python -m support.fuzz_text [--extension PATH] [--seed N] [--count N]`` (from ``tests/``) hands
``coordbench.evals._text`` random texts (every plane of Unicode, lone surrogates, combining marks,
letters whose lower case is longer or context-dependent, digits of other scripts, underscores,
runs of one character up to 20,000 long), random word tuples and random token lists (repeats,
shared and unshared terms, empty), and compares what ``words``, ``trigrams`` and
``pair_similarity`` return with the Python versions', bit for bit (the words interned, too). Then
what they must hand back (a str subclass, words not in a tuple, a document that is not a list or
tuple: ``None``) or refuse (not a float idf, the wrong number of arguments: ``TypeError``), never
crash. ``--extension`` loads that build instead of the installed one (the sanitizer test passes one
built with AddressSanitizer and UndefinedBehaviorSanitizer). Prints one JSON line: the extension
that ran and the outcome counts; exits non-zero on the first difference.
"""

from __future__ import annotations

import json
import random
import struct
import sys
from typing import Any

from support.fuzz_scan import fuzz_arguments

NAME = "coordbench.evals._text"
PIECES = [
    "a", "Z", "_", "7", " ", "\n", "\t", ".", "-", "'", "é", "É", "ß", "İ", "Σ", "ς", "ǅ", "ﬃ", "ŉ",
    "\u0301", "\u200d", "\u00a0", "٣", "五", "日本", "😀", "\U0001d7d8", "\ud800", "\udfff", "\x00", "Ⅻ", "²",
]  # fmt: skip
"""Characters the word test and ``str.lower`` treat specially, beside plain ones."""
TERMS = ["a", "an", "apple", "red", "green", "ça", "日本", "x_1", "Z9", "σς", "beta", "zz"]


class Text(str):
    """A str subclass: the C loops hand it back to the Python versions."""


def random_text(rng: random.Random) -> str:
    """A text of random pieces, any code point among them, now and then a long run of one piece."""
    if rng.random() < 0.05:
        return rng.choice(PIECES) * rng.randrange(20_000)
    out: list[str] = []
    for _ in range(rng.randrange(60)):
        roll = rng.random()
        if roll < 0.6:
            out.append(rng.choice(PIECES))
        elif roll < 0.8:
            out.append(chr(rng.randrange(0x110000)))
        else:
            out.append(rng.choice(TERMS))
    return "".join(out)


def random_tokens(rng: random.Random) -> list[str]:
    return [rng.choice(TERMS) for _ in range(rng.choice([0, 1, 2, rng.randrange(200)]))]


def bits(value: Any) -> Any:
    return struct.pack("<d", value) if isinstance(value, float) else value


def _refused(rng: random.Random, native: Any) -> tuple[str, Any]:
    """A call the C loops must refuse (``TypeError``) or hand back (``None``), and what it returned."""
    tokens = random_tokens(rng)
    calls: list[tuple[str, Any]] = [
        ("words(subclass)", lambda: native.words(Text(random_text(rng)))),
        ("words(not a str)", lambda: native.words(rng.choice([b"bytes", 3, None, ["a"]]))),
        ("trigrams(not str words)", lambda: native.trigrams(rng.choice([("a", Text("b"), "c"), ["a", "b"], "abc"]))),
        ("pair_similarity(subclass)", lambda: native.pair_similarity([*tokens, Text("a")], tokens, 1.4, 1.0)),
        (
            "pair_similarity(not a list)",
            lambda: native.pair_similarity(rng.choice([3, None, iter(tokens)]), tokens, 1.4, 1.0),
        ),
        ("pair_similarity(idf)", lambda: native.pair_similarity(tokens, tokens, rng.choice(["1", None]), 1.0)),
        ("pair_similarity(arguments)", lambda: native.pair_similarity(tokens, tokens)),
    ]
    name, call = rng.choice(calls)
    return name, call()


def main(argv: list[str] | None = None) -> None:
    args = fuzz_arguments(__doc__, NAME, 2_000, argv)
    from coordbench.evals import evidence, textcache, textsim

    native = sys.modules[NAME]
    if textsim.TEXT_KERNELS is not native:
        raise SystemExit("the native text loops are not in use")
    idf = textsim._PAIR_IDF  # pyright: ignore[reportPrivateUsage]
    rng = random.Random(args.seed)
    counts = {"same words": 0, "same trigrams": 0, "same cosine": 0, "handed back": 0, "raised": 0}
    for n in range(args.count):
        if n % 5 == 4:
            try:
                name, got = _refused(rng, native)
            except TypeError:
                counts["raised"] += 1
                continue
            if got is not None:
                raise SystemExit(f"case {n} (seed {args.seed}): {name} returned {got!r}")
            counts["handed back"] += 1
            continue
        text = random_text(rng)
        got, expected = native.words(text), textcache.python_words(text)
        if got != expected or any(sys.intern(w) is not w for w in got):
            raise SystemExit(f"case {n} (seed {args.seed}): words({text!r})\nnative: {got!r}\npython: {expected!r}")
        counts["same words"] += 1
        said = tuple(rng.choice(TERMS) for _ in range(rng.choice([0, 1, 2, 3, rng.randrange(300)])))
        for words in (got, said):
            grams = native.trigrams(words)
            if grams != evidence.python_trigrams(words) or type(grams) is not frozenset:
                raise SystemExit(f"case {n} (seed {args.seed}): trigrams({words!r}) = {grams!r}")
        counts["same trigrams"] += 1
        a, b = random_tokens(rng), random_tokens(rng)
        similarity = native.pair_similarity(a, b, idf[1], idf[2])
        if bits(similarity) != bits(textsim.python_pair_similarity(a, b)):
            raise SystemExit(f"case {n} (seed {args.seed}): pair_similarity({a!r}, {b!r}) = {similarity!r}")
        counts["same cosine"] += 1
    print(json.dumps({"extension": getattr(native, "__file__", None), "counts": counts}))


if __name__ == "__main__":
    main()
