"""Record where a leaderboard run's results came from: image digests, time, and the CI run.

Reads the images from the compose file the run used and asks Docker for each one's repo digest
(``docker image inspect``); without Docker (or an image that was never pulled) the digest is
``null`` with the reason. Writes JSON: ``{"timestamp", "images": {service: {"image", "digest",
"error"}}, "github": {run id, ref, sha, workflow, repository}}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml


def digest(image: str) -> tuple[str | None, str | None]:
    """The image's first repo digest, or ``None`` and why not."""
    docker = shutil.which("docker")
    if docker is None:
        return None, "docker is not installed here"
    result = subprocess.run(
        [docker, "image", "inspect", "--format", "{{json .RepoDigests}}", image],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if result.returncode != 0:
        return None, (result.stderr.strip() or f"docker image inspect exited {result.returncode}")[:300]
    digests = json.loads(result.stdout or "[]")
    return (digests[0], None) if digests else (None, "the image has no repo digest (built locally)")


def provenance(compose_file: Path) -> dict[str, Any]:
    """The provenance record of the run that used ``compose_file``."""
    compose = yaml.safe_load(compose_file.read_text(encoding="utf-8"))
    images: dict[str, Any] = {}
    for name, service in sorted((compose.get("services") or {}).items()):
        image = service.get("image")
        if image:
            found, error = digest(str(image))
            images[name] = {"image": image, "digest": found, "error": error}
    keys = ("GITHUB_RUN_ID", "GITHUB_REF", "GITHUB_SHA", "GITHUB_WORKFLOW", "GITHUB_REPOSITORY")
    github = {key.removeprefix("GITHUB_").lower(): os.environ[key] for key in keys if key in os.environ}
    return {"timestamp": dt.datetime.now(dt.UTC).isoformat(), "images": images, "github": github}


def main(argv: list[str] | None = None) -> int:
    """Record; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compose", type=Path, default=Path("docker-compose.yml"))
    parser.add_argument("--output", type=Path, default=Path("output/provenance.json"))
    args = parser.parse_args(argv)
    try:
        record = provenance(args.compose)
    except (OSError, yaml.YAMLError) as exc:
        print(f"error: cannot read {args.compose}: {exc}", file=sys.stderr)
        return 2
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
