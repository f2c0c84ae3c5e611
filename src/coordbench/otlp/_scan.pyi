"""Type stub of the C extension ``_scan.c`` (the native fast path of OTLP/protobuf ingest)."""

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T", bound=tuple[Any, ...])

UNKNOWN: int
VARINT: int
FIXED64: int
FIXED32: int
BYTES: int
STRING: int
MESSAGE: int
UNSUPPORTED: int
MAX_DEPTH: int

def configure(messages: list[list[tuple[int, int, int]]], roles: tuple[int, int, int, int, int, int], /) -> None: ...
def scan(
    body: bytes, span_type: type[_T], codec: object, envelope_of: Callable[[bytes | None, bytes | None], object], /
) -> tuple[list[_T], tuple[int, int, int]] | None: ...
def group(spans: list[_T], overhead: int, /) -> tuple[dict[bytes, dict[bytes, _T]], dict[bytes, int]] | None: ...
