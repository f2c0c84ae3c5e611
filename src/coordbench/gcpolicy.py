"""The garbage-collector policy of a process whose job is spans: ingest, or evaluating many of them.

A store holding 10^5-10^6 spans, or a trace of that many being evaluated, keeps that many
long-lived objects, and every full collection walks all of them while decoding or evaluating
allocates fast. With CPython's default thresholds (700, 10, 10) JSON ingest ran at about half
the rate (``docs/benchmarks.md``, receiver ingest), and evaluating a 100,000-span trace spent
about a tenth of its time in collections. Called by the commands whose job this is, never on
import: it is a process-wide choice.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "tune_gc"]

THRESHOLDS = (50_000, 50, 100)
"""Allocations before a young collection, and young (then middle) collections before the next older one."""


def tune_gc() -> None:
    """Make the cyclic garbage collector run less often in this process (:data:`THRESHOLDS`)."""
    gc.set_threshold(*THRESHOLDS)
