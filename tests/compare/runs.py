"""Result rows of generated team runs (:mod:`evals.teams`), evaluated offline by the real pipeline."""

from __future__ import annotations

from dataclasses import replace

from coordbench.results import AssessmentReport, ScenarioReport, result_row
from coordbench.results.document import ResultRow, ResultsDocument
from evals.teams import TRACE, Team, Worker, evaluate_spans, outcome, team_spans

STAR = Team(
    workers=(
        Worker("researcher", words=("granite", "steel")),
        Worker("analyst", words=("cable", "pylon")),
        Worker("writer", words=("deck", "rivet")),
    )
)
"""Three workers, side by side."""

SERIAL = replace(STAR, parallel=False)
"""The same work, one worker after another."""
WRITER_LEFT_OUT = replace(STAR, workers=STAR.workers[:2], idle=("writer",))
"""The writer is still a member, but nobody gives it work."""
THROUGH_A_RELAY = replace(STAR, workers=(*STAR.workers[:2], replace(STAR.workers[2], relay="relay")))
"""The writer is reached through a relay that only passes the work on."""
WRITER_FAILS = replace(STAR, workers=(*STAR.workers[:2], replace(STAR.workers[2], extra_failures=2)))
"""The writer fails two more requests."""


def row(team: Team, runs: int = 1, *, assessment: str = "a") -> ResultRow:
    """``runs`` runs of ``team`` (each a little slower than the last: timing noise) as one result row."""
    scenarios: list[ScenarioReport] = []
    for k in range(runs):
        run = replace(team, workers=tuple(replace(w, duration=w.duration + 0.4 * k) for w in team.workers))
        evaluation = evaluate_spans(team_spans(run), run)
        repeat = k + 1 if runs > 1 else None
        scenarios.append(
            ScenarioReport(
                id="s1" if repeat is None else f"s1#{repeat}",
                mode="live",
                status="evaluated",
                trace_id=TRACE,
                outcome=outcome(run),
                evaluation=evaluation,
                completeness={"complete": True},
                repeat=repeat,
            )
        )
    report = AssessmentReport(
        assessment_id=assessment, participants={"coordinator": "http://127.0.0.1:1/"}, scenarios=scenarios,
        time_used=1.0,
    )  # fmt: skip
    return result_row(report)


def document(team: Team, runs: int = 1) -> str:
    """``results.json``'s text for ``runs`` runs of ``team``."""
    return ResultsDocument.of([row(team, runs)]).text()
