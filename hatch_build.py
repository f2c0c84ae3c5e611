"""Build hook: compile the optional C extensions (OTLP ingest's scanners, canonical JSON, graph and text kernels).

``coordbench.otlp._scan`` and ``_jsonscan`` read OTLP requests; ``coordbench.graph.metrics._canonical``
writes the canonical JSON of every evaluation; ``coordbench.graph.metrics._kernels`` runs the graph
metrics' inner loops; ``coordbench.evals._text`` the text measures' (words, trigrams, TF-IDF cosines).

Each extension is one C file with no dependency beyond CPython's headers, so it is compiled
with the interpreter's own compiler settings (``sysconfig``) rather than through setuptools.
Without a C compiler or the headers the build goes on and coordbench runs on its pure-Python
path (:mod:`coordbench.otlp.native` says which one is in use); set
``COORDBENCH_BUILD_NATIVE=0`` to skip the extensions on purpose, or ``=1`` to make a failed
compile an error.

Editable installs (``uv sync``) build each extension next to its source, where the import
system finds it; wheels carry it as a platform-specific file.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCES = (
    Path("src/coordbench/otlp/_scan.c"),
    Path("src/coordbench/otlp/_jsonscan.c"),
    Path("src/coordbench/graph/metrics/_canonical.c"),
    Path("src/coordbench/graph/metrics/_kernels.c"),
    Path("src/coordbench/evals/_text.c"),
)


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles each of :data:`SOURCES` into ``<its folder>/<name><EXT_SUFFIX>`` (wheels, editable installs)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile the extensions and declare the wheel platform-specific when one is built."""
        if self.target_name != "wheel":
            return
        wanted = os.environ.get("COORDBENCH_BUILD_NATIVE", "").strip()
        if wanted == "0":
            return
        built = False
        for relative in SOURCES:
            source = Path(self.root) / relative
            target = source.with_name(source.stem + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
            try:
                _compile(source, target)
            except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
                if wanted == "1":
                    raise
                print(
                    f"coordbench: {source.name} not built ({exc}); its pure-Python path will be used", file=sys.stderr
                )
                continue
            built = True
            if version != "editable":
                build_data["force_include"][str(target)] = target.relative_to(Path(self.root) / "src").as_posix()
        if built:
            build_data["pure_python"] = False
            build_data["infer_tag"] = True


def _compile(source: Path, target: Path) -> None:
    command = sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths()["include"]
    if not command or not (Path(include) / "Python.h").is_file():
        raise RuntimeError("no C compiler configuration or Python headers for this interpreter")
    cflags = shlex.split(sysconfig.get_config_var("CCSHARED") or "")
    argv = [
        *shlex.split(command),
        *cflags,
        "-O2",
        "-std=c11",
        "-Wall",
        "-ffp-contract=off",  # no fused multiply-add: the kernels must make the floats their Python versions make
        f"-I{include}",
        str(source),
        "-o",
        str(target),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed: {done.stderr.strip()[-2000:]}")
