"""Where a command writes its result: checked before the work, so a long run is never lost to a bad path."""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["check_writable", "write_text"]


def check_writable(path: Path, option: str) -> None:
    """Refuse ``path`` now if the result could not be written there later.

    Creates the parent directories; leaves no file behind that was not there before.

    Raises:
        typer.BadParameter: Naming ``option`` and why (exit code 2).
    """
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8"):  # a directory raises IsADirectoryError here
            pass
        if not existed:
            path.unlink()
    except OSError as exc:
        raise typer.BadParameter(f"cannot write {path}: {exc.strerror or exc}", param_hint=option) from exc


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8), creating its directory.

    Raises:
        OSError: If it cannot be written after all (a full disk, say).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
