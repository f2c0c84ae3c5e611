"""Build hook: compile the optional C extension ``coordbench.otlp._scan`` (OTLP/protobuf ingest).

The extension is one C file with no dependency beyond CPython's headers, so it is compiled
with the interpreter's own compiler settings (``sysconfig``) rather than through setuptools.
Without a C compiler or the headers the build goes on and coordbench runs on its pure-Python
path (:mod:`coordbench.otlp.native` says which one is in use); set
``COORDBENCH_BUILD_NATIVE=0`` to skip the extension on purpose, or ``=1`` to make a failed
compile an error.

Editable installs (``uv sync``) build the extension next to its source, where the import
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

SOURCE = Path("src/coordbench/otlp/_scan.c")


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compiles ``_scan.c`` into ``src/coordbench/otlp/_scan<EXT_SUFFIX>`` for wheels and editable installs."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile the extension and declare the wheel platform-specific when it is built."""
        if self.target_name != "wheel":
            return
        wanted = os.environ.get("COORDBENCH_BUILD_NATIVE", "").strip()
        if wanted == "0":
            return
        source = Path(self.root) / SOURCE
        target = source.with_name("_scan" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
        try:
            _compile(source, target)
        except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
            if wanted == "1":
                raise
            print(f"coordbench: C extension not built ({exc}); the pure-Python path will be used", file=sys.stderr)
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(target)] = f"coordbench/otlp/{target.name}"


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
        f"-I{include}",
        str(source),
        "-o",
        str(target),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed: {done.stderr.strip()[-2000:]}")
