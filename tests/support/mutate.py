"""Seeded mutations of encoded bodies and of JSON documents, for differential tests of the decoders."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any


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


def paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON document (keys and indices from the top), the document itself first."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():  # pyright: ignore[reportUnknownVariableType]
            yield from paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            yield from paths(value, (*path, index))


def replace(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    """Put a copy of ``value`` at ``path`` in ``doc``."""
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = copy.deepcopy(value)
