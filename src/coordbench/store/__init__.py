"""Trace storage: spans grouped by trace, completeness, bounds, optional durability."""

from coordbench.store.base import (
    AddResult,
    BatchTooLargeError,
    Completeness,
    Persistence,
    SpanStore,
    StoredSpan,
    StoreFullError,
    StoreStats,
    StoreUnavailableError,
    TraceSnapshot,
    TraceSummary,
    TraceWatcher,
    completeness_of,
)
from coordbench.store.encoded import EncodedSpan, Envelope, SpanCodec
from coordbench.store.memory import TraceStore
from coordbench.store.sqlite import SqlitePersistence

__all__ = [
    "AddResult",
    "BatchTooLargeError",
    "Completeness",
    "EncodedSpan",
    "Envelope",
    "Persistence",
    "SpanCodec",
    "SpanStore",
    "SqlitePersistence",
    "StoreFullError",
    "StoreStats",
    "StoreUnavailableError",
    "StoredSpan",
    "TraceSnapshot",
    "TraceStore",
    "TraceSummary",
    "TraceWatcher",
    "completeness_of",
]
