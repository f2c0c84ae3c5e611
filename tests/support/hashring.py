"""The Collector's load-balancing exporter's routing, rebuilt to route a test's load as the exporter would.

``exporter/loadbalancingexporter/consistent_hashing.go`` (opentelemetry-collector-contrib): each
endpoint takes up to 100 points of a 36,000-point ring, at ``crc32(endpoint + byte(i)) % 36000``
(a point already taken is skipped); a trace goes to the endpoint of the first point at or after
``crc32(trace id bytes) % 36000``, wrapping round to the first point. The static resolver sorts
its endpoints before the ring is built.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Sequence

MAX_POSITIONS = 36_000
WEIGHT = 100


class HashRing:
    """Endpoints on the exporter's ring."""

    def __init__(self, endpoints: Sequence[str]) -> None:
        taken: set[int] = set()
        items: list[tuple[int, str]] = []
        for endpoint in sorted(endpoints):
            for i in range(WEIGHT):
                position = zlib.crc32(endpoint.encode() + bytes([i])) % MAX_POSITIONS
                if position in taken:
                    continue
                taken.add(position)
                items.append((position, endpoint))
        items.sort()
        self._positions = [p for p, _ in items]
        self._endpoints = [e for _, e in items]

    def endpoint_for(self, trace_id: str) -> str:
        """The endpoint a trace (32 hex digits) is routed to."""
        position = zlib.crc32(bytes.fromhex(trace_id)) % MAX_POSITIONS
        index = bisect.bisect_left(self._positions, position)
        return self._endpoints[index % len(self._endpoints)]
