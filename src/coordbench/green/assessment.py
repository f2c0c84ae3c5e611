"""Running one assessment: drive the scenarios, collect their traces, evaluate, report.

Live mode, per scenario: a HOST span ``scenario <id>`` under the assessment's root HOST span
(a trace of its own per assessment), the task sent to the entry participant through the
:class:`~coordbench.a2a.Messenger` (so the call carries the trace context), then
``wait_complete`` on the scenario's subtree until the participants' spans have arrived, then
the evaluator pipeline. Ground-truth mode: the scenario's interaction pattern becomes spans
and goes through the same pipeline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict
from functools import partial
from typing import Any, Literal

from coordbench import semconv
from coordbench.a2a import AgentCallError, Messenger
from coordbench.evals import (
    EvalContext,
    EvalPipeline,
    EvalScenario,
    GraphEvaluator,
    JudgeConfig,
    LatencyEvaluator,
    TeamOutcome,
    run_evaluator,
)
from coordbench.evals.assessment_config import ScenarioConfig
from coordbench.evals.groundtruth import pattern_spans
from coordbench.graph.metrics import GraphMetrics
from coordbench.green.request import AssessmentRequest
from coordbench.instrument import host_step
from coordbench.redaction import redact_url
from coordbench.results import AssessmentReport, ScenarioReport
from coordbench.spans import SpanData
from coordbench.store import SpanStore

__all__ = ["OUTPUT_LIMIT", "REFERENCES_LIMIT", "Assessment", "Progress", "outcome_attributes", "scenario_attributes"]

logger = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]
OUTPUT_LIMIT = 100_000
"""Characters of the team's answer recorded on the scenario's span (a task's answer is at most this long)."""
REFERENCES_LIMIT = 1_000_000
"""Characters of reference texts recorded on a scenario's span at most (the first references that fit)."""


def scenario_attributes(scenario: ScenarioConfig, members: list[str], unreachable: dict[str, str]) -> dict[str, Any]:
    """What a scenario's HOST span records, so a stored trace is re-evaluated as the assessor evaluated it."""
    references: list[str] = []
    room = REFERENCES_LIMIT
    for text in scenario.references:
        if len(text) > room:
            break
        references.append(text)
        room -= len(text)
    attributes: dict[str, Any] = {
        semconv.COORDBENCH_SCENARIO_ID: scenario.id,
        semconv.COORDBENCH_SCENARIO_PARTICIPANTS: members,
        semconv.COORDBENCH_SCENARIO_TASK: scenario.task[:OUTPUT_LIMIT],
        semconv.COORDBENCH_SCENARIO_REFERENCES: references,
    }
    if scenario.expected:
        attributes[semconv.COORDBENCH_SCENARIO_EXPECTED] = scenario.expected[:OUTPUT_LIMIT]
    if unreachable:
        attributes[semconv.COORDBENCH_SCENARIO_UNREACHABLE] = [
            f"{name}: {why}" for name, why in sorted(unreachable.items())
        ]
    return attributes


def outcome_attributes(outcome: TeamOutcome) -> dict[str, Any]:
    """The team's outcome as attributes of the scenario's HOST span: a stored trace carries its own verdict's inputs."""
    attributes: dict[str, Any] = {
        semconv.COORDBENCH_OUTCOME_STATE: outcome.state,
        semconv.COORDBENCH_OUTCOME_OUTPUT: outcome.output[:OUTPUT_LIMIT],
        semconv.COORDBENCH_OUTCOME_DURATION_MS: outcome.duration_ms,
    }
    if outcome.error is not None:
        attributes[semconv.COORDBENCH_OUTCOME_ERROR] = outcome.error
    return attributes


async def _no_progress(_message: str) -> None:
    return None


class Assessment:
    """One assessment request, run once.

    Args:
        request: The validated request.
        store: Where the participants' (and the assessor's) spans arrive.
        assessment_id: Id of the assessment (the A2A context id).
        assessor: The assessor's agent name (its spans' host).
        judge: The LLM judge's endpoint (default: from the environment).
        progress: Called with a line of text at each step (status updates).

    Raises:
        ConfigurationError: If the request names an unknown evaluator or metric.
    """

    def __init__(
        self,
        request: AssessmentRequest,
        *,
        store: SpanStore,
        assessment_id: str,
        assessor: str,
        judge: JudgeConfig | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.request = request
        self.store = store
        self.assessment_id = assessment_id
        self.assessor = assessor
        self.eval_config = request.config.eval_config(judge)
        self.pipeline = EvalPipeline(self.eval_config)
        self.progress = progress or _no_progress
        self.unreachable: dict[str, str] = {}
        """Members whose card could not be read when the assessment started: down, by name, with why."""

    async def run(self) -> AssessmentReport:
        """Run every scenario of this shard; a scenario's failure is reported, never raised."""
        started = time.monotonic()
        config = self.request.config
        scenarios = self.request.shard()
        reports: list[ScenarioReport] = []
        live_spans: list[SpanData] = []
        async with Messenger(timeout=config.timeout, remember_card_errors=math.inf) as messenger:
            attributes = {
                semconv.COORDBENCH_ASSESSMENT_ID: self.assessment_id,
                semconv.COORDBENCH_ASSESSMENT_CONFIG: json.dumps(config.recorded(), sort_keys=True),
            }
            async with host_step(f"assessment {self.assessment_id}", attributes=attributes, new_trace=True) as root:
                names = await self._participant_names(messenger)  # card fetches belong to the assessment
                context = root.span.get_span_context()
                trace_id, root_id = format(context.trace_id, "032x"), format(context.span_id, "016x")
                runs = config.runs(scenarios)
                for index, (scenario, repeat) in enumerate(runs, start=1):
                    await self.progress(f"scenario {index}/{len(runs)}: {scenario.id} ({_mode(scenario)})")
                    scenario_started = time.monotonic()
                    try:
                        if scenario.live:
                            report, spans = await self._live(scenario, messenger, names, trace_id, root_id)
                            live_spans.extend(spans)
                        else:
                            report = await self._ground_truth(scenario)
                    except Exception as exc:
                        logger.exception("scenario %r could not be evaluated", scenario.id)
                        report = ScenarioReport(
                            id=scenario.id,
                            mode="live" if scenario.live else "ground_truth",
                            status="failed",
                            error=f"{type(exc).__name__}: {exc}",
                            expected_label=scenario.label,
                        )
                    report = report.model_copy(
                        update={"duration_s": time.monotonic() - scenario_started, "repeat": repeat}
                    )
                    reports.append(report)
                    score = report.evaluation.score.overall if report.evaluation else 0.0
                    await self.progress(f"scenario {scenario.id}: {report.status}, score {score:.2f}")
        graph_metrics, latency_metrics = await self._overall(live_spans, names)
        self._say_judge_once(reports)
        return AssessmentReport(
            assessment_id=self.assessment_id,
            participants={role: redact_url(self.request.url_of(role)) for role in self.request.participants},
            participant_ids=dict(config.participant_ids),
            scenarios=reports,
            graph_metrics=graph_metrics,
            latency_metrics=latency_metrics,
            time_used=time.monotonic() - started,
            config=config.recorded() | {"scenarios": [s.id for s in scenarios]},
            ignored_config_keys=config.ignored_keys,
            shard_index=config.shard_index,
            num_shards=config.num_shards,
        )

    def _say_judge_once(self, reports: list[ScenarioReport]) -> None:
        """Why the rule-based judge answered, once per assessment (the summary says it too)."""
        reasons: set[str] = set()
        for report in reports:
            judged = report.evaluation.results.llm_judge if report.evaluation is not None else None
            if judged is not None and judged.fallback_reason:
                reasons.add(judged.fallback_reason)
        for reason in sorted(reasons):
            level = logging.INFO if self.eval_config.judge.api_key is None else logging.WARNING
            logger.log(level, "assessment %s: the rule-based judge answered: %s", self.assessment_id, reason)

    async def _participant_names(self, messenger: Messenger) -> dict[str, str]:
        """Agent name (from its card) per role; the role itself when the card cannot be read (noted unreachable)."""
        names: dict[str, str] = {}
        for role in self.request.participants:
            try:
                names[role] = await messenger.agent_name(self.request.url_of(role))
            except AgentCallError as exc:
                logger.warning("participant %r: %s", role, exc)
                names[role] = role
                self.unreachable[role] = f"{exc.kind}: {exc.message}"[:300]
        return names

    async def _live(
        self,
        scenario: ScenarioConfig,
        messenger: Messenger,
        names: dict[str, str],
        trace_id: str,
        root_id: str,
    ) -> tuple[ScenarioReport, list[SpanData]]:
        config = self.request.config
        role = scenario.entry or self.request.entry_role
        url = self.request.url_of(role)
        peers = {r: self.request.url_of(r) for r in self.request.participants}
        status: Literal["evaluated", "error"] = "evaluated"
        error: str | None = None
        members = sorted(set(names.values()))
        recorded = scenario_attributes(scenario, members, self.unreachable) | {semconv.COORDBENCH_SCENARIO_ENTRY: role}
        async with host_step(f"scenario {scenario.id}", attributes=recorded) as step:
            scenario_span = format(step.span.get_span_context().span_id, "016x")
            try:
                reply = await messenger.send(
                    url,
                    scenario.task,
                    data={"scenario": scenario.id, "task": scenario.task, "role": role, "peers": peers},
                    new_conversation=True,
                )
            except AgentCallError as exc:
                outcome = TeamOutcome(state="error", error=str(exc))
                status, error = "error", str(exc)
            else:
                output = reply.text or (json.dumps(reply.data, sort_keys=True) if reply.data else "")
                outcome = TeamOutcome(state=reply.state, output=output[:OUTPUT_LIMIT], duration_ms=reply.duration_ms)
                if not reply.ok:
                    error = f"the task ended {reply.state}"
            step.span.set_attributes(outcome_attributes(outcome))
        snapshot = await self.store.wait_complete(
            trace_id,
            quiet=config.trace_quiet,
            timeout=config.trace_timeout,
            open_spans={root_id},
            within=scenario_span,
        )
        if error is None and not any(s.resource.get(semconv.SERVICE_NAME) != self.assessor for s in snapshot.spans):
            error = (
                "no span from the team arrived: are its agents exporting their spans to this assessor "
                "(OTEL_EXPORTER_OTLP_ENDPOINT set to its URL)?"
            )
        ctx = await self._context(
            snapshot.spans,
            scenario=scenario.eval_scenario(),
            hosts=[self.assessor],
            participants=members,
            completeness=snapshot.completeness,
            outcome=outcome,
            unreachable=self.unreachable,
        )
        evaluation = await self.pipeline.run(ctx)
        completeness = asdict(snapshot.completeness)
        report = ScenarioReport(
            id=scenario.id,
            mode="live",
            status=status,
            error=error,
            entry=role,
            trace_id=trace_id,
            completeness=completeness,
            outcome=outcome,
            evaluation=evaluation,
            expected_label=scenario.label,
        )
        return report, snapshot.spans

    async def _ground_truth(self, scenario: ScenarioConfig) -> ScenarioReport:
        pattern = scenario.interaction_pattern
        assert pattern is not None  # noqa: S101 - only called for pattern scenarios
        spans = pattern_spans(pattern, scenario_id=scenario.id)
        ctx = await self._context(spans, scenario=scenario.eval_scenario(), participants=pattern.agents)
        evaluation = await self.pipeline.run(ctx)
        return ScenarioReport(
            id=scenario.id,
            mode="ground_truth",
            status="evaluated",
            trace_id=spans[0].trace_id if spans else None,
            evaluation=evaluation,
            expected_label=scenario.label,
        )

    async def _context(self, spans: Iterable[SpanData], **options: Any) -> EvalContext:
        """:meth:`EvalContext.build` on a worker thread: the receivers share this event loop."""
        return await asyncio.to_thread(partial(EvalContext.build, spans, config=self.eval_config, **options))

    async def _overall(self, spans: list[SpanData], names: dict[str, str]) -> tuple[dict[str, object] | None, ...]:
        """Graph and latency over all live scenarios together (the team's whole interaction)."""
        if not spans:
            return None, None
        ctx = await self._context(
            spans, scenario=EvalScenario(id="all-live-scenarios"), hosts=[self.assessor], participants=names.values()
        )
        graph = await run_evaluator(GraphEvaluator(), ctx)
        latency = await run_evaluator(LatencyEvaluator(), ctx)
        assert isinstance(graph, GraphMetrics)  # noqa: S101 - what GraphEvaluator returns
        return graph.to_dict(), latency.model_dump(mode="json")


def _mode(scenario: ScenarioConfig) -> str:
    return "live" if scenario.live else "ground truth"
