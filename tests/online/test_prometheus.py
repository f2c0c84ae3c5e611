"""The dashboards and alert rules against a real Prometheus (Debian's ``prometheus`` and ``promtool``).

A receiver evaluates live traces of three teams online; Prometheus scrapes it every second
with our alert rules loaded. Every query of every dashboard panel, and every rule, must
return series carrying the labels it groups by, with real numbers. A team whose coordination
falls puts ``CoordbenchCoordinationLow`` in Prometheus's ``ALERTS`` (pending: it holds 10
minutes before firing) and the steady team does not; skipped evaluations fire at once.
``promtool test rules`` then runs the same rule file through hours of simulated time: the
drop and low-coordination alerts fire for the team that slipped, after their ``for``, and
never for the steady one.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from conftest import Backend, StartBackend
from coordbench.dashboards import grafana as dashboard
from coordbench.dashboards.page import query_panels, render_dashboard
from evals.teams import Team
from online.traces import FAILING, GOOD, evaluation, post, stats, team_trace, trace_id, until
from support.serving import free_port

pytestmark = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("promtool") is None,
    reason="Debian's prometheus is not installed (make test installs it)",
)

DASHBOARDS = Path(__file__).resolve().parents[2] / "dashboards"
RULES = DASHBOARDS / "prometheus" / "alerts.yml"


class Prometheus:
    """``prometheus`` on a free loopback port with the compose profile's configuration and rules.

    Only what differs here is changed: the target (the receiver on loopback, not ``green:9009``),
    the rules' path, and the intervals (a second, not 15 and 30).
    """

    def __init__(self, target: str, workdir: Path) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        shipped = yaml.safe_load((DASHBOARDS / "prometheus" / "prometheus.yml").read_text())
        shipped["global"] = {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"}
        shipped["rule_files"] = [str(RULES)]
        (scrape,) = shipped["scrape_configs"]
        scrape["static_configs"][0]["targets"] = [target]
        config = workdir / "prometheus.yml"
        config.write_text(yaml.safe_dump(shipped))
        self.log = (workdir / "prometheus.log").open("w")
        self.proc = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip

        def ready() -> bool:
            assert self.proc.poll() is None, (workdir / "prometheus.log").read_text()
            try:
                return httpx.get(f"{self.url}/-/ready", timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        until(ready, "prometheus answered /-/ready")

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=30)
        assert answer.status_code == 200, f"{expr}: {answer.text}"
        document = answer.json()
        assert document["status"] == "success", document
        return document["data"]["result"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture
def scraped(start_backend: StartBackend, tmp_path: Path) -> Iterator[tuple[Backend, Prometheus]]:
    backend = start_backend(evaluate=True, evaluate_quiet=0.2, evaluate_settle=1.0, evaluate_queue=2)
    prometheus = Prometheus(backend.url.removeprefix("http://"), tmp_path)
    yield backend, prometheus
    prometheus.stop()


def _one_by_one(backend: Backend, traces: list[tuple[int, Team, str]]) -> None:
    """Post each trace alone and wait for its evaluation: the small queue never overflows."""
    for n, team, namespace in traces:
        post(backend.url, team_trace(n, team, namespace=namespace))
        evaluation(backend.url, trace_id(n))


def _concrete(expr: str) -> str:
    return expr.replace("$team", ".*").replace("$__rate_interval", "1m")


def test_every_panel_and_rule_returns_labelled_series_and_a_slipping_team_alerts(
    scraped: tuple[Backend, Prometheus],
) -> None:
    backend, prometheus = scraped
    started = time.time()
    # first: both teams coordinate well, and Prometheus sees it
    _one_by_one(backend, [(1, GOOD, "steady"), (2, GOOD, "slipping"), (3, GOOD, "steady"), (4, GOOD, "slipping")])
    until(lambda: len(prometheus.query('coordbench_evaluations_total{team="slipping"}')) == 1, "the first scrape")
    # then: one team slips, the other keeps working well
    later = [(10 + n, FAILING, "slipping") for n in range(8)] + [(30 + n, GOOD, "steady") for n in range(4)]
    _one_by_one(backend, sorted(later, key=lambda t: t[0] % 10))
    # a flood the queue cannot hold (skipped), and a malformed export (rejected)
    post(backend.url, [s for n in range(12) for s in team_trace(50 + n, GOOD, namespace="flood")])
    bad = httpx.post(f"{backend.url}/v1/traces", json={"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "zz", "spanId": "0000000000000001", "name": "x"}]}]}]}, timeout=30)  # fmt: skip
    assert bad.status_code == 200 and "rejectedSpans" in bad.text  # OTLP's partial success

    def flood_settled() -> bool:
        counters = stats(backend.url)
        return counters["evaluated"] + counters["skipped"].get("queue_full", 0) == 16 + 12  # type: ignore[union-attr]

    until(flood_settled, "the flood evaluated or skipped")
    # on a busy machine the small queue can skip every flood trace: one more, alone, is evaluated whatever the speed
    _one_by_one(backend, [(70, GOOD, "flood")])
    evaluated = stats(backend.url)["evaluated"]

    def scraped_all() -> bool:
        total = prometheus.query("sum(coordbench_traces_evaluated_total)")
        rejected = prometheus.query("count_over_time(coordbench_spans_rejected_by_reason_total[1m]) >= 2")
        # a panel's increase() needs two samples of a series: the flood team's may have begun with the last trace
        flood = prometheus.query(
            'count_over_time(coordbench_evaluation_coordination_quality_count{team="flood"}[15m]) >= 2'
        )
        return bool(total) and float(total[0]["value"][1]) == evaluated and bool(rejected) and bool(flood)

    until(scraped_all, "Prometheus scraped every evaluation, the rejection and the flood team twice")

    for panel in dashboard.PANELS:
        for expr, _legend in panel.exprs:
            result = prometheus.query(_concrete(expr))
            assert result, f"panel {panel.title!r}: no series for {expr}"
            for series in result:
                assert set(panel.labels) <= set(series["metric"]), (panel.title, series["metric"])
            values = [float(series["value"][1]) for series in result]
            assert any(math.isfinite(v) for v in values), (panel.title, expr, values)
    teams = {s["metric"]["team"] for s in prometheus.query(_concrete(dashboard.PANELS[0].exprs[0][0]))}
    assert {"steady", "slipping", "flood"} <= teams

    rules = dashboard.alert_rules()["groups"][0]["rules"]
    assert {r["alert"] for r in rules} == {a.name for a in dashboard.ALERTS}
    for rule in rules:
        prometheus.query(rule["expr"])  # valid PromQL on the real engine (a condition that does not hold is empty)
    for alert in dashboard.ALERTS:  # what each condition compares returns labelled series, held or not
        for part in alert.parts:
            result = prometheus.query(part)
            assert result, f"{alert.name}: no series for {part}"
            assert all(set(alert.labels) <= set(series["metric"]) for series in result), (alert.name, part)
    low = next(a for a in dashboard.ALERTS if a.name == "CoordbenchCoordinationLow")
    condition = prometheus.query(low.expr)
    assert [s["metric"]["team"] for s in condition] == ["slipping"]
    assert float(condition[0]["value"][1]) < dashboard.LOW_COORDINATION

    def alerts() -> dict[tuple[str, str], str]:
        found = prometheus.query("ALERTS")
        return {
            (s["metric"]["alertname"], s["metric"].get("team") or s["metric"].get("reason", "")): s["metric"][
                "alertstate"
            ]
            for s in found
        }

    until(lambda: ("CoordbenchCoordinationLow", "slipping") in alerts(), "the low-coordination alert is pending")
    until(lambda: ("CoordbenchEvaluationsSkipped", "queue_full") in alerts(), "the skipped-evaluations alert")
    state = alerts()
    assert state[("CoordbenchCoordinationLow", "slipping")] == "pending"  # it holds 10 minutes before firing
    assert state[("CoordbenchEvaluationsSkipped", "queue_full")] == "firing"
    assert not any(team == "steady" for _alert, team in state)

    # the same panels drawn from this Prometheus as a page (for where Grafana is not at hand)
    end = time.time()
    drawn = query_panels(prometheus.url, start=started, end=end, step=1.0)
    assert [d.panel.title for d in drawn] == [p.title for p in dashboard.PANELS]
    assert all(d.error is None and d.series for d in drawn), [(d.panel.title, d.error) for d in drawn if not d.series]
    page = render_dashboard(drawn, start=started, end=end, source=prometheus.url)
    assert page.count('class="card panel"') == len(dashboard.PANELS)
    assert page.count("<polyline") >= sum(len(d.series) for d in drawn if d.panel.kind == "timeseries")


def test_the_rules_fire_after_their_hold_for_the_team_that_slipped(tmp_path: Path) -> None:
    """Six hours of a good team and one that slips for the last half hour, in promtool's simulated time."""
    q = "coordbench_evaluation_coordination_quality"
    good_sum, good_count = "0+0.9x390", "0+1x390"
    slip_sum, slip_count = "0+0.9x360 324.3+0.3x29", "0+1x360 361+1x29"  # 0.9 a scenario, then 0.3
    test = tmp_path / "alerts_test.yml"
    drop = "Coordination of team slipping dropped: its 15-minute mean is below 85% of its 6-hour mean."
    test.write_text(
        f"rule_files: ['{RULES}']\n"
        "evaluation_interval: 1m\n"
        "tests:\n"
        "  - interval: 1m\n"
        "    input_series:\n"
        f"      - {{series: '{q}_sum{{team=\"steady\"}}', values: '{good_sum}'}}\n"
        f"      - {{series: '{q}_count{{team=\"steady\"}}', values: '{good_count}'}}\n"
        f"      - {{series: '{q}_sum{{team=\"slipping\"}}', values: '{slip_sum}'}}\n"
        f"      - {{series: '{q}_count{{team=\"slipping\"}}', values: '{slip_count}'}}\n"
        "    alert_rule_test:\n"
        "      - {eval_time: 355m, alertname: CoordbenchCoordinationDrop, exp_alerts: []}\n"
        "      - {eval_time: 355m, alertname: CoordbenchCoordinationLow, exp_alerts: []}\n"
        "      - {eval_time: 366m, alertname: CoordbenchCoordinationDrop, exp_alerts: []}\n"
        "      - eval_time: 385m\n"
        "        alertname: CoordbenchCoordinationDrop\n"
        "        exp_alerts:\n"
        "          - exp_labels: {severity: warning, team: slipping}\n"
        f"            exp_annotations: {{summary: '{drop}'}}\n"
        "      - eval_time: 385m\n"
        "        alertname: CoordbenchCoordinationLow\n"
        "        exp_alerts:\n"
        "          - exp_labels: {severity: warning, team: slipping}\n"
        "            exp_annotations: {summary: 'Coordination of team slipping is low: its 15-minute mean is 0.30.'}\n"
    )
    run = subprocess.run(["promtool", "test", "rules", str(test)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS" in run.stdout


def test_the_files_under_dashboards_are_what_the_code_builds() -> None:
    for relative, text in dashboard.files().items():
        assert (DASHBOARDS / relative).read_text(encoding="utf-8") == text, f"run `make dashboards`: {relative}"
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
