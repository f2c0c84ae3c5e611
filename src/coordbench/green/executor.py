"""The assessor's A2A executor: parse the request, report progress, run, answer with the result.

A bad request is answered with a ``rejected`` task saying exactly what is wrong. While the
assessment runs, ``working`` status updates come at every step and at least every
``heartbeat`` seconds. The result is one artifact, ``Result``, with a text summary and the
results row as a DataPart; the task is ``completed`` even when some scenarios failed, and
``failed`` only when nothing could be assessed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator
from pathlib import Path

from a2a.helpers import new_data_part, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part, TaskState
from a2a.utils.errors import InvalidRequestError, UnsupportedOperationError

from coordbench.errors import ConfigurationError
from coordbench.evals import JudgeConfig
from coordbench.green.assessment import Assessment
from coordbench.green.reports import ReportShelf
from coordbench.green.request import RequestError, parse_request
from coordbench.redaction import redact_url
from coordbench.results import AssessmentReport, agentbeats_results, result_row, summary_text
from coordbench.spans import SpanData
from coordbench.store import SpanStore

__all__ = ["GreenExecutor"]

logger = logging.getLogger(__name__)

_TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


def _file_safe(name: str) -> str:
    """``name`` with anything but letters, digits, ``.``, ``_`` and ``-`` replaced (a role may be any text)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)[:64]
    return safe.strip(".") or "team"


class GreenExecutor(AgentExecutor):
    """Runs one assessment per request, with fresh state each time.

    Args:
        store: The trace store the participants export to.
        assessor: The assessor's agent name.
        output_dir: Where ``results.json`` is written (``None``: not written).
        heartbeat: Seconds between ``working`` updates while nothing else is reported.
        judge: The LLM judge's endpoint (default: from the environment at each assessment).
    """

    def __init__(
        self,
        *,
        store: SpanStore,
        assessor: str,
        output_dir: Path | None = None,
        heartbeat: float = 20.0,
        judge: JudgeConfig | None = None,
        reports: ReportShelf | None = None,
    ) -> None:
        self.store = store
        self.assessor = assessor
        self.output_dir = output_dir
        self.heartbeat = heartbeat
        self.judge = judge
        self.reports = reports if reports is not None else ReportShelf(output_dir)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Assess: validate, run the scenarios, answer with the result artifact."""
        message = context.message
        if message is None:
            raise InvalidRequestError("no message to assess")
        task = context.current_task
        if task is not None and task.status.state in _TERMINAL:
            raise InvalidRequestError(f"task {task.id} is already finished; start a new assessment")
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        try:
            request = parse_request(message)
            assessment = Assessment(
                request,
                store=self.store,
                assessment_id=task.context_id,
                assessor=self.assessor,
                judge=self.judge,
                progress=lambda line: self._say(updater, line),
            )
        except (RequestError, ConfigurationError) as exc:
            logger.info("assessment request rejected: %s", exc)
            await updater.reject(updater.new_agent_message([Part(text=str(exc))]))
            return
        roles = ", ".join(f"{role}={redact_url(request.url_of(role))}" for role in request.participants)
        scenarios = request.shard()
        await updater.start_work(
            updater.new_agent_message(
                [Part(text=f"Assessment {task.context_id} started: {len(scenarios)} scenario(s); participants {roles}")]
            )
        )
        try:
            async with self._heartbeat(updater):
                report = await assessment.run()
        except Exception as exc:
            logger.exception("assessment %s failed", task.context_id)
            await updater.failed(
                updater.new_agent_message([Part(text=f"assessment error: {type(exc).__name__}: {exc}")])
            )
            return
        row = result_row(report)
        text = summary_text(report, row)
        try:
            written = await self._publish(report, request.config.team or request.entry_role)
            if written:
                text += f"\nResults written to {written[0]}"
            text += f"\nReport: /reports/{report.assessment_id}"
        except OSError as exc:
            logger.error("cannot write the results of assessment %s: %s", report.assessment_id, exc)
            text += f"\nthe results could not be written: {exc}"
        except Exception:  # the report is a view of the results: it never costs the assessment
            logger.exception("the report of assessment %s could not be built", report.assessment_id)
        if not report.assessed:
            await updater.failed(updater.new_agent_message([Part(text="Nothing could be assessed.\n" + text)]))
            return
        await updater.add_artifact([Part(text=text), new_data_part(row.wire())], name="Result")
        await updater.complete()

    async def _publish(self, report: AssessmentReport, team: str) -> list[Path]:
        """Write the results and the report (each under the team's name, and as the newest pair); the files."""
        trace_ids = sorted({s.trace_id for s in report.scenarios if s.mode == "live" and s.trace_id})
        document = agentbeats_results(report)

        # the traces' spans are copied here, on the store's loop, and decoded and drawn on a worker thread
        builders = [b for b in (self.store.snapshot_builder(t) for t in trace_ids) if b is not None]

        def publish() -> list[Path]:
            spans: list[SpanData] = [span for build in builders for span in build().spans]
            return self.reports.add(report.assessment_id, document, spans, team=_file_safe(team))

        return await asyncio.to_thread(publish)

    async def _say(self, updater: TaskUpdater, line: str) -> None:
        await updater.update_status(TaskState.TASK_STATE_WORKING, updater.new_agent_message([Part(text=line)]))

    @contextlib.asynccontextmanager
    async def _heartbeat(self, updater: TaskUpdater) -> AsyncGenerator[None]:
        started = time.monotonic()

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.heartbeat)
                await updater.update_status(
                    TaskState.TASK_STATE_WORKING,
                    updater.new_agent_message([Part(text=f"still assessing ({time.monotonic() - started:.0f} s)")]),
                )

        task = asyncio.create_task(beat())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Assessments cannot be cancelled midway (their traces would be partial)."""
        raise UnsupportedOperationError("cancelling an assessment is not supported")
