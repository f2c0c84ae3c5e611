"""Attribution on live teams with a fault injected: every member its own process, assessed by a real green.

Two rule-based stars, with a pass threshold neither can reach (so each scenario fails and is
attributed): one whose writer answers a failed task, one whose writer crashed before the
assessment. The results name the writer, at the span the raw trace (fetched from the green)
shows for it: the writer's SERVER span where it failed, the coordinator's call to it where it was
down. The report rings the writer in the graph and outlines that span in the waterfall, and
``coordbench attribute`` on the stored trace and on the results agrees.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.cli import app
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.purple import load_team
from coordbench.purple.launcher import Fleet
from coordbench.spans import SpanKind
from coordbench.traces.file import load_spans
from support.commands import ServerProcess
from support.consistency import contradictions

pytestmark = pytest.mark.slow

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"
CONFIG: dict[str, Any] = {
    "scenarios": [{"id": "launch", "task": "Plan the launch of the mobile app. The budget is 40,000.",
                   "references": ["Owners, a dated timeline, the budget, and the risks."]}],
    "pass_threshold": 0.99,
    "trace_quiet": 0.5,
    "trace_timeout": 10,
    "timeout": 120,
}  # fmt: skip


async def _assess(green: str, participants: dict[str, str], team: str) -> dict[str, Any]:
    request = {"participants": participants, "config": {**CONFIG, "team": team}}
    async with Messenger(timeout=600) as messenger:
        reply = await messenger.send(green, json.dumps(request), new_conversation=True)
    assert reply.state == "completed", reply.text
    return json.loads(json.dumps(reply.data[0]))


def _spans_of(green: str, trace_id: str, into: Path) -> Path:
    response = httpx.get(f"{green}/v1/traces/{trace_id}", timeout=30)
    response.raise_for_status()
    into.write_bytes(response.content)
    return into


def test_the_failing_member_is_named_at_its_span_in_results_report_and_cli(
    tmp_path: Path, subprocess_env: dict[str, str]
) -> None:
    env = {k: v for k, v in subprocess_env.items() if k != LLM_API_KEY_ENV and not k.startswith("OTEL_")}
    star = load_team(TEAMS / "star.toml")
    teams = [("star-failing", load_team(TEAMS / "star-failing.toml")),
             ("star-down", star.model_copy(update={"name": "star-down"}))]  # fmt: skip
    green = ServerProcess("green", "--output-dir", str(tmp_path / "green"), env=env)
    try:
        with Fleet(teams, endpoint=green.url, env=env, log_dir=tmp_path / "logs") as fleet:
            urls = fleet.start()
            fleet.members[("star-down", "writer")].kill()  # crashed before the assessment

            async def both() -> list[dict[str, Any]]:
                return list(await asyncio.gather(*(_assess(green.url, urls[label], label) for label, _ in teams)))

            rows = dict(zip([label for label, _ in teams], asyncio.run(both()), strict=True))
            pages = {}
            for label, row in rows.items():
                page = httpx.get(f"{green.url}/reports/{row['assessment_id']}", timeout=30)
                page.raise_for_status()
                pages[label] = page.text
                assert contradictions(row, page.text) == [], label
            files = {label: _spans_of(green.url, row["detail"]["scenarios"][0]["trace_id"], tmp_path / f"{label}.json")
                     for label, row in rows.items()}  # fmt: skip
    finally:
        green.stop()

    for label, row in rows.items():
        scenario = row["detail"]["scenarios"][0]
        assert not scenario["passed"], label
        blamed = scenario["attribution"]
        assert blamed["agent"] == "writer", (label, blamed)
        spans = load_spans(files[label])
        if label == "star-failing":  # it answered a failed task: its own SERVER span
            where = [s for s in spans if s.kind is SpanKind.SERVER
                     and s.attributes.get(semconv.GEN_AI_AGENT_NAME) == "writer"]  # fmt: skip
            assert blamed["rule"] == "failed_call"
        else:  # it crashed before: the coordinator could not reach it, and no span of its exists to point at
            where = [s for s in spans if s.name == "invoke_agent writer"]
            assert where == [] and blamed["rule"] == "member_down" and blamed["span_id"] is None, blamed
            assert "writer could not be reached" in blamed["reason"]
        assert [s.span_id for s in where] == ([blamed["span_id"]] if where else []), (label, blamed)
        assert blamed["failure_visible"]
        page = pages[label]
        assert f'data-attribution-agent="writer" data-attribution-span="{blamed["span_id"] or ""}"' in page
        assert 'data-agent="writer" data-blamed="true"' in page
        if blamed["span_id"] is not None:
            assert blamed["evidence"][0]["span_id"] == blamed["span_id"]
            assert f'data-span="{blamed["span_id"]}" data-decisive="true"' in page
        # the stored trace, attributed on its own, says the same (the green recorded what it needs)
        result = CliRunner().invoke(app, ["attribute", str(files[label]), "--json"])
        assert result.exit_code == 0, result.output
        again = json.loads(result.stdout.splitlines()[0])
        assert (again["agent"], again["span_id"], again["rule"]) == ("writer", blamed["span_id"], blamed["rule"])
    document = tmp_path / "results.json"
    document.write_text(json.dumps({"participants": {}, "results": [rows["star-failing"]]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["attribute", str(document), "--json"])
    assert result.exit_code == 0, result.output
    recorded = json.loads(result.stdout.splitlines()[0])
    assert recorded["agent"] == "writer" and recorded["scenario"] == "launch"
