"""Seeded mutations of encoded bodies, for differential tests of the decoders."""

from __future__ import annotations

import random


def mutate(body: bytes, rng: random.Random) -> bytes:
    """One to three random edits: set a byte, flip a bit, truncate, insert, delete or repeat a stretch."""
    out = bytearray(body)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        if not out or op < 0.2:
            out.insert(rng.randrange(len(out) + 1), rng.randrange(256))
        elif op < 0.45:
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif op < 0.6:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        elif op < 0.75:
            del out[rng.randrange(len(out)) :]
        elif op < 0.88:
            start = rng.randrange(len(out))
            del out[start : start + rng.randint(1, 8)]
        else:
            start = rng.randrange(len(out))
            out[start:start] = out[start : start + rng.randint(1, 40)]
    return bytes(out)
