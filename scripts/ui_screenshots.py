"""Screenshot the live UI on the demo's runs, for the README and docs/ui.md.

``uv run python scripts/ui_screenshots.py`` runs ``coordbench demo --serve`` (every shape), waits
until the green has evaluated each team's run online, then opens the runs page, one failing or
lowest-scoring run, a team and the failures page in Debian's chromium through Playwright (the
browser and helper the UI tests use: ``executable_path``, offline) and writes
``docs/images/ui-*.png``. The demo is stopped with Ctrl-C's signal afterwards.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.serving import free_port  # noqa: E402
from ui.browser import browser  # noqa: E402

IMAGES = ROOT / "docs" / "images"


def main() -> int:
    """Run the demo, take the screenshots, stop the demo."""
    port = free_port()
    command = [sys.executable, "-m", "coordbench", "demo", "--serve", "--port", str(port),
               "--output-dir", str(ROOT / "output" / "ui-screenshots")]  # fmt: skip
    demo = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for line in demo.stderr or ():
            if "live UI:" in line:
                break
        else:
            return 1
        teams = 9
        while True:  # the green evaluates each assessment's trace once it is complete
            listed = httpx.get(f"{url}/v1/evaluations", timeout=30).json()["evaluations"]
            if len(listed) >= teams:
                break
            time.sleep(0.2)
        lowest = min(listed, key=lambda e: min(s["score"] for s in e["scenarios"]))
        with browser() as chromium:
            page = chromium.new_page(viewport={"width": 1400, "height": 860})
            for name, path in (
                ("ui-runs", "/ui/"),
                ("ui-trace", f"/ui/traces/{lowest['trace_id']}"),
                ("ui-team", f"/ui/teams/{lowest['team']}"),
                ("ui-failures", "/ui/failures"),
            ):
                page.goto(url + path)  # waits for the load event: every picture is in the page itself
                if path == "/ui/":
                    page.wait_for_selector("[data-live-status]:text-is('live')")
                page.screenshot(path=str(IMAGES / f"{name}.png"))
                print(IMAGES / f"{name}.png")
        return 0
    finally:
        demo.send_signal(signal.SIGINT)
        demo.communicate(timeout=120)


if __name__ == "__main__":
    raise SystemExit(main())
