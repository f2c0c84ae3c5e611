"""Render the coordination dashboard from a real run, for docs/online.md (Grafana cannot run here).

``uv run python scripts/dashboard_preview.py [SECONDS]`` starts a receiver with online
evaluation and Debian's ``prometheus`` scraping it every second with our alert rules, then
for SECONDS (default 120) sends traffic: team ``search`` coordinates well throughout; team
``billing`` works one member after another; team ``support`` coordinates well for the first
half, then its members fail, repeat and relay; background spans without A2A calls flow all
along, and a burst at the end overflows the evaluation queue once. The dashboard's panels
are then queried from that Prometheus and drawn (``coordbench.dashboards.page``) into
``docs/images/dashboard.html`` and, through headless Chromium, ``docs/images/dashboard.png``.

The traces come from the test suite's team generator (``tests/evals/teams.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from coordbench.dashboards.page import query_panels, render_dashboard  # noqa: E402
from coordbench.otlp import export_request  # noqa: E402
from coordbench.server.app import create_app  # noqa: E402
from coordbench.settings import Settings  # noqa: E402
from coordbench.testing import LoopbackServer  # noqa: E402
from evals.teams import Team, team_spans  # noqa: E402
from online.traces import FAILING, GOOD, SERIAL  # noqa: E402
from support.serving import free_port  # noqa: E402

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def _trace(n: int, team: Team, namespace: str) -> bytes:
    spans = [
        s._replace(trace_id=f"{0xDA5B0000 + n:032x}", resource={**s.resource, "service.namespace": namespace})
        for s in team_spans(team)
    ]
    return export_request(spans).SerializeToString()


def _prometheus(target: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    config = yaml.safe_load((ROOT / "dashboards/prometheus/prometheus.yml").read_text())
    config["global"] = {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(ROOT / "dashboards/prometheus/alerts.yml")]
    config["scrape_configs"][0]["static_configs"][0]["targets"] = [target]
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={workdir / 'prometheus.yml'}", f"--storage.tsdb.path={workdir / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(f"{url}/-/ready", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)


def main(seconds: float = 120.0) -> None:
    """Run the traffic for ``seconds``, then draw the dashboard from what Prometheus scraped."""
    settings = Settings(grpc_port=None, evaluate=True, evaluate_quiet=0.5, evaluate_queue=8)
    server = LoopbackServer(lambda _url: create_app(settings))
    url = server.start().rstrip("/")
    workdir = Path(tempfile.mkdtemp(prefix="coordbench-dashboard-"))
    prometheus, prometheus_url = _prometheus(url.removeprefix("http://"), workdir)
    try:
        started = time.time()
        n = 0
        with httpx.Client(timeout=60) as client:
            while time.time() - started < seconds:
                elapsed = time.time() - started
                support = GOOD if elapsed < seconds / 2 else FAILING
                for team, namespace in ((GOOD, "search"), (SERIAL, "billing"), (support, "support")):
                    n += 1
                    client.post(f"{url}/v1/traces", content=_trace(n, team, namespace), headers=PROTOBUF)
                time.sleep(1.5)
            for _ in range(20):  # the queue's bound (8) overflows once: skipped evaluations show
                n += 1
                client.post(f"{url}/v1/traces", content=_trace(n, GOOD, "search"), headers=PROTOBUF)
            time.sleep(5)  # evaluations end and two more scrapes happen
        end = time.time()
        panels = query_panels(prometheus_url, start=started, end=end, step=2.0)
        page = render_dashboard(panels, start=started, end=end, source="Prometheus 2.42 (Debian), scraping every 1 s")
        out = ROOT / "docs" / "images"
        out.mkdir(parents=True, exist_ok=True)
        (out / "dashboard.html").write_text(page, encoding="utf-8")
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is not None:
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--hide-scrollbars", f"--user-data-dir={workdir / 'profile'}",
                 "--window-size=1150,3900", f"--screenshot={out / 'dashboard.png'}", (out / "dashboard.html").as_uri()],
                check=True, capture_output=True, timeout=180,
            )  # fmt: skip
        print(f"wrote {out / 'dashboard.html'} and {out / 'dashboard.png'}")
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 120.0)
