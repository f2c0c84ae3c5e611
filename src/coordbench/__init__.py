"""coordbench: OpenTelemetry-native tracing and evaluation of coordination in A2A multi-agent systems."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("coordbench")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0"

__all__ = ["__version__"]
