"""``coordbench attribute``: which agent, and which step, made a run fail, with the chain of evidence."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coordbench import jsontext
from coordbench.cli.evaluate import DEFAULT_RECEIVERS
from coordbench.cli.output import check_writable, fail, write_text
from coordbench.cli.serve import ReceiverOption, TraceStoreOption
from coordbench.errors import CoordbenchError

if TYPE_CHECKING:
    from coordbench.evals.attribution import Attribution
    from coordbench.results.document import ResultsDocument
    from coordbench.spans import SpanData

__all__ = ["attribute"]

EXPECTED_LIMIT = 100_000
"""Most characters ``--expected`` takes (a scenario's expected answer holds as many)."""


def _record(trace_id: str, scenario: str, found: Attribution) -> dict[str, Any]:
    """One output object: the trace and scenario, then the attribution's fields."""
    return {"trace_id": trace_id, "scenario": scenario, **found.model_dump(mode="json")}


def _of_traces(traces: dict[str, list[SpanData]], expected: str | None) -> list[dict[str, Any]]:
    """Every scenario of every trace attributed, as if it failed (the run need not carry a verdict)."""
    from coordbench.evals.attribution import attribute as attribute_scenario
    from coordbench.evals.attribution.ranking import rank_with_model
    from coordbench.evals.config import EvalConfig, JudgeConfig
    from coordbench.evals.replay import replay_config, scenario_contexts

    judge = JudgeConfig.from_env()  # with AGENTBEATS_LLM_* set, a model ranks what the rules propose
    out: list[dict[str, Any]] = []
    for trace_id, spans in traces.items():
        assessment = replay_config(spans)
        known = [c.eval_scenario() for c in assessment.scenarios or []]
        contexts = scenario_contexts(spans, config=EvalConfig(), scenarios=known, expected=expected)
        for ctx in contexts:
            found = attribute_scenario(ctx)
            if judge.api_key is not None:
                answer = ctx.outcome.output if ctx.outcome is not None else None
                found = asyncio.run(rank_with_model(found, judge, task=ctx.scenario.task, answer=answer))
            out.append(_record(trace_id, ctx.scenario.id, found))
    return out


def _of_results(document: ResultsDocument, source: str) -> list[dict[str, Any]]:
    """The attributions a ``results.json`` recorded for its failed scenarios."""
    out: list[dict[str, Any]] = []
    for row in document.results:
        for entry in row.detail.scenarios:
            if entry.attribution is not None:
                out.append(_record(entry.trace_id or "", entry.id, entry.attribution))
    if not out:
        raise _NothingRecorded(f"{source} records no attribution: no scenario in it failed, or it was written before "
                               "coordbench attributed failures; attribute its traces with --trace-id")  # fmt: skip
    return out


class _NothingRecorded(CoordbenchError, ValueError):
    """A results.json with no attribution in it."""


def _load(path: Path) -> tuple[dict[str, list[SpanData]] | None, ResultsDocument | None]:
    """A trace file's traces, or a results.json document (told apart by its ``results`` key)."""
    from coordbench.results.document import ResultsDocument
    from coordbench.traces.file import load_traces

    if path.suffix == ".json" and path.is_file() and path.stat().st_size < 256 * 1024 * 1024:
        try:
            head = path.read_bytes()[:4096].lstrip()
        except OSError:
            head = b""
        if head.startswith(b"{") and b'"results"' in head:
            try:
                data: object = jsontext.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = None
            if isinstance(data, dict) and "results" in data:
                return None, ResultsDocument.read(cast("object", data), source=str(path))
    return load_traces(path), None


def _show(console: Console, records: list[dict[str, Any]]) -> None:
    """Each attribution in words: the finding, the chain, the other candidates."""
    from coordbench.evals.attribution import Attribution

    for record in records:
        found = Attribution.model_validate({k: v for k, v in record.items() if k not in ("trace_id", "scenario")})
        title = f"trace {record['trace_id']}" + (f", scenario {record['scenario']}" if record["scenario"] !=
                                                 record["trace_id"] else "")  # fmt: skip
        console.rule(escape(title))
        if found.agent is None:
            console.print(f"no agent named: {escape(found.reason)}", soft_wrap=True)
            continue
        console.print(
            f"[bold]{escape(found.agent)}[/bold] at span {found.span_id or '-'} "
            f"(rule {found.rule}, confidence {found.confidence:.2f}, ranked by {escape(found.ranker)}"
            f"{'' if found.failure_visible else ', no failure visible'})",
            soft_wrap=True,
        )
        console.print(escape(found.reason), soft_wrap=True)
        if found.evidence:
            console.print("chain of evidence:")
            for k, link in enumerate(found.evidence, 1):
                console.print(
                    f"  {k}. {escape(f'[{link.agent}]')} {link.span_id or '-'}: {escape(link.what)}", soft_wrap=True
                )
        if len(found.candidates) > 1:
            table = Table("candidate", "score", "rules", "first span", title=None, box=None)
            for candidate in found.candidates:
                table.add_row(escape(candidate.agent), f"{candidate.score:.3f}", ", ".join(candidate.rules),
                              candidate.span_id or "-")  # fmt: skip
            console.print(table)


def _score(traces: dict[str, list[SpanData]], labels_path: Path, console: Console) -> str:
    """The accuracy tables (with and without the expected answers) of a labelled set, as Markdown."""
    from pydantic import ValidationError

    from coordbench.errors import describe_validation_error
    from coordbench.evals.attribution.accuracy import LabelSet, accuracy, markdown
    from coordbench.traces import TraceFileError

    try:
        labels = LabelSet.model_validate(jsontext.loads(labels_path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise TraceFileError(f"cannot read --labels {labels_path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise TraceFileError(f"--labels {labels_path}: {describe_validation_error(exc)}") from exc
        raise TraceFileError(f"--labels {labels_path} is not JSON: {exc}") from exc
    missing = [label.trace_id for label in labels.runs if label.trace_id not in traces]
    if len(missing) == len(labels.runs):
        raise TraceFileError(f"none of the {len(labels.runs)} labelled traces is in the trace file")
    if missing:
        console.print(f"{len(missing)} labelled trace(s) are not in the file; scored without them")
    with_expected = markdown(accuracy(traces, labels))
    without = markdown(accuracy(traces, labels, with_expected=False))
    runs = len(labels.runs) - len(missing)
    return (f"{runs} labelled runs, with their expected answers:\n\n{with_expected}\n"
            f"Without the expected answers (the run only assumed to fail):\n\n{without}")  # fmt: skip


def attribute(
    source: Annotated[
        Path | None,
        typer.Argument(
            help="Spans (an OTLP export, OTLP JSON Lines, a Jaeger JSON export, GET /v1/traces/{id} output), or a "
            "results.json (the attributions it recorded for its failed scenarios)."
        ),
    ] = None,
    trace_id: Annotated[
        str | None, typer.Option(help="Attribute this trace from running receivers, or a ClickHouse store, instead.")
    ] = None,
    receiver: ReceiverOption = None,
    store: TraceStoreOption = None,
    token: Annotated[str | None, typer.Option(help="Bearer token for the receivers.")] = None,
    expected: Annotated[
        str | None,
        typer.Option(
            help="The correct answer, when known: what the team's answer carries beyond it, and what it "
            "lacks, is followed back to the agents [default: the scenario's, when it recorded one]."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per scenario, one a line.")] = False,
    labels: Annotated[
        Path | None,
        typer.Option(
            help='A labelled set\'s truth ({"runs": [{"trace_id", "agent", "span_id", '
            '"expected"}]}): print the accuracy against it, beside trivial baselines, instead.'
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the output here (default: standard output).")] = None,
) -> None:
    """Name the agent and the step that made a run fail, with the chain of evidence and the other candidates.

    The run is assumed to have failed (that is why it is asked); --expected gives the correct answer
    when known. Evidence comes first: failed calls and where their failure went, what the team's
    answer carried and where it came from, agents that gave up, guessed or repeated themselves,
    relays that changed what they passed on, members down or silent. Exits 2 on unusable input.
    """
    from coordbench.traces.file import TraceFileError
    from coordbench.traces.source import TraceSource

    console = Console(stderr=True)
    if (source is None) == (trace_id is None):
        fail("give a SOURCE or --trace-id (one of them)", console=console)
    if store is not None and receiver:
        fail("give --receiver or --store, not both", console=console)
    if expected is not None and not expected.strip():
        fail("--expected is empty: give the correct answer, or leave the option out", console=console)
    if expected is not None and len(expected) > EXPECTED_LIMIT:
        fail(f"--expected is {len(expected):,} characters; at most {EXPECTED_LIMIT:,}", console=console)
    if labels is not None and source is None:
        fail("--labels scores a trace file: give the labelled traces as SOURCE", console=console)
    if output is not None:
        check_writable(output, "--output")
    try:
        if source is not None:
            traces, document = _load(source)
        else:
            spans = TraceSource(tuple(receiver or DEFAULT_RECEIVERS), token, store).fetch(trace_id or "")
            traces, document = ({spans[0].trace_id: spans} if spans else {}), None
        if labels is not None:
            if traces is None:
                raise TraceFileError("--labels scores a trace file, not a results.json")
            text = _score(traces, labels, console)
        else:
            if document is not None:
                records = _of_results(document, str(source))
            else:
                if not traces:
                    raise TraceFileError("no spans to attribute")
                records = _of_traces(traces, expected)
            text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)
            if not as_json and output is None:
                _show(Console(), records)
                return
    except CoordbenchError as exc:
        fail(str(exc), console=console)
    if output is None:
        print(text, end="")
        return
    try:
        write_text(output, text)
    except OSError as exc:
        print(text, end="")  # the result is not lost
        fail(f"cannot write {output}: {exc.strerror or exc}; printed instead", 1, console=console)
