"""Record live runs of our own purple teams with a fault injected: the recorded labelled attribution set.

Each shape the demo runs (the rule-based star, chain and tree; the ReAct orchestrator, group chat
and handoff chain deciding by the rules) with one worker broken three ways: it answers a failed
task (``fail = "failed"``), its executor raises (``fail = "raise"``), or its process is killed
before the assessment (down). Every member is its own process; a real green assesses the team
and holds the trace; the trace is fetched from it as it stored it. The truth is known by
construction: the broken worker is responsible, at its first SERVER span (where it failed), or at
the first call to it (down; ``null`` when no agent called it: nothing of it exists in the trace).

``python -m tests.attribution.record data/attribution`` writes ``recorded-traces.jsonl`` (each trace as
the green stored it, as OTLP/JSON, one a line) and ``recorded-labels.json``. It takes about a
minute on 2 cores; the files are committed, and ``tests/attribution/test_labelled.py`` checks each
label against its trace.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from coordbench import semconv
from coordbench.a2a import Messenger
from coordbench.evals.config import LLM_API_KEY_ENV
from coordbench.otlp.encode import export_request_json
from coordbench.purple.launcher import Fleet
from coordbench.purple.team import Team, team_for_shape
from coordbench.spans import SpanData, SpanKind
from coordbench.traces.file import spans_in

SHAPES = ("star", "chain", "tree", "react", "groupchat", "handoff")
FAULTS = ("failed", "raise", "down")
CONFIG: dict[str, Any] = {
    "scenarios": [{"id": "launch", "task": "Plan the launch of the mobile app. The budget is 40,000 and the deadline "
                   "is 2026-12-01.", "references": ["Owners, a dated timeline, the budget, and the risks."]}],
    "trace_quiet": 0.5,
    "trace_timeout": 10,
    "timeout": 120,
}  # fmt: skip
BATCH = 6
"""Teams run at once (every member is a process: 2 cores hold about this many teams' worth)."""


def broken(shape: str, fault: str, k: int) -> tuple[str, Team, str]:
    """The team of ``shape`` with its ``k``-th called worker broken by ``fault``: (label, team, worker)."""
    team = team_for_shape(shape, 3)
    workers = sorted(team.called - {team.entry})
    worker = workers[k % len(workers)]
    if fault != "down":
        members = [m.model_copy(update={"fail": fault}) if m.name == worker else m for m in team.members]
        team = team.model_copy(update={"members": members})
    label = f"{shape}-{fault}-{worker}"
    return label, team.model_copy(update={"name": label[:63]}), worker


def _truth(spans: list[SpanData], worker: str) -> str | None:
    """The decisive span by construction: the worker's first SERVER span, else the first call to it."""
    order = sorted(spans, key=lambda s: (s.start_time_unix_nano, s.span_id))
    served = [s for s in order if s.kind is SpanKind.SERVER and s.attributes.get(semconv.GEN_AI_AGENT_NAME) == worker]
    if served:
        return served[0].span_id
    calls = [s for s in order if s.kind is SpanKind.CLIENT and s.attributes.get(semconv.GEN_AI_AGENT_NAME) == worker]
    return calls[0].span_id if calls else None


async def _assess(green: str, participants: dict[str, str], team: str) -> dict[str, Any]:
    request = {"participants": participants, "config": {**CONFIG, "team": team}}
    async with Messenger(timeout=600) as messenger:
        reply = await messenger.send(green, json.dumps(request), new_conversation=True)
    return json.loads(json.dumps(reply.data[0]))


def record(folder: Path) -> None:
    """Run every broken team through a green and write the traces and their labels into ``folder``."""
    import httpx

    from support.commands import ServerProcess

    env = {k: v for k, v in os.environ.items() if k != LLM_API_KEY_ENV and not k.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent.parent), env.get("PYTHONPATH", "")])
    runs = [broken(shape, fault, k + j) for k, shape in enumerate(SHAPES) for j, fault in enumerate(FAULTS)]
    lines: list[str] = []
    labels: list[dict[str, Any]] = []
    logs = folder / ".record-logs"
    green = ServerProcess("green", "--output-dir", str(logs / "green"), env=env)
    try:
        for start in range(0, len(runs), BATCH):
            batch = runs[start : start + BATCH]
            with Fleet([(label, team) for label, team, _ in batch], endpoint=green.url, env=env,
                       log_dir=logs) as fleet:  # fmt: skip
                urls = fleet.start()
                for label, _, worker in batch:
                    if label.split("-")[1] == "down":
                        fleet.members[(label, worker)].kill()

                async def all_of(chosen: list[tuple[str, Team, str]], at: dict[str, dict[str, str]]) -> list[Any]:
                    return list(await asyncio.gather(*(_assess(green.url, at[label], label) for label, _, _ in chosen)))

                rows = asyncio.run(all_of(batch, urls))
                for (label, _team, worker), row in zip(batch, rows, strict=True):
                    trace_id = row["detail"]["scenarios"][0]["trace_id"]
                    body = httpx.get(f"{green.url}/v1/traces/{trace_id}", timeout=60).content
                    spans = spans_in(Path(f"{label}.json"), body)
                    lines.append(json.dumps(export_request_json(spans), sort_keys=True, separators=(",", ":")))
                    shape, fault = label.split("-")[:2]
                    labels.append({"trace_id": trace_id, "name": label, "shape": shape, "fault": fault,
                                   "agent": worker, "span_id": _truth(spans, worker)})  # fmt: skip
                    print(f"{label}: {len(spans)} spans", file=sys.stderr)
    finally:
        green.stop()
    (folder / "recorded-traces.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    document = {"runs": labels}
    (folder / "recorded-labels.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n",
                                                  encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    record(Path(sys.argv[1] if len(sys.argv) > 1 else "data/attribution"))
