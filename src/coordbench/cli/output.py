"""What a command writes: its result (checked before the work, so a long run is never lost to a bad path), its errors.

Every command ends on an error the same way, through :func:`fail`: one line on standard error,
``error: <message>``, and the exit status (2: the input or the environment cannot be used; 1:
the work itself failed).
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

__all__ = ["check_writable", "fail", "write_text"]


def fail(message: str, code: int = 2, *, console: Console | None = None) -> NoReturn:
    """End the command: ``error: <message>`` on standard error, then exit with ``code``.

    The message is shown as it is: text in it that looks like rich markup (a path with
    ``[brackets]``, a name an agent chose) is never read as markup.

    Args:
        message: What went wrong, in one line.
        code: The exit status: 2 for unusable input or environment, 1 for work that failed.
        console: Where to write it (default: a console on standard error).

    Raises:
        typer.Exit: Always, with ``code``.
    """
    (console or Console(stderr=True)).print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


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
