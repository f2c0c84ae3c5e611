"""Bounded zstd decompression for OTLP/HTTP bodies (``Content-Encoding: zstd``).

The OpenTelemetry Collector's ``otlphttp`` exporter can compress with zstd. Two things the
``zstandard`` package does not give in one call: a hard bound on the output (a few bytes of
zstd can declare or produce gigabytes) and an error for a truncated body (its stream reader
returns what it could decode and says nothing). So the frames are walked first (RFC 8878
framing: headers and block headers only, no decoding), which proves the body is whole, and
the stream reader is then read for at most ``limit + 1`` bytes.
"""

from __future__ import annotations

import zstandard

from coordbench.errors import CoordbenchError

__all__ = ["ZstdBodyError", "ZstdTooLargeError", "decompress_zstd"]

_FRAME_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_MIN, _SKIPPABLE_MAX = 0x184D2A50, 0x184D2A5F
_FCS_SIZES = (0, 2, 4, 8)
_DICT_ID_SIZES = (0, 1, 2, 4)
_STEP = 1 << 20


class ZstdBodyError(CoordbenchError, ValueError):
    """The body is not whole, valid zstd."""

    default_message = "not a whole, valid zstd body"


class ZstdTooLargeError(CoordbenchError, ValueError):
    """The body decompresses to more than the limit."""

    default_message = "the zstd body decompresses past the limit"


def _frame_end(data: bytes, pos: int) -> int:
    """Where the frame starting at ``pos`` ends; raises :class:`ZstdBodyError` if it does not."""
    if len(data) - pos < 4:
        raise ZstdBodyError("truncated zstd frame header")
    magic = int.from_bytes(data[pos : pos + 4], "little")
    if _SKIPPABLE_MIN <= magic <= _SKIPPABLE_MAX:
        if len(data) - pos < 8:
            raise ZstdBodyError("truncated zstd skippable frame")
        end = pos + 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
        if end > len(data):
            raise ZstdBodyError("truncated zstd skippable frame")
        return end
    if data[pos : pos + 4] != _FRAME_MAGIC:
        raise ZstdBodyError("not a zstd frame (bad magic number)")
    pos += 4
    if pos >= len(data):
        raise ZstdBodyError("truncated zstd frame header")
    descriptor = data[pos]
    single_segment = bool(descriptor & 0x20)
    fcs_flag = descriptor >> 6
    pos += 1 + (0 if single_segment else 1) + _DICT_ID_SIZES[descriptor & 0x03]
    pos += 1 if fcs_flag == 0 and single_segment else _FCS_SIZES[fcs_flag]
    while True:
        if len(data) - pos < 3:
            raise ZstdBodyError("truncated zstd block")
        header = int.from_bytes(data[pos : pos + 3], "little")
        block_type = (header >> 1) & 0x03
        if block_type == 3:
            raise ZstdBodyError("reserved zstd block type")
        pos += 3 + (1 if block_type == 1 else header >> 3)
        if pos > len(data):
            raise ZstdBodyError("truncated zstd block")
        if header & 0x01:  # the frame's last block
            break
    if descriptor & 0x04:  # content checksum
        pos += 4
        if pos > len(data):
            raise ZstdBodyError("truncated zstd frame checksum")
    return pos


def decompress_zstd(data: bytes, limit: int) -> bytes:
    """Decompress one or more zstd frames, producing at most ``limit`` bytes.

    Example:
        >>> body = zstandard.ZstdCompressor().compress(b"spans")
        >>> decompress_zstd(body, 100)
        b'spans'
        >>> decompress_zstd(body[:-2], 100)
        Traceback (most recent call last):
        ...
        coordbench.otlp.zstd.ZstdBodyError: truncated zstd block

    Raises:
        ZstdBodyError: The body is truncated, malformed or fails to decode.
        ZstdTooLargeError: It decompresses to more than ``limit`` bytes.
    """
    pos = 0
    while pos < len(data):
        pos = _frame_end(data, pos)
    chunks: list[bytes] = []
    total = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
            while True:  # in steps: read(n) allocates n bytes up front
                chunk = reader.read(min(_STEP, limit + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    raise ZstdTooLargeError(f"zstd body decompresses to more than {limit} bytes")
                chunks.append(chunk)
    except zstandard.ZstdError as exc:
        raise ZstdBodyError(f"cannot decode zstd body: {exc}") from exc
    return b"".join(chunks)
