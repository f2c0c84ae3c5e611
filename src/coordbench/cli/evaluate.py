"""``coordbench evaluate``: re-evaluate stored spans (a trace file, or a trace held by a receiver)."""

from __future__ import annotations

from concurrent.futures import as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

from coordbench import jsontext
from coordbench.cli.output import check_writable, fail, write_text
from coordbench.cli.serve import ReceiverOption, TraceStoreOption
from coordbench.errors import CoordbenchError
from coordbench.gcpolicy import tune_gc

if TYPE_CHECKING:
    from coordbench.evals.assessment_config import AssessmentConfig
    from coordbench.evals.evaluation import TraceEvaluation
    from coordbench.spans import SpanData

__all__ = ["evaluate", "fetch_trace"]

DEFAULT_RECEIVERS = ("http://127.0.0.1:4318",)
"""Where ``--trace-id`` looks without ``--receiver`` or ``--store`` (the receiver's default port)."""


def fetch_trace(receiver: str, trace_id: str, token: str | None = None) -> list[SpanData]:
    """The spans of a trace held by a receiver (``GET /v1/traces/{id}``).

    Raises:
        TraceFileError: If the receiver cannot be reached or does not answer a trace.
    """
    from coordbench.traces.source import TraceSource

    return TraceSource((receiver,), token).fetch(trace_id)


def _config(path: Path | None) -> AssessmentConfig | None:
    """The assessment config ``--config`` gives (``None``: apply what each trace recorded).

    A ``results.json`` is accepted too: the config it recorded (its scenarios are ids there; each
    trace carries its scenarios' tasks and references).
    """
    from coordbench.evals.assessment_config import validate_config
    from coordbench.results.document import ResultsDocument
    from coordbench.traces import TraceFileError

    if path is None:
        return None
    try:
        document: object = jsontext.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TraceFileError(f"cannot read the config {path}: {exc}") from exc
    if isinstance(document, dict) and "results" in document:
        rows = ResultsDocument.read(cast("object", document), source=str(path)).results
        if not rows:
            raise TraceFileError(f"{path} is a results.json without a recorded config")
        document = {k: v for k, v in rows[0].detail.config.items() if k != "scenarios"}
    return validate_config(cast("object", document))


def _evaluate_one(
    trace_id: str, spans: list[SpanData], config: AssessmentConfig | None, agents: list[str]
) -> TraceEvaluation:
    """One trace's evaluation (run in this process, or in a worker with --jobs)."""
    from coordbench.evals.replay import replay_sync

    return replay_sync(trace_id, spans, config=config, participants=agents)


