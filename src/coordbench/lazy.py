"""Packages whose names are imported on first use: a command imports only what it runs.

``__getattr__ = lazy_exports(__name__, {"Name": "submodule", ...})`` in a package's
``__init__`` makes ``from package import Name`` import ``package.submodule`` then, not when the
package is imported (PEP 562). Type checkers see the names through ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``package.<where[name]>`` when ``name`` is first asked for.

    Example:
        >>> getter = lazy_exports("json", {"JSONDecodeError": "decoder"})
        >>> getter("JSONDecodeError").__name__
        'JSONDecodeError'
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
