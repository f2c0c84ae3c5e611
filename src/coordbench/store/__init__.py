"""Trace storage: spans grouped by trace, completeness, bounds, optional durability."""

from coordbench.store.base import (
    BatchTooLargeError,
    Completeness,
    Persistence,
    StoredSpan,
    StoreFullError,
    StoreStats,
    StoreUnavailableError,
    TraceSnapshot,
    TraceSummary,
    completeness_of,
)
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec
from coordbench.store.memory import AddResult, TraceStore
from coordbench.store.sqlite import SqlitePersistence

__all__ = [
    "AddResult",
    "BatchTooLargeError",
    "Completeness",
    "EncodedSpan",
    "Envelope",
    "Persistence",
    "SpanCodec",
    "SqlitePersistence",
    "StoreFullError",
    "StoreStats",
    "StoreUnavailableError",
    "StoredSpan",
    "TraceSnapshot",
    "TraceStore",
    "TraceSummary",
    "completeness_of",
]
