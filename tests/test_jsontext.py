"""``coordbench.jsontext``: JSON from outside comes out as valid Unicode; JSON files fail with the caller's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coordbench.errors import CoordbenchError
from coordbench.jsontext import REPLACEMENT, load_file, loads


@pytest.mark.parametrize("kind", [bytes, str])
def test_lone_surrogates_become_the_replacement_character_everywhere(kind: type) -> None:
    text = r'{"name": "cut \ud83d", "low\udc00": ["a\uDFFFb", {"deep": "\ud800\ud800"}], "pair": "\ud83d\ude00"}'
    document = loads(text.encode() if kind is bytes else text)
    assert document == {
        "name": f"cut {REPLACEMENT}",
        f"low{REPLACEMENT}": [f"a{REPLACEMENT}b", {"deep": REPLACEMENT * 2}],
        "pair": "\U0001f600",  # a valid pair is one character and stays
    }
    json.dumps(document, ensure_ascii=False).encode()  # encodable as UTF-8 now


def test_a_lone_surrogate_held_raw_in_str_text_is_replaced_too() -> None:
    """Not escaped: the character itself, which only a non-ASCII str can hold (an ASCII one is not scanned)."""
    text = '{"raw": "cut \ud83d", "pair": "\U0001f600"}'  # no backslash: only the scan for the character finds it
    assert not text.isascii() and "\\" not in text
    assert loads(text) == {"raw": f"cut {REPLACEMENT}", "pair": "\U0001f600"}
    assert loads('{"plain": "ascii only, \\u00e9t\\u00e9"}') == {"plain": "ascii only, été"}


def test_a_document_that_is_only_a_string_or_deeply_nested() -> None:
    assert loads(rb'"\udfff"') == REPLACEMENT
    depth = 900  # about as deep as json.loads goes (it stops at the recursion limit)
    nested = loads((r"[" * depth + r'"\ud800"' + r"]" * depth).encode())
    for _ in range(depth):
        (nested,) = nested
    assert nested == REPLACEMENT


def test_ordinary_documents_are_what_json_loads_returns() -> None:
    for text in (b'{"a": [1, 2.5, null, true, "\\u00e9t\\u00e9"]}', "[]", b'"\\ud83d\\ude00"'):
        assert loads(text) == json.loads(text)


def test_not_json_raises_value_error() -> None:
    with pytest.raises(ValueError, match="Expecting property name"):
        loads(b"{not json")
    with pytest.raises(ValueError):  # UnicodeDecodeError is a ValueError too
        loads(b'"\xff\xfe\xfd')


class _FileError(CoordbenchError):
    """The error a caller of load_file asks for."""


def test_a_json_file_is_read_or_refused_with_the_callers_error_naming_it(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(b'{"cut": "\\ud83d"}')
    assert load_file(good, _FileError) == {"cut": REPLACEMENT}
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(_FileError, match=rf"^{bad} is not valid JSON: Expecting property name"):
        load_file(bad, _FileError)
    with pytest.raises(_FileError, match=rf"^cannot read {tmp_path}/missing.json: No such file or directory$"):
        load_file(tmp_path / "missing.json", _FileError)
    with pytest.raises(_FileError, match=rf"^cannot read {tmp_path}: Is a directory$"):
        load_file(tmp_path, _FileError)
