"""The instruction-count benchmark's reading of ``callgrind_annotate`` (the counting itself needs valgrind)."""

from __future__ import annotations

from benchmarks.instructions import _functions

# ruff: noqa: E501

# callgrind_annotate writes one function per line, however long
ANNOTATED = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
6,580,602,091 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                     file:function
--------------------------------------------------------------------------------
1,234,567,890 (18.76%)  /tmp/python-build.1/Python-3.11.7/Python/ceval.c:_PyEval_EvalFrameDefault'2 [/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0]
   12,345,678 ( 0.19%)  /tmp/python-build.1/Python-3.11.7/Python/ceval.c:_PyEval_EvalFrameDefault [/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0]
    1,000,000 ( 0.02%)  ???:0x00000000001cb8a0'2 [/venv/site-packages/pydantic_core/_pydantic_core.cpython-311-x86_64-linux-gnu.so]
        2,000 ( 0.00%)  ./string/../sysdeps/x86_64/multiarch/memset-vec-unaligned-erms.S:__memset_avx2_unaligned_erms [/usr/lib/x86_64-linux-gnu/libc.so.6]
"""


def test_functions_named_by_source_file_or_library() -> None:
    found = _functions(ANNOTATED)
    assert found == {
        "Python/ceval.c:_PyEval_EvalFrameDefault'2": 1_234_567_890,
        "Python/ceval.c:_PyEval_EvalFrameDefault": 12_345_678,
        "_pydantic_core.cpython-311-x86_64-linux-gnu.so:???:0x00000000001cb8a0'2": 1_000_000,
        "multiarch/memset-vec-unaligned-erms.S:__memset_avx2_unaligned_erms": 2_000,
    }


def test_totals_and_headers_are_not_functions() -> None:
    assert _functions("6,580,602,091 (100.0%)  PROGRAM TOTALS\nIr  file:function\n") == {}
