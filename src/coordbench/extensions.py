"""The package's C extensions, each imported one way: when it was built and ``COORDBENCH_NATIVE`` allows it.

Every extension (the OTLP scanners, the canonical JSON writer, the graph kernels, the text loops) has a Python
version that gives the same answers; the C one is an optimisation. Without a C compiler at
install time the extension is not built, and ``COORDBENCH_NATIVE=0`` turns every extension
off (to measure what they buy, or to rule them out when chasing a bug): the Python versions run.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from coordbench.envflags import env_flag

__all__ = ["NATIVE_FLAG", "native_extension"]

logger = logging.getLogger(__name__)

NATIVE_FLAG = "COORDBENCH_NATIVE"
"""The environment variable that turns every C extension off (``0``); on by default."""


def native_extension(name: str) -> ModuleType | None:
    """The built extension module ``name``, or ``None`` when it was not built or :data:`NATIVE_FLAG` is off.

    Args:
        name: The extension's full module name (``coordbench.otlp._scan``).

    Example:
        >>> native_extension("coordbench.no_such_extension") is None
        True
    """
    if not env_flag(NATIVE_FLAG, True):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        logger.debug("%s is not built: its Python version runs", name)
        return None
