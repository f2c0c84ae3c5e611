"""Plugin discovery shared by metrics and evaluators: entry points, load errors, enable/disable lists.

A plugin that fails to load is skipped with a warning; asking for a plugin that does not
exist is an error that names it (see ``docs/extending.md``).
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import Any, TypeVar

from coordbench.errors import ConfigurationError

__all__ = ["discover", "refresh", "select"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


def discover(group: str, convert: Callable[[Any], T | None], name_of: Callable[[T], str]) -> dict[str, T]:
    """Every plugin registered under the entry-point ``group``, by name (sorted).

    Discovery is cached per ``sys.path`` (scanning installed distributions takes a few
    milliseconds); a path that changes is scanned again.

    Args:
        group: The entry-point group, e.g. ``coordbench.metrics``.
        convert: Turns a loaded object into a plugin, or ``None`` if it is not one (skipped
            with a warning).
        name_of: The plugin's name (the key in results and settings).

    Returns:
        Plugins by name; of two with one name, the first found is kept (with a warning).
    """
    return dict(_discover(group, convert, name_of, tuple(sys.path)))


def refresh() -> None:
    """Forget what was discovered, so the next call scans the installed distributions again.

    Discovery notices a changed ``sys.path`` by itself; call this after installing a plugin
    into a folder already on the path, in a running process.
    """
    _discover.cache_clear()


@functools.lru_cache(maxsize=16)
def _discover(
    group: str, convert: Callable[[Any], Any], name_of: Callable[[Any], str], path: tuple[str, ...]
) -> tuple[tuple[str, Any], ...]:
    del path  # the cache key: entry points depend on what sys.path holds
    found: dict[str, Any] = {}
    for entry in entry_points(group=group):
        try:
            plugin = convert(entry.load())
        except Exception as exc:
            logger.warning(
                "plugin %r (%s) of %s failed to load and is skipped: %s", entry.name, entry.value, group, exc
            )
            continue
        if plugin is None:
            logger.warning("plugin %r (%s) is not a valid %s plugin; skipped", entry.name, entry.value, group)
            continue
        name = name_of(plugin)
        if name in found:
            logger.warning("plugin %r is registered twice in %s; keeping the first (%s)", name, group, found[name])
            continue
        found[name] = plugin
    return tuple(sorted(found.items()))


def select(available: Mapping[str, T], enabled: Iterable[str] | None, disabled: Iterable[str], what: str) -> list[T]:
    """The plugins to run.

    Args:
        available: Plugins by name.
        enabled: Only these (``None``: all available).
        disabled: Leave these out.
        what: What the plugins are, for the error message (``metric``, ``evaluator``).

    Returns:
        The selected plugins, sorted by name.

    Raises:
        ConfigurationError: If a name is not available (the message names it and lists the others).
    """
    wanted = list(available) if enabled is None else list(enabled)
    unwanted = list(disabled)
    unknown = sorted({n for n in [*wanted, *unwanted] if n not in available})
    if unknown:
        raise ConfigurationError(
            f"unknown {what}(s): {', '.join(unknown)}; available: {', '.join(available) or 'none'}"
        )
    skip = set(unwanted)
    return [available[n] for n in sorted(set(wanted)) if n not in skip]
