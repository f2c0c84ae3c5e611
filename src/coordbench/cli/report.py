"""``coordbench report``: rebuild an assessment's HTML report from stored data."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from coordbench.cli.output import check_writable, fail, write_text
from coordbench.cli.serve import ReceiverOption, TraceStoreOption

if TYPE_CHECKING:
    from coordbench.spans import SpanData

__all__ = ["report"]


DEFAULT_RECEIVER = "http://127.0.0.1:4318"
"""Where ``--trace-id`` looks without ``--receiver`` (the receiver's default port, as ``evaluate``)."""


def report(
    results: Annotated[Path | None, typer.Argument(help="A results.json written by the green or assess.")] = None,
    trace_id: Annotated[str | None, typer.Option(help="Re-evaluate this stored trace instead.")] = None,
    receiver: ReceiverOption = None,
    store: TraceStoreOption = None,
    token: Annotated[str | None, typer.Option(help="Bearer token for the receivers.")] = None,
    output: Annotated[Path, typer.Option(help="Where to write the HTML.")] = Path("report.html"),
) -> None:
    """Rebuild the HTML report: from RESULTS_JSON, or --trace-id from receivers or a store.

    The span waterfalls are drawn from the traces held by --receiver (or --store): with RESULTS_JSON
    only when one of them is given.
    """
    from coordbench.errors import ConfigurationError
    from coordbench.evals.replay import scenario_spans
    from coordbench.report import render_report
    from coordbench.results import trace_results
    from coordbench.results.document import ResultsDocument, ResultsDocumentError
    from coordbench.traces.file import TraceFileError
    from coordbench.traces.source import TraceSource

    console = Console(stderr=True)
    if (results is None) == (trace_id is None):
        fail("give RESULTS_JSON or --trace-id (one of them)", console=console)
    if store is not None and receiver:
        fail("give --receiver or --store, not both", console=console)
    if trace_id is not None and not receiver and store is None:
        receiver = [DEFAULT_RECEIVER]
    source = TraceSource(tuple(receiver or ()), token, store) if receiver or store is not None else None
    check_writable(output, "--output")
    spans: dict[str, list[SpanData]] = {}
    try:
        if results is not None:
            document = ResultsDocument.load(results)
            if source is not None:
                ids = {e.trace_id for row in document.results for e in row.detail.scenarios if e.trace_id}
                for trace in sorted(ids):
                    spans.update(scenario_spans(source.fetch(trace)))
        else:
            assert trace_id is not None and source is not None  # noqa: S101 - checked above
            trace_spans = source.fetch(trace_id)
            document = asyncio.run(trace_results(trace_spans, trace_id))
            spans = scenario_spans(trace_spans) or {trace_id: trace_spans}
    except (TraceFileError, ResultsDocumentError, ConfigurationError) as exc:  # a recorded config that is not one
        fail(str(exc), console=console)
    write_text(output, render_report(document, spans or None))
    if results is not None and source is None:
        console.print("the span waterfalls are left out: give --receiver URL (where the traces are stored)")
    console.print(f"report written to {output}")
