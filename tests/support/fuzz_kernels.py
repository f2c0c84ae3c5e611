"""Fuzz the graph metrics' C kernels against their Python versions, optionally with another build of them.

``python -m support.fuzz_kernels [--extension PATH] [--seed N] [--count N]`` (from ``tests/``)
hands each kernel of ``coordbench.graph.metrics._kernels`` random graphs as rows of node indices
(nodes with no edge, self-loops, a neighbour named twice, up to 60 nodes) and random lengths and
values (zero, negative zero, subnormal, huge, infinite, NaN, ``None``, an int where a float is
due), and compares what it returns with the Python version's, bit for bit; a length the kernel
is not sure of must be handed back (``None``). Then rows that are not rows (an index out of
range, negative, past 64 bits, a bool, a float, a row that is not a list, a tuple of the wrong
size): the kernel must raise ``TypeError`` or ``ValueError``, never crash. ``--extension`` loads
that build instead of the installed one (the sanitizer test passes one built with
AddressSanitizer and UndefinedBehaviorSanitizer). Prints one JSON line: the extension that ran
and the outcome counts; exits non-zero on the first difference.
"""

from __future__ import annotations

import json
import math
import random
import struct
import sys
from typing import Any

from support.fuzz_scan import fuzz_arguments

NAME = "coordbench.graph.metrics._kernels"
LENGTHS = [0.0, -0.0, 1.0, 0.5, 1 / 3, 5e-324, 1e-300, 1e300, 1.7976931348623157e308, math.inf]
ODD_LENGTHS = [None, -1.0, -5e-324, math.nan, 1, True, "1"]
VALUES = [*LENGTHS, -1.0, -math.inf, math.nan, 2.0**-1074, 1e-17]


def bits(values: Any) -> Any:
    """``values`` with every float as its bytes: equal only when bit for bit the same (NaN included)."""
    if isinstance(values, float):
        return struct.pack("<d", values)
    if isinstance(values, list | tuple):
        return [bits(v) for v in values]  # pyright: ignore[reportUnknownVariableType]
    return values


def random_rows(rng: random.Random, most: int = 60) -> list[list[int]]:
    """A random graph as rows of neighbour indices (self-loops and repeats included)."""
    n = rng.choice([0, 1, 2, 3, rng.randrange(most + 1)])
    density = rng.random()
    rows: list[list[int]] = []
    for v in range(n):
        row = [w for w in range(n) if rng.random() < density * 0.3 and (w != v or rng.random() < 0.2)]
        rng.shuffle(row)
        if row and rng.random() < 0.1:
            row.append(rng.choice(row))  # a neighbour named twice
        rows.append(row)
    return rows


def random_lengths(rng: random.Random, rows: list[list[int]], odd: float) -> list[list[tuple[int, Any]]]:
    """``rows`` with a length on each edge; with probability ``odd`` an edge's length is one the kernel hands back."""
    return [[(w, rng.choice(ODD_LENGTHS) if rng.random() < odd else _length(rng)) for w in row] for row in rows]


def _length(rng: random.Random) -> float:
    return rng.choice(LENGTHS) if rng.random() < 0.3 else 1.0 / rng.randint(1, 60)


def random_columns(rng: random.Random, rows: list[list[int]]) -> tuple[list[list[tuple[int, float]]], list[int]]:
    """PageRank's columns on ``rows`` (rows ascending in each) and the dangling nodes."""
    n = len(rows)
    columns: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for j, row in enumerate(rows):
        share = 1.0 / len(row) if row else 0.0
        for i in sorted(set(row)):
            value = rng.choice(VALUES) if rng.random() < 0.05 else share * rng.randint(1, 3)
            columns[i].append((j, value))
    dangling = [j for j in range(n) if not rows[j]]
    return columns, dangling


def _bad_rows(rng: random.Random) -> tuple[str, Any]:
    """A kernel's name and arguments that are not rows it takes."""
    n = rng.randrange(1, 6)
    rows: list[Any] = [[rng.randrange(n) for _ in range(rng.randrange(3))] for _ in range(n)]
    at = rng.randrange(n)
    bad = rng.choice([n, n + 7, -1, 2**63, -(2**64), True, 1.0, "0", None])
    kind = rng.randrange(4)
    if kind == 0:
        rows[at] = [*rows[at], bad]
    elif kind == 1:
        rows[at] = tuple(rows[at]) if rng.random() < 0.5 else {0: 0}
    elif kind == 2:
        rows = tuple(rows) if rng.random() < 0.5 else "rows"  # pyright: ignore[reportAssignmentType]
    else:
        weighted = [[(w, 1.0) for w in row] for row in rows]
        weighted[at] = [*weighted[at], rng.choice([(bad, 1.0), (0,), (0, 1.0, 2.0), [0, 1.0], bad])]
        return rng.choice(["dijkstra", "pagerank"]), weighted
    return rng.choice(["betweenness", "breadth_first", "triangles", "dijkstra", "pagerank"]), rows


def main(argv: list[str] | None = None) -> None:
    args = fuzz_arguments(__doc__, NAME, 2_000, argv)
    from coordbench.graph.metrics import centrality, kernels, paths, structure

    native = sys.modules[NAME]
    if kernels.KERNELS is not native:
        raise SystemExit("the native kernels are not in use")
    rng = random.Random(args.seed)
    counts = {"same": 0, "handed back": 0, "raised": 0}
    for n in range(args.count):
        if n % 5 == 4:
            name, bad = _bad_rows(rng)
            try:
                got = native.pagerank(bad, []) if name == "pagerank" else getattr(native, name)(bad)
            except (TypeError, ValueError):
                counts["raised"] += 1
                continue
            if name == "dijkstra" and got is None:  # a length it is not sure of, before the bad row: right too
                counts["handed back"] += 1
                continue
            raise SystemExit(f"case {n} (seed {args.seed}): {name}({bad!r}) did not raise: {got!r}")
        rows = random_rows(rng)
        pairs: list[tuple[str, Any, Any]] = [
            ("betweenness", native.betweenness(rows), centrality.python_brandes_sums(rows)),
            ("breadth_first", native.breadth_first(rows), paths.python_breadth_first(rows)),
            ("triangles", native.triangles(rows), structure.python_triangles(rows)),
        ]
        lengths = random_lengths(rng, rows, odd=rng.choice([0.0, 0.1]))
        found = native.dijkstra(lengths)
        if found is None:
            if all(type(d) is float and d >= 0 for row in lengths for _, d in row if d is not None):
                raise SystemExit(f"case {n} (seed {args.seed}): dijkstra handed back lengths it takes: {lengths!r}")
            counts["handed back"] += 1
        else:
            pairs.append(("dijkstra", found, paths.python_dijkstra_lengths(lengths)))
        if rows:
            columns, dangling = random_columns(rng, rows)
            pairs.append(("pagerank", native.pagerank(columns, dangling),
                          centrality.python_pagerank_iteration(columns, dangling)))  # fmt: skip
        for name, got, expected in pairs:
            if bits(got) != bits(expected):
                raise SystemExit(
                    f"case {n} (seed {args.seed}): {name} of {rows!r}\nnative: {got!r}\npython: {expected!r}"
                )
            counts["same"] += 1
    print(json.dumps({"extension": getattr(native, "__file__", None), "counts": counts}))


if __name__ == "__main__":
    main()
