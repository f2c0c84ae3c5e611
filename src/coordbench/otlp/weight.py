"""What decoding a body costs, for the receivers' decision to decode it off the event loop."""

from __future__ import annotations

from coordbench.otlp import native

__all__ = ["decode_weight"]


def decode_weight(
    size: int,
    *,
    compressed: bool = False,
    json_body: bool = False,
    native_scan: bool | None = None,
    native_json: bool | None = None,
) -> int:
    """A body's size weighted by what it costs to decode, for the receivers' off-the-loop threshold.

    The unit is a byte of uncompressed protobuf on the protobuf path. A compressed byte inflates
    to about 4, so it counts 4. The native scanner decodes protobuf about 4 times faster than the
    protobuf path, so with it a protobuf byte counts a quarter. An OTLP/JSON byte decodes about 4
    times slower than the unit in Python and about 3 times faster with the native JSON scanner,
    so it counts 4, or a third. On a worker thread the decode competes with the event loop for the
    GIL and costs more CPU per span (``docs/benchmarks.md``, "decoded off the loop"), so only
    bodies whose decode would hold the loop for more than a few milliseconds go there.

    Args:
        size: The body's size as received.
        compressed: Whether it is gzip, deflate or zstd.
        json_body: Whether it is OTLP/JSON rather than protobuf.
        native_scan: Whether protobuf goes through the native scanner (default: whether it is
            available, :data:`coordbench.otlp.native.AVAILABLE`).
        native_json: Whether OTLP/JSON goes through the native JSON scanner (default: whether it
            is available, :data:`coordbench.otlp.native.JSON_AVAILABLE`).

    Example:
        >>> decode_weight(4096, native_scan=True), decode_weight(4096, native_scan=False)
        (1024, 4096)
        >>> decode_weight(1000, compressed=True, json_body=True, native_json=False)
        16000
        >>> decode_weight(1000, compressed=True, json_body=True, native_json=True)
        1334
    """
    weight = size * 4 if compressed else size
    if json_body:
        scanned_json = native.JSON_AVAILABLE if native_json is None else native_json
        return -(-weight // 3) if scanned_json else weight * 4  # rounded up: a body is never weightless
    scanned = native.AVAILABLE if native_scan is None else native_scan
    return -(-weight // 4) if scanned else weight
