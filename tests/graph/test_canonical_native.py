"""The C writer of canonical JSON writes exactly the bytes of the Python path, or leaves the value to it.

Every evaluation, result row and report is written by :func:`canonical_json`; byte-identical
output is a promise (the same spans give the same bytes), so the C writer
(``_canonical.c``) is checked against the Python path (:func:`python_canonical_json`): on
hand-picked edge cases, and on values Hypothesis generates (nested dicts and lists of every
JSON type, floats of every magnitude and the non-finite ones, strings of any code point,
including control characters and lone surrogates), and on real evaluations. What it does not
take (a subclass, a key that is not a string, nesting deeper than its bound, a lone surrogate)
it must hand back, never write differently.
"""

from __future__ import annotations

import enum
import json
import math
import sys
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordbench.graph.metrics import _canonical as native  # built by `uv sync`: a build without it fails here
from coordbench.graph.metrics import result
from coordbench.graph.metrics.result import canonical_json, python_canonical_json


def _same(value: Any) -> str | None:
    """What the C writer wrote (checked equal to the Python path), or ``None`` when it handed the value back."""
    expected = python_canonical_json(value)
    written = native.canonical_json(value)
    if written is not None:
        assert written == expected
    assert canonical_json(value) == expected
    return written


def test_the_package_uses_the_c_writer() -> None:
    """``make test`` builds it: a build that silently lost it would pass every other test here."""
    assert result._NATIVE is native.canonical_json  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -1,
        10**40,
        -(10**40),
        0.0,
        -0.0,
        1.0,
        -3.0,
        0.5,
        0.1 + 0.2,
        1 / 3,
        2.0**53,
        2.0**53 - 1,
        -(2.0**53),
        1e12,
        1e12 + 0.5,
        123456789012.5,
        999999999999.0,
        9999999999999.0,
        1e15,
        1e16,
        1e22,
        1e-5,
        1e-7,
        5e-324,
        sys.float_info.max,
        -sys.float_info.max,
        sys.float_info.min,
        math.inf,
        -math.inf,
        math.nan,
        "",
        "plain",
        'quote " backslash \\ slash /',
        "\b\f\n\r\t\x00\x01\x1f\x7f\x80",
        "é — 日本 😀",
        "\u2028\u2029\ufeff",
        [],
        {},
        (1, 2.5, "x"),
        [[[]]],
        {"b": 1, "a": 2, "B": 3, "é": 4, "e": 5, "ab": 6, "a\x00": 7, "": 8},
        {"z": [1.5, {"y": None, "x": [True, False]}], "a": ()},
    ],
)
def test_edge_values_are_written_as_the_python_path_writes_them(value: Any) -> None:
    assert _same(value) is not None


class _Kind(enum.IntEnum):
    A = 1


class _Text(str):
    __slots__ = ()


class _Number(float):
    __slots__ = ()


@pytest.mark.parametrize(
    "value",
    [
        _Kind.A,  # an int subclass: json writes int.__repr__, _canonical keeps it as it is
        _Text("x"),
        _Number(0.25),
        {"a": _Kind.A},
        [_Number(1.0)],
        {1: "int key"},
        {None: "none key", "null": "collides"},
        {1.5: "float key"},
        OrderedDict(b=1, a=2),  # a Mapping, not exactly a dict
        "\ud800 lone surrogate",
        {"\udfff": 1},
        {"k": {1, 2}},  # not JSON at all: the Python path raises
        b"bytes",
    ],
)
def test_what_the_c_writer_does_not_take_is_handed_back(value: Any) -> None:
    assert native.canonical_json(value) is None
    try:
        expected = python_canonical_json(value)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            canonical_json(value)
    else:
        assert canonical_json(value) == expected


def test_nesting_beyond_its_bound_is_handed_back_and_written_or_refused_as_before() -> None:
    deep: Any = "leaf"
    for _ in range(native.MAX_DEPTH):
        deep = [deep]
    assert _same(deep) is not None  # at its bound: written
    deeper: Any = [deep]
    assert native.canonical_json(deeper) is None  # one deeper: the Python path's
    assert canonical_json(deeper) == python_canonical_json(deeper)
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(RecursionError):  # as the Python path always raised
        canonical_json(cycle)


def test_an_integer_too_long_for_str_is_refused_as_the_python_path_refuses_it() -> None:
    huge = 10 ** (sys.get_int_max_str_digits() + 1)
    with pytest.raises(ValueError, match="digits"):
        python_canonical_json({"n": huge})
    with pytest.raises(ValueError, match="digits"):
        canonical_json({"n": huge})


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(min_value=-1e13, max_value=1e13)
    | st.sampled_from([0.0, -0.0, 1.0, 2.0**53, 2.0**53 - 1, 1e12, 1e16, 5e-324, 0.1])
    | st.text()
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
)
_KEYS = st.text() | st.text(alphabet="aAbB\x00é_ ", max_size=3)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6) | st.lists(inner, max_size=4).map(tuple) | st.dictionaries(_KEYS, inner, max_size=6)
    ),
    max_leaves=60,
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_VALUES)
def test_generated_values_are_written_as_the_python_path_writes_them(value: Any) -> None:
    written = _same(value)
    if written is not None:
        json.loads(written)  # and it is JSON


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(), min_size=1))
def test_strings_with_surrogates_are_handed_back_or_written_the_same(text: str) -> None:
    _same({"t": text, text: [text]})


def test_a_real_evaluation_is_written_byte_for_byte_the_same() -> None:
    from benchmarks.evaluation import synthetic_trace
    from coordbench.evals.config import JudgeConfig
    from coordbench.evals.replay import replay_sync

    spans = synthetic_trace(300, seed=11, content=True)
    evaluation = replay_sync(spans[0].trace_id, spans, judge=JudgeConfig())
    data = evaluation.model_dump(mode="json")
    assert _same(data) is not None
    assert evaluation.to_json() == python_canonical_json(data)


def test_floats_of_every_magnitude_are_written_as_the_python_path_writes_them() -> None:
    """The C writer writes a rounded float's 12 digits as they are (its repr, argued in ``_canonical.c``): checked."""
    import random
    import struct

    rng = random.Random(46)
    floats = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(40_000)]
    floats += [rng.uniform(-1, 1) * 10.0 ** rng.randrange(-30, 30) for _ in range(40_000)]
    floats += [round(rng.uniform(-1e6, 1e6), rng.randrange(0, 14)) for _ in range(20_000)]
    floats += [
        float(n) + d for n in (2**53 - 2, 2**53, 10**15, 10**16, 10**12 - 1) for d in (-1.5, -1.0, 0.0, 0.5, 1.0)
    ]
    assert native.canonical_json(floats) == python_canonical_json(floats)
