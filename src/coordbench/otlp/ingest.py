"""Ingestion whatever the transport: one limit on exports being decoded, one path into the store.

OTLP/HTTP and OTLP/gRPC share an :class:`Inflight` (so ``max_inflight``
bounds decoding work for the receiver as a whole) and hand every decoded export to :func:`ingest`,
which records the spans the decoder rejected and stores the rest. Each transport only answers in its own terms
(:class:`Refused` says why an export was not stored).
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from coordbench.otlp.model import DecodeResult
from coordbench.store import BatchTooLargeError, SpanStore, StoreUnavailableError

__all__ = ["Inflight", "Refused", "ingest"]

logger = logging.getLogger(__name__)


class Inflight:
    """Exports being read or decoded now, over every transport: past the limit an export is refused, not queued.

    Args:
        limit: Exports allowed at once.
    """

    def __init__(self, limit: int) -> None:
        """Allow ``limit`` at once."""
        self.limit = limit
        self.current = 0

    @contextmanager
    def slot(self) -> Generator[bool]:
        """Take a slot for the ``with`` block: yields ``False`` (and takes none) when all are taken."""
        if self.current >= self.limit:
            yield False
            return
        self.current += 1
        try:
            yield True
        finally:
            self.current -= 1

    def busy_message(self) -> str:
        """What a refused export is told."""
        return f"{self.current} exports are being decoded; retry later"


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a decoded export was not stored.

    Attributes:
        kind: ``unavailable`` (the store is full for now: retry later) or ``too_large`` (the
            batch is larger than the whole store: a retry could never fit).
        message: What went wrong, for the client.
        retry_after: Seconds to wait before retrying (``unavailable`` only).
    """

    kind: Literal["unavailable", "too_large"]
    message: str
    retry_after: float | None = None


async def ingest(store: SpanStore, result: DecodeResult, *, transport: str) -> Refused | None:
    """Record the spans the decoder rejected and store the others; ``None`` when they were stored.

    Args:
        store: Where the spans go.
        result: The decoded export.
        transport: Named in the log (``OTLP/HTTP``, ``OTLP/gRPC``).
    """
    if result.rejected:
        store.record_rejected(result.rejected_count, dict(result.rejected))
        logger.warning("%s export: %s", transport, result.rejection_message())
    try:
        await store.add(result.spans)
    except StoreUnavailableError as exc:
        return Refused("unavailable", exc.message, exc.retry_after)
    except BatchTooLargeError as exc:
        return Refused("too_large", exc.message)
    return None
