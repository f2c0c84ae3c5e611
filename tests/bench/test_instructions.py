"""The instruction-count benchmark's reading of ``callgrind_annotate`` (the counting itself needs valgrind)."""

from __future__ import annotations

from benchmarks.instructions import InstructionsResult, _functions, report

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


def _result(where: list[tuple[str, float]]) -> InstructionsResult:
    return InstructionsResult(
        per_trace={"baseline": 200e6, "today": 100e6},
        where=where,
        coordination={"baseline": 900e6, "today": 300e6},
        graph={"baseline": 300e6, "today": 100e6},
        tier={"baseline": 600e6, "today": 125e6},
    )


def test_report_gives_the_ratios_and_says_spread_only_when_the_counts_show_it() -> None:
    spread = report(_result([("Python/ceval.c:_PyEval_EvalFrameDefault'2", 0.25), ("dict:lookup", 0.03)]))
    assert "| per trace of ~200 spans, batch of 20 (millions) | 200.0 | 100.0 | 2.00 |" in spread
    assert "| coordination / graph evaluator | 3.00 | 3.00 | |" in spread
    # the graph tier as the cost issue counts it (evaluate_graph): 900 / 600 and 300 / 125
    assert "| graph tier, `evaluate_graph` on the same trace (millions) | 600 | 125 | 4.80 |" in spread
    assert "| coordination / graph tier (goal: at most 3) | 1.50 | 2.40 | |" in spread
    assert "executes 25% of them and no other function 3.0% or more" in spread
    one_hot_spot = report(_result([("Python/ceval.c:_PyEval_EvalFrameDefault'2", 0.25), ("re:match", 0.4)]))
    assert "many small steps" not in one_hot_spot


def test_without_valgrind_the_section_says_so() -> None:
    assert "valgrind is not installed here" in report(InstructionsResult(available=False))
