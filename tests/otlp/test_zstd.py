"""zstd bodies: whole frames decode, any truncation or corruption is an error, output is bounded."""

from __future__ import annotations

import random

import pytest
import zstandard

from coordbench.otlp.zstd import ZstdBodyError, ZstdTooLargeError, decompress_zstd

DATA = bytes(random.Random(7).randrange(256) for _ in range(40_000)) + b"span" * 100_000  # several blocks


def _streamed(data: bytes, *, checksum: bool) -> bytes:
    compressor = zstandard.ZstdCompressor(write_checksum=checksum).compressobj()
    return compressor.compress(data) + compressor.flush()


FRAMES = {  # each body as its frames: a cut between two frames leaves a shorter, valid body
    "one-shot": [zstandard.ZstdCompressor().compress(DATA)],
    "streamed+checksum": [_streamed(DATA, checksum=True)],
    "two frames": [zstandard.ZstdCompressor().compress(DATA[:1000]), _streamed(DATA[1000:], checksum=False)],
    "skippable first": [
        (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello",
        zstandard.ZstdCompressor().compress(DATA),
    ],
}
BODIES = {name: b"".join(frames) for name, frames in FRAMES.items()}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_whole_bodies_decode(name: str) -> None:
    assert decompress_zstd(BODIES[name], len(DATA)) == DATA


@pytest.mark.parametrize("name", sorted(BODIES))
def test_every_truncation_inside_a_frame_is_an_error_never_a_short_body(name: str) -> None:
    body = BODIES[name]
    boundaries = {sum(len(f) for f in FRAMES[name][:i]) for i in range(len(FRAMES[name]) + 1)}
    for length in range(1, len(body)):
        if length in boundaries:
            continue
        with pytest.raises(ZstdBodyError):
            decompress_zstd(body[:length], len(DATA))


def test_output_is_bounded_by_the_limit() -> None:
    with pytest.raises(ZstdTooLargeError):
        decompress_zstd(BODIES["streamed+checksum"], len(DATA) - 1)


def test_flipped_bytes_are_errors_or_the_true_data() -> None:
    """Seeded corruption: every outcome is a ZstdBodyError or the original data (the checksum catches the rest)."""
    body = BODIES["streamed+checksum"]
    rng = random.Random(11)
    for _ in range(300):
        corrupt = bytearray(body)
        corrupt[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
        try:
            out = decompress_zstd(bytes(corrupt), 2 * len(DATA))
        except (ZstdBodyError, ZstdTooLargeError):
            continue
        assert out == DATA
