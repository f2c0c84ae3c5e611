"""Where coordbench's bundled data files are: the labelled ground truth and the default scenarios.

The files live in the repository's ``data/`` directory; a wheel carries them inside the
package (``coordbench/data/``). Both layouts are looked up, the packaged one first.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["collector_file", "data_file"]

_PACKAGED = Path(__file__).parent / "data"
_ROOT = Path(__file__).resolve().parents[2]
_REPOSITORY = _ROOT / "data"


def collector_file(name: str) -> Path:
    """The path of a bundled collector configuration (``rotel.env``): ``collector/`` or the wheel's data.

    Raises:
        FileNotFoundError: If neither layout has it.
    """
    for path in (_PACKAGED / name, _ROOT / "collector" / name):
        if path.is_file():
            return path
    raise FileNotFoundError(f"collector file {name!r} not found in {_PACKAGED} or {_ROOT / 'collector'}")


def data_file(name: str) -> Path:
    """The path of a bundled data file (``ground_truth.json``, ``scenarios.json``).

    Raises:
        FileNotFoundError: If neither layout has it.
    """
    for folder in (_PACKAGED, _REPOSITORY):
        path = folder / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"bundled data file {name!r} not found in {_PACKAGED} or {_REPOSITORY}")
