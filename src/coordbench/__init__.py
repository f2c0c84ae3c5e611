"""coordbench: OpenTelemetry-native tracing and evaluation of coordination in A2A multi-agent systems."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    __version__: str

__all__ = ["__version__"]  # pyright: ignore[reportUnsupportedDunderAll] - provided by __getattr__


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata on first use (not at import: the CLI answers faster)."""
    if name != "__version__":
        raise AttributeError(f"module 'coordbench' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("coordbench")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
        found = "0.0.0"
    globals()["__version__"] = found
    return found