def _evaluate_all(
    traces: dict[str, list[SpanData]],
    config: AssessmentConfig | None,
    agents: list[str],
    jobs: int,
    console: Console,
) -> list[TraceEvaluation]:
    """Every trace's evaluation, in trace id order, with a progress bar; ``jobs`` processes at once."""
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing import get_context

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    done: dict[str, TraceEvaluation] = {}
    columns = (TextColumn("evaluating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=len(traces) < 2) as progress:
        task = progress.add_task("traces", total=len(traces))
        if jobs == 1:
            from coordbench.evals.replay import Replays

            with Replays() as replays:  # one event loop and thread pool for the batch
                for trace_id, spans in traces.items():
                    done[trace_id] = replays.run(trace_id, spans, config=config, participants=agents)
                    progress.advance(task)
        else:
            # spawned workers: this process runs threads (the progress bar), which a fork would copy half-way
            with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=tune_gc) as pool:
                futures: dict[Future[TraceEvaluation], str] = {
                    pool.submit(_evaluate_one, trace_id, spans, config, agents): trace_id
                    for trace_id, spans in traces.items()
                }
                for future in as_completed(futures):
                    done[futures[future]] = future.result()
                    progress.advance(task)
    return [done[trace_id] for trace_id in traces]


def evaluate(
    trace_file: Annotated[
        Path | None,
        typer.Argument(
            help="Spans: an OTLP export (protobuf or JSON), OTLP JSON Lines (a collector's file exporter), a Jaeger "
            "JSON export, or GET /v1/traces/{id} output. Each trace in it is evaluated on its own."
        ),
    ] = None,
    trace_id: Annotated[
        str | None, typer.Option(help="Evaluate this trace from running receivers, or a ClickHouse store, instead.")
    ] = None,
    receiver: ReceiverOption = None,
    store: TraceStoreOption = None,
    token: Annotated[str | None, typer.Option(help="Bearer token for the receivers.")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="The assessment's config JSON, or its results.json [default: the config the assessor recorded "
            "in the trace, else the defaults]."
        ),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="An agent (by name) expected to take part (repeat) [default: the members the assessor recorded].",
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the evaluations here (default: standard output).")] = None,
    jobs: Annotated[int, typer.Option(help="Traces evaluated at once, each in its own process.")] = 1,
) -> None:
    """Evaluate stored spans: each trace on its own (per scenario for an assessment's trace).

    Prints one line of canonical JSON per trace, in trace id order: {"trace_id": ..., "evaluations":
    [...]}. A trace gives the same line whether it is evaluated alone or among others, with any
    --jobs. Exits 2 on unusable input.
    """
    from coordbench.traces.file import TraceFileError, load_traces
    from coordbench.traces.source import TraceSource

    console = Console(stderr=True)
    if (trace_file is None) == (trace_id is None):
        fail("give a TRACE_FILE or --trace-id (one of them)", console=console)
    if store is not None and receiver:
        fail("give --receiver or --store, not both", console=console)
    if not 1 <= jobs <= 256:
        fail(f"--jobs must be 1 to 256, got {jobs}", console=console)
    if output is not None:
        check_writable(output, "--output")
    for name in agent or []:
        if "=" in name or "://" in name or not name.strip():
            fail(
                f"--agent takes an agent's name (as its card and spans say), got {name!r}; "
                "ROLE=URL is how assess names participants",
                console=console,
            )
    tune_gc()  # the spans read and the evaluations' objects: collections over them cost about a tenth
    try:
        chosen = _config(config)
        if trace_file is not None:
            traces = load_traces(trace_file)
        else:
            source = TraceSource(tuple(receiver or DEFAULT_RECEIVERS), token, store)
            spans = source.fetch(trace_id or "")
            traces = {spans[0].trace_id: spans} if spans else {}
        if not traces:
            raise TraceFileError("no spans to evaluate")
        evaluations = _evaluate_all(traces, chosen, list(agent or []), jobs, console)
    except CoordbenchError as exc:  # an unreadable file or receiver, a bad config: said in one line
        fail(str(exc), console=console)
    text = "".join(evaluation.to_json() + "\n" for evaluation in evaluations)
    if output is None:
        print(text, end="")
    else:
        try:
            write_text(output, text)
        except OSError as exc:
            print(text, end="")  # the evaluation is not lost
            fail(f"cannot write {output}: {exc.strerror or exc}; printed instead", 1, console=console)
    _summary(console, traces, evaluations)


def _summary(console: Console, traces: dict[str, list[SpanData]], evaluations: list[TraceEvaluation]) -> None:
    spans = sum(len(s) for s in traces.values())
    table = Table(title=f"{len(traces)} trace{'s' if len(traces) != 1 else ''}, {spans} spans evaluated")
    for column in ("trace", "scenario", "score", "answer", "coordination", "classification", "judge",
                   "failed evaluators"):  # fmt: skip
        table.add_column(column, justify="right" if column in ("score", "answer", "coordination") else "left")
    shown = 0
    for trace in evaluations:
        for evaluation in trace.evaluations:
            if shown == _SHOWN:
                break
            shown += 1
            results = evaluation.results
            coordination = results.coordination
            table.add_row(
                trace.trace_id[:12],
                evaluation.scenario,
                f"{evaluation.score.overall:.3f}",
                _quality(coordination.answer_quality if coordination is not None else None),
                _quality(coordination.coordination_quality if coordination is not None else None),
                results.graph.classification if results.graph is not None else "-",
                results.llm_judge.judge if results.llm_judge is not None else "-",
                ", ".join(f.evaluator for f in evaluation.failures) or "-",
            )
    console.print(table)
    if shown == _SHOWN:
        console.print(f"(the first {_SHOWN} scenarios shown; every one is in the output)")


_SHOWN = 40


def _quality(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
