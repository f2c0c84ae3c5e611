r"""JSON from outside, as valid Unicode.

JSON text may escape a lone UTF-16 surrogate (``"\ud83d"`` with no partner), and
``json.loads`` then returns a ``str`` that cannot be encoded as UTF-8: the first serializer
to meet it (pydantic, a UTF-8 file, an HTTP response) raises ``UnicodeEncodeError``. Such
escapes are real: a JavaScript exporter that truncates an attribute between the two halves
of an emoji writes one (``JSON.stringify`` escapes lone surrogates). :func:`loads` replaces
each lone surrogate with U+FFFD, the replacement character, as Go's ``encoding/json`` does,
so the span keeps everything else it says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

__all__ = ["REPLACEMENT", "integral_ints", "load_file", "loads"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_STR_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(data: bytes | str) -> Any:
    r"""``json.loads``, with every lone surrogate in strings and keys replaced by U+FFFD.

    Valid surrogate pairs (``"\ud83d\ude00"``) are one character after decoding and stay
    as they are. Only documents whose text escapes a surrogate are walked, so ordinary
    input costs a search for a backslash.

    Args:
        data: JSON text, as bytes (UTF-8, -16 or -32, as ``json.loads`` accepts) or ``str``.

    Returns:
        The decoded document.

    Raises:
        ValueError: If ``data`` is not JSON (``json.JSONDecodeError``), not decodable text
            (``UnicodeDecodeError``), or nested too deeply to decode (``json.loads`` raises
            ``RecursionError`` for that; callers catching ``ValueError`` answer it too).

    Example:
        >>> loads(b'{"name": "cut \\ud83d", "ok": "\\ud83d\\ude00"}')
        {'name': 'cut �', 'ok': '😀'}
    """
    try:
        document = json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if isinstance(data, str):  # an ASCII text (a flag of the str: no scan) holds no surrogate, only escapes of one
        suspect = (not data.isascii() and _LONE_SURROGATE.search(data) is not None) or (
            "\\" in data and _STR_SURROGATE_ESCAPE.search(data) is not None
        )
    else:
        suspect = b"\\" in data and _SURROGATE_ESCAPE.search(data) is not None  # memchr first: no backslash, no escape
    return _mend(document) if suspect else document


def load_file(path: Path, error: Callable[[str], Exception]) -> Any:
    """A JSON file's document, read as :func:`loads` reads text.

    Args:
        path: The file.
        error: Builds the exception raised, from a message naming the file and what is wrong
            (the caller's domain error: ``GroundTruthError``, ``TraceFileError``...).

    Raises:
        Exception: ``error("cannot read <path>: <reason>")`` if the file cannot be read,
            ``error("<path> is not valid JSON: <reason>")`` if its text is not JSON.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return loads(data)
    except ValueError as exc:
        raise error(f"{path} is not valid JSON: {exc}") from exc


def _mended(text: str) -> str:
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def _mend(document: Any) -> Any:
    """Replace lone surrogates everywhere in ``document`` (in place for containers; no recursion)."""
    if isinstance(document, str):
        return _mended(document)
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            items = cast("list[Any]", node)
            for i, value in enumerate(items):
                if isinstance(value, str):
                    items[i] = _mended(value)
                elif isinstance(value, list | dict):
                    stack.append(value)
        elif isinstance(node, dict):
            mapping = cast("dict[str, Any]", node)
            for key in list(mapping):
                value = mapping[key]
                if isinstance(value, str):
                    value = _mended(value)
                elif isinstance(value, list | dict):
                    stack.append(value)
                new_key = _mended(key)
                if new_key != key:
                    del mapping[key]
                mapping[new_key] = value
    return document


def integral_ints(value: Any) -> Any:
    """``value`` with every integral double (``2.0``) back as an int, through lists and objects.

    An A2A data part travels as a protobuf ``Struct``, which keeps every number as a double:
    JSON written as ``2`` comes back as ``2.0``. JSON itself does not tell the two apart, so
    turning integral doubles (within 2**53, where doubles are exact) back into ints restores
    what was sent.

    Example:
        >>> integral_ints({"n": 2.0, "x": [0.5, -3.0], "b": True})
        {'n': 2, 'x': [0.5, -3], 'b': True}
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return {str(k): integral_ints(v) for k, v in items}
    if isinstance(value, list):
        return [integral_ints(v) for v in cast("list[Any]", value)]
    return value
