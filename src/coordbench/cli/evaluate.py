"""``coordbench evaluate``: re-evaluate stored spans (a trace file, or a trace held by a receiver)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console
from rich.table import Table

from coordbench import jsontext
from coordbench.cli.output import check_writable, write_text
from coordbench.errors import CoordbenchError

if TYPE_CHECKING:
    import httpx

    from coordbench.evals import EvalConfig, EvalScenario
    from coordbench.spans import SpanData

__all__ = ["evaluate", "fetch_trace"]


def _detail(response: httpx.Response) -> str:
    """What an error response says: our API's ``detail``, else its text (cut), else the reason phrase."""
    if not response.content:
        return response.reason_phrase
    try:
        document = jsontext.loads(response.content)
    except ValueError:
        document = None
    if isinstance(document, dict) and "detail" in document:
        return str(cast("dict[str, Any]", document)["detail"])
    text = response.text.strip()
    return text if len(text) <= 200 else text[:197] + "..."


def fetch_trace(receiver: str, trace_id: str, token: str | None = None) -> list[SpanData]:
    """The spans of a trace held by a receiver (``GET /v1/traces/{id}``).

    Raises:
        TraceFileError: If the receiver cannot be reached or does not answer a trace.
    """
    import httpx

    from coordbench.spans import span_from_dict
    from coordbench.tracefile import TraceFileError

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{receiver.rstrip('/')}/v1/traces/{trace_id}"
    try:
        response = httpx.get(url, headers=headers, timeout=60)
    except httpx.HTTPError as exc:
        raise TraceFileError(f"cannot reach {url}: {exc}") from exc
    if response.status_code != 200:
        raise TraceFileError(f"{url} answered {response.status_code}: {_detail(response)}")
    try:
        document = jsontext.loads(response.content)
        return [span_from_dict(s) for s in document["spans"]]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TraceFileError(f"{url} did not answer a trace (GET /v1/traces/{{id}} output): {exc!r}") from exc


def _config(path: Path | None) -> tuple[EvalConfig, list[EvalScenario]]:
    from coordbench.evals import EvalConfig
    from coordbench.green.request import validate_config
    from coordbench.tracefile import TraceFileError

    if path is None:
        return EvalConfig(), []
    try:
        document = jsontext.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TraceFileError(f"cannot read the config {path}: {exc}") from exc
    config = validate_config(document)
    return config.eval_config(), [s.eval_scenario() for s in config.all_scenarios()]


def evaluate(
    trace_file: Annotated[
        Path | None, typer.Argument(help="Spans: OTLP protobuf or JSON export, or GET /v1/traces/{id} output.")
    ] = None,
    trace_id: Annotated[str | None, typer.Option(help="Evaluate this trace from a running receiver instead.")] = None,
    receiver: Annotated[
        str, typer.Option(help="The receiver (or green) holding --trace-id.")
    ] = "http://127.0.0.1:4318",
    token: Annotated[str | None, typer.Option(help="Bearer token for the receiver.")] = None,
    config: Annotated[
        Path | None, typer.Option(help="The assessment's config JSON (evaluators, weights, scenarios' references).")
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="An agent (by name) expected to take part (repeat) [default: the members the assessor recorded].",
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the evaluations here (default: standard output).")] = None,
) -> None:
    """Evaluate stored spans, per scenario when they come from an assessment; prints canonical JSON.

    The same spans and configuration give byte-identical output. Exits 2 on unusable input.
    """
    from coordbench.evals.replay import evaluate_spans
    from coordbench.graph.metrics import canonical_json
    from coordbench.tracefile import TraceFileError, load_spans

    console = Console(stderr=True)
    if (trace_file is None) == (trace_id is None):
        console.print("[red]error:[/red] give a TRACE_FILE or --trace-id (one of them)")
        raise typer.Exit(2)
    if output is not None:
        check_writable(output, "--output")
    for name in agent or []:
        if "=" in name or "://" in name or not name.strip():
            console.print(
                f"[red]error:[/red] --agent takes an agent's name (as its card and spans say), got {name!r}; "
                "ROLE=URL is how assess names participants"
            )
            raise typer.Exit(2)
    try:
        eval_config, scenarios = _config(config)
        spans = load_spans(trace_file) if trace_file is not None else fetch_trace(receiver, trace_id or "", token)
        if not spans:
            raise TraceFileError("no spans to evaluate")
        evaluations = asyncio.run(
            evaluate_spans(spans, config=eval_config, scenarios=scenarios, participants=agent or [])
        )
    except CoordbenchError as exc:  # an unreadable file or receiver, a bad config: said in one line
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    text = canonical_json([e.model_dump(mode="json") for e in evaluations])
    if output is None:
        print(text)
    else:
        try:
            write_text(output, text + "\n")
        except OSError as exc:
            print(text)  # the evaluation is not lost
            console.print(f"[red]error:[/red] cannot write {output}: {exc.strerror or exc}; printed instead")
            raise typer.Exit(1) from exc
    table = Table(title=f"{len(spans)} spans evaluated")
    table.add_column("scenario")
    table.add_column("score", justify="right")
    table.add_column("classification")
    table.add_column("judge")
    table.add_column("failed evaluators")
    for evaluation in evaluations:
        graph = evaluation.results.get("graph", {})
        judge = evaluation.results.get("llm_judge", {})
        table.add_row(
            evaluation.scenario,
            f"{evaluation.score.overall:.3f}",
            str(graph.get("classification", "-")),
            str(judge.get("judge", "-")),
            ", ".join(f.evaluator for f in evaluation.failures) or "-",
        )
    console.print(table)
