"""Type stub of the C extension ``_jsonscan.c`` (the native fast path of OTLP/JSON ingest)."""

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T", bound=tuple[Any, ...])

MAX_NESTING: int
MAX_VALUE_DEPTH: int

def scan(
    body: bytes, span_type: type[_T], codec: object, envelope_of: Callable[[bytes | None, bytes | None], object], /
) -> tuple[list[_T], int] | None: ...
