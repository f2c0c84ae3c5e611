"""The native extensions built with AddressSanitizer and UndefinedBehaviorSanitizer, then fuzzed.

``coordbench.otlp._scan`` (and ``_jsonscan``, for OTLP/JSON) reads untrusted network bytes in C,
so an out-of-bounds read or an overflowing length computation would be a crash or a leak of
memory, not a wrong answer a differential test notices. Here ``_scan.c`` is compiled again with
``-fsanitize=address,undefined`` and loaded in a child Python with the sanitizer runtime
preloaded and ``PYTHONMALLOC=malloc`` (so Python's own buffers get redzones too), and
:mod:`support.fuzz_scan` runs mutated bodies
through it against protobuf, each in a buffer of exactly its size. A deliberately broken
extension, run the same way, shows that this setup does catch a read one byte past the end of a
body handed over like that: without it a clean run would prove nothing.

``_jsonscan.c`` is built and run the same way with :mod:`support.fuzz_json`, against the
Python decoder, and ``coordbench.graph.metrics._canonical`` (the canonical JSON writer, which
reads whatever an evaluation holds, a participant's text included) with
:mod:`support.fuzz_canonical`, against the Python writer. ``make fuzz`` runs the three campaigns
longer (``FUZZ_COUNT`` and ``FUZZ_JSON_COUNT`` bodies, ``FUZZ_CANONICAL_COUNT`` values,
``FUZZ_SEED``). The graph metrics' kernels (``coordbench.graph.metrics._kernels``) are run the same
way with :mod:`support.fuzz_kernels`, against their Python versions (``FUZZ_KERNELS_COUNT`` cases), and
the text measures' loops (``coordbench.evals._text``) with :mod:`support.fuzz_text` (``FUZZ_TEXT_COUNT``).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "coordbench" / "otlp" / "_scan.c"
JSON_SOURCE = SOURCE.with_name("_jsonscan.c")
CANONICAL_SOURCE = SOURCE.parents[1] / "graph" / "metrics" / "_canonical.c"
KERNELS_SOURCE = CANONICAL_SOURCE.with_name("_kernels.c")
TEXT_SOURCE = SOURCE.parents[1] / "evals" / "_text.c"
TESTS = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

_OVER_READ = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *read_at(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer buffer;
    Py_ssize_t index;
    if (!PyArg_ParseTuple(args, "y*n", &buffer, &index)) return NULL;
    char value = ((const char *)buffer.buf)[index];
    PyBuffer_Release(&buffer);
    return PyLong_FromLong(value);
}

static PyMethodDef methods[] = {{"read_at", read_at, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_over_read", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__over_read(void) { return PyModule_Create(&module); }
"""


def _compiler() -> list[str]:
    command = sysconfig.get_config_var("LDSHARED")
    if not command or not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("no C compiler configuration or Python headers for this interpreter")
    return shlex.split(command)


def _runtime(compiler: str, name: str) -> str | None:
    """Where the compiler's sanitizer runtime library ``name`` is, if it has one."""
    done = subprocess.run([compiler, f"-print-file-name={name}"], capture_output=True, text=True, check=False)
    path = done.stdout.strip()
    return path if done.returncode == 0 and os.path.isabs(path) and os.path.exists(path) else None


