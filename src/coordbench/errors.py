"""The exception hierarchy: one root, specific subclasses with clear default messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["ConfigurationError", "CoordbenchError", "StepFormatError", "describe_validation_error"]


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


def describe_validation_error(error: ValidationError, *, prefix: str = "", whole: str = "value", limit: int = 5) -> str:
    """A pydantic ``ValidationError`` in one line: ``path: message`` per problem, the first ``limit``.

    Args:
        error: The error.
        prefix: Put before every path (``config.``, say).
        whole: What a problem with the whole value is called (a path of its own).
        limit: How many problems to name; the rest are counted (``(and 3 more)``).

    Example:
        >>> from pydantic import BaseModel, ValidationError
        >>> class Point(BaseModel):
        ...     x: int
        ...     y: int
        >>> try:
        ...     Point.model_validate({"x": "a"})
        ... except ValidationError as exc:
        ...     print(describe_validation_error(exc))
        x: Input should be a valid integer, unable to parse string as an integer; y: Field required
    """
    problems: list[str] = []
    found = error.errors()
    for item in found[:limit]:
        path = ".".join(str(p) for p in item["loc"])
        location = prefix + path if path else (prefix.rstrip(".") or whole)
        problems.append(f"{location}: {str(item['msg']).removeprefix('Value error, ')}")
    more = len(found) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")
