"""``coordbench compare``: what a change did to how a team coordinates, and whether CI should fail on it."""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console
from rich.markup import escape

from coordbench.cli.output import check_writable, fail, write_text
from coordbench.errors import ConfigurationError, CoordbenchError

if TYPE_CHECKING:
    from coordbench.results.document import ResultRow
    from coordbench.spans import SpanData

__all__ = ["compare"]

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_MAX_FILES = 1000
"""Files read from one folder at most."""


class CompareInputError(CoordbenchError, ValueError):
    """A side that cannot be read; the message says which and why."""

    default_message = "a side of the comparison cannot be read"


@dataclass
class _Side:
    label: str
    rows: list[ResultRow] = field(default_factory=list["ResultRow"])
    spans: dict[str, list[SpanData]] = field(default_factory=dict[str, list["SpanData"]])


def _add_file(side: _Side, path: Path) -> None:
    """A results.json document's rows, or a trace file's traces evaluated; the file read and parsed once."""
    from coordbench import jsontext
    from coordbench.results.document import ResultsDocument
    from coordbench.traces.file import by_trace, spans_in

    try:
        body = path.read_bytes()
    except OSError as exc:
        raise CompareInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    document: object = None
    if body.lstrip().startswith((b"{", b"[")):
        with contextlib.suppress(ValueError):  # not one JSON document: the trace reader says what it is
            document = jsontext.loads(body)
    if isinstance(document, dict) and "results" in document:
        side.rows.extend(ResultsDocument.read(cast("object", document), source=str(path)).results)
    else:
        _add_traces(side, by_trace(spans_in(path, body, document)))


def _add_traces(side: _Side, by_trace: dict[str, list[SpanData]]) -> None:
    """Evaluate each trace (a run of its own) and add its rows."""
    from coordbench.compare.diff import trace_row
    from coordbench.results import trace_results

    for trace_id, trace in sorted(by_trace.items()):
        document = asyncio.run(trace_results(trace, trace_id))
        side.rows.extend(trace_row(row, trace_id) for row in document.results)
        side.spans[trace_id] = trace


def _load(source: str, receiver: str | None, token: str | None) -> _Side:
    from coordbench.cli.evaluate import fetch_trace
    from coordbench.results.document import ResultsDocument, ResultsDocumentError
    from coordbench.traces.file import TraceFileError

    side = _Side(label=source)
    path = Path(source)
    try:
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".json" and p.is_file())
            if not files:
                raise CompareInputError(f"{source}: a folder with no .json file (expected results.json files)")
            if len(files) > _MAX_FILES:
                raise CompareInputError(f"{source}: {len(files)} files; at most {_MAX_FILES} are read")
            for file in files:
                side.rows.extend(ResultsDocument.load(file).results)
        elif path.is_file():
            _add_file(side, path)
        elif _TRACE_ID.match(source) and receiver is not None:
            _add_traces(side, {source: fetch_trace(receiver, source, token)})
        else:
            hint = "" if receiver is not None or not _TRACE_ID.match(source) else " (a trace id needs --receiver)"
            raise CompareInputError(f"{source}: not a file, a folder of results.json files, or a trace id{hint}")
    except (ResultsDocumentError, TraceFileError, ConfigurationError) as exc:  # a recorded config that is not one
        raise CompareInputError(str(exc)) from exc
    if not side.rows:
        raise CompareInputError(f"{source}: no assessment or trace in it")
    return side


def _fetch_spans(sides: list[_Side], receiver: str, token: str | None, console: Console) -> None:
    """Each scenario's first traced run of results.json sides, for the waterfalls (a trace not found is left out)."""
    from coordbench.cli.evaluate import fetch_trace
    from coordbench.compare.diff import scenario_runs
    from coordbench.traces.file import TraceFileError

    for side in sides:
        for runs in scenario_runs(side.rows).values():
            trace_id = runs[0].trace_id
            if trace_id and trace_id not in side.spans:
                try:
                    side.spans[trace_id] = fetch_trace(receiver, trace_id, token)
                except TraceFileError as exc:
                    console.print(f"[yellow]the waterfall of trace {trace_id} is left out:[/yellow] {escape(str(exc))}")


def compare(
    base: Annotated[str, typer.Argument(help="The baseline: a results.json, a folder of them, a trace file or id.")],
    head: Annotated[str, typer.Argument(help="The change, in the same forms.")],
    receiver: Annotated[
        str | None, typer.Option(help="A receiver (or green) holding the traces: trace ids, and waterfalls.")
    ] = None,
    token: Annotated[str | None, typer.Option(help="Bearer token for the receiver.")] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when one of these regressions is found, e.g. 'score<-0.05,parallelism<-0.1,new:idle_members' "
            "(or 'regression': any).",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON (for machines).")] = False,
    markdown: Annotated[Path | None, typer.Option(help="Also write it as Markdown (a CI job summary).")] = None,
    html: Annotated[Path | None, typer.Option(help="Also write the HTML page (graphs side by side).")] = None,
) -> None:
    """Compare two runs of a team: score, parts, graph, critical path, latency and evidence, with their noise.

    BASE and HEAD are each a results.json, a folder of results.json files (a set of runs), a trace
    file, or (with --receiver) a trace id. Exits 0, or 1 when a --fail-on rule is broken, or 2 on
    bad input.
    """
    from coordbench.compare import RuleError, broken, compare_rows, parse_rules
    from coordbench.compare.page import render_diff
    from coordbench.compare.render import markdown as as_markdown
    from coordbench.compare.render import tables

    console = Console(stderr=True)
    try:
        rules = parse_rules(fail_on) if fail_on is not None else []
    except RuleError as exc:
        raise typer.BadParameter(exc.message.removeprefix("--fail-on: "), param_hint="--fail-on") from exc
    for path, option in ((markdown, "--markdown"), (html, "--html")):
        if path is not None:
            check_writable(path, option)
    try:
        with console.status("reading and evaluating the two sides..."):
            sides = [_load(base, receiver, token), _load(head, receiver, token)]
            if html is not None and receiver is not None:
                _fetch_spans(sides, receiver, token, console)
    except CompareInputError as exc:
        fail(str(exc), console=console)
    comparison = compare_rows(sides[0].rows, sides[1].rows, base_label=base, head_label=head)
    failures = broken(rules, comparison)
    if json_out:
        print(comparison.to_json())
    else:
        Console().print(tables(comparison))
    if markdown is not None:
        write_text(markdown, as_markdown(comparison, failures))
    if html is not None:
        page = render_diff(comparison, sides[0].rows, sides[1].rows, base_spans=sides[0].spans,
                           head_spans=sides[1].spans, failures=failures)  # fmt: skip
        write_text(html, page)
        if not (sides[0].spans or sides[1].spans):
            console.print("the span waterfalls are left out: give --receiver URL (where the traces are stored)")
    if failures:
        for line in failures:
            console.print(f"[red]regression:[/red] {escape(line)}", soft_wrap=True)
        raise typer.Exit(1)
