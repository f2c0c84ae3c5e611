"""Boolean environment variables, read one way everywhere.

``1``, ``true``, ``yes`` and ``on`` turn a flag on; ``0``, ``false``, ``no`` and ``off`` turn it
off (any case, surrounding spaces ignored); unset or empty leaves the default. Any other value
is a mistake the user should hear about: it is logged once per read, naming the variable, and the
default is used. (OpenTelemetry's own ``OTEL_SDK_DISABLED`` keeps the specification's reading:
only ``true`` disables.)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

__all__ = ["content_capture", "env_flag"]

logger = logging.getLogger(__name__)

_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})


def env_flag(name: str, default: bool, env: Mapping[str, str] | None = None) -> bool:
    """The boolean value of environment variable ``name``.

    Args:
        name: The variable.
        default: Its value when unset, empty, or not a boolean word.
        env: The environment to read (default: this process's).

    Example:
        >>> env_flag("X", False, {"X": " Yes "}), env_flag("X", True, {"X": "off"}), env_flag("X", True, {})
        (True, False, True)
    """
    raw = (os.environ if env is None else env).get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    logger.warning("%s=%r is not a boolean (1/true/yes/on or 0/false/no/off): using %s", name, raw[:40], default)
    return default


_SPAN_MODES = frozenset({"span_only", "span_and_event"})
_NO_SPAN_MODES = frozenset({"event_only", "no_content"})


def content_capture(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether ``name`` (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``) puts message text on spans.

    A boolean word as :func:`env_flag` reads it (default off), or one of the modes of
    OpenTelemetry's GenAI instrumentations (Google ADK documents them): ``SPAN_ONLY`` and
    ``SPAN_AND_EVENT`` turn it on, ``EVENT_ONLY`` and ``NO_CONTENT`` leave it off (coordbench
    records content on spans only).

    Example:
        >>> content_capture("X", {"X": "SPAN_ONLY"}), content_capture("X", {"X": "event_only"})
        (True, False)
    """
    raw = (os.environ if env is None else env).get(name, "").strip().lower()
    if raw in _SPAN_MODES:
        return True
    if raw in _NO_SPAN_MODES:
        return False
    return env_flag(name, False, env)