def _build(source: Path, target: Path) -> None:
    argv = [
        *_compiler(),
        *shlex.split(sysconfig.get_config_var("CCSHARED") or ""),
        "-O1",
        "-g",
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fno-omit-frame-pointer",
        "-ffp-contract=off",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        f"-I{sysconfig.get_paths()['include']}",
        str(source),
        "-o",
        str(target),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{shlex.join(argv)}:\n{done.stderr}"


@pytest.fixture(scope="module")
def sanitizer_env() -> dict[str, str]:
    """The environment a child Python needs to run sanitized extensions."""
    compiler = _compiler()[0]
    asan = _runtime(compiler, "libasan.so")
    if asan is None:
        pytest.skip(f"{compiler} has no AddressSanitizer runtime (libasan.so)")
    ubsan = _runtime(compiler, "libubsan.so")
    return {
        **os.environ,
        "LD_PRELOAD": " ".join(p for p in (asan, ubsan) if p),
        "PYTHONMALLOC": "malloc",
        # CPython frees little at exit by design; the leak report would be all noise
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    }


def _run(env: dict[str, str], *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=TESTS, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_setup_catches_a_read_one_byte_past_a_body(sanitizer_env: dict[str, str], tmp_path: Path) -> None:
    source = tmp_path / "_over_read.c"
    source.write_text(_OVER_READ)
    target = tmp_path / f"_over_read{sysconfig.get_config_var('EXT_SUFFIX')}"
    _build(source, target)
    load = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('_over_read', {str(target)!r}); "
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
        "from support.fuzz_scan import exact_buffer; "
        "print(module.read_at(exact_buffer(b'\\x01' * 64), int(sys.argv[1])))"
    )
    inside = _run(sanitizer_env, "-c", load, "63")  # the last byte of the body: fine
    assert inside.returncode == 0, inside.stderr[-2000:]
    assert inside.stdout.strip() == "1"
    past = _run(sanitizer_env, "-c", load, "64")  # one byte past it, as the fuzz harness hands bodies over
    assert past.returncode != 0
    assert "heap-buffer-overflow" in past.stderr


def _fuzzed(
    env: dict[str, str], folder: Path, source: Path, harness: str, count_variable: str, count: str, per_second: int
) -> dict[str, Any]:
    """``source`` built with the sanitizers and run through ``support.<harness>``: its report, the sanitized build's.

    ``count_variable`` (default ``count``) sets how many inputs; ``per_second`` is a generous rate for the timeout.
    """
    target = folder / f"{source.stem}{sysconfig.get_config_var('EXT_SUFFIX')}"
    _build(source, target)
    seed, many = os.environ.get("FUZZ_SEED", "1"), os.environ.get(count_variable, count)
    argv = ["-m", f"support.{harness}", "--extension", str(target), "--seed", seed, "--count", many]
    done = _run(env, *argv, timeout=120 + int(many) / per_second)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["extension"] == str(target)  # the sanitized build ran, not the installed one
    return report


def test_fuzzed_bodies_under_the_sanitizers(sanitizer_env: dict[str, str], tmp_path: Path) -> None:
    report = _fuzzed(sanitizer_env, tmp_path, SOURCE, "fuzz_scan", "FUZZ_COUNT", "60000", 500)  # ~80 µs a body
    assert min(report["counts"].values()) >= 100, report  # every outcome was exercised, accepted bodies included


def test_fuzzed_json_bodies_under_the_sanitizers(sanitizer_env: dict[str, str], tmp_path: Path) -> None:
    report = _fuzzed(sanitizer_env, tmp_path, JSON_SOURCE, "fuzz_json", "FUZZ_JSON_COUNT", "4000", 50)  # ~5 ms a body
    assert min(report["counts"].values()) >= 50, report  # every outcome was exercised, taken bodies included


def test_fuzzed_values_through_the_canonical_writer_under_the_sanitizers(
    sanitizer_env: dict[str, str], tmp_path: Path
) -> None:
    report = _fuzzed(sanitizer_env, tmp_path, CANONICAL_SOURCE, "fuzz_canonical", "FUZZ_CANONICAL_COUNT", "4000", 50)
    assert min(report["counts"].values()) >= 50, report  # written, handed back and raised all exercised


def test_fuzzed_graphs_through_the_kernels_under_the_sanitizers(sanitizer_env: dict[str, str], tmp_path: Path) -> None:
    report = _fuzzed(sanitizer_env, tmp_path, KERNELS_SOURCE, "fuzz_kernels", "FUZZ_KERNELS_COUNT", "800", 20)
    assert min(report["counts"].values()) >= 30, report  # the same floats, handed back and raised all exercised


def test_fuzzed_texts_through_the_text_loops_under_sanitizers(sanitizer_env: dict[str, str], tmp_path: Path) -> None:
    report = _fuzzed(sanitizer_env, tmp_path, TEXT_SOURCE, "fuzz_text", "FUZZ_TEXT_COUNT", "1500", 50)
    assert min(report["counts"].values()) >= 50, report  # the same words and floats, handed back and raised
