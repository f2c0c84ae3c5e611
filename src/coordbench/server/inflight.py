"""Exports being decoded now, over every transport: the receiver's one bound on decoding work."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["Inflight"]


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
