"""The exception hierarchy: one root, specific subclasses with clear default messages."""

from __future__ import annotations

__all__ = ["ConfigurationError", "CoordbenchError", "StepFormatError"]


class CoordbenchError(Exception):
    """Root of every error coordbench raises on purpose."""

    default_message = "coordbench error"

    def __init__(self, message: str | None = None) -> None:
        """Create the error.

        Args:
            message: What went wrong; the class's default message when omitted.
        """
        super().__init__(message or self.default_message)

    @property
    def message(self) -> str:
        """The human-readable message."""
        return str(self.args[0])


class ConfigurationError(CoordbenchError, ValueError):
    """A setting or environment variable has a bad value; the message names it."""

    default_message = "invalid configuration"


class StepFormatError(CoordbenchError, ValueError):
    """A traceability Step (or ResponseTrace) document does not have the expected shape."""

    default_message = "malformed traceability step"
