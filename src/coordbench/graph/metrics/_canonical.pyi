"""Type stub for the C extension ``_canonical`` (``_canonical.c``, compiled at build time)."""

from typing import Any

MAX_DEPTH: int

def canonical_json(value: Any, /) -> str | None: ...
