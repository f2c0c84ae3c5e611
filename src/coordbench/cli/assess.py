"""``coordbench assess``: be the client of an assessment (against a running green, or an embedded one)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from coordbench import jsontext
from coordbench.cli.output import check_writable, fail, write_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coordbench.green import GreenSettings
    from coordbench.results.document import ResultRow
    from coordbench.server.loopback import LoopbackServer

__all__ = ["assess"]


def _participants(values: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        role, sep, url = value.partition("=")
        if not sep or not role.strip() or not url.strip():
            raise typer.BadParameter(f"expected ROLE=URL, got {value!r}", param_hint="--participant")
        if role in out:
            raise typer.BadParameter(f"role {role!r} given twice", param_hint="--participant")
        out[role.strip()] = url.strip()
    return out


def _config(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        document = jsontext.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint="--config") from exc
    except ValueError as exc:
        raise typer.BadParameter(f"{path} is not JSON: {exc}", param_hint="--config") from exc
    if not isinstance(document, dict):
        raise typer.BadParameter(f"{path} must hold a JSON object (the request's config)", param_hint="--config")
    return document  # pyright: ignore[reportUnknownVariableType]


def assess(
    participant: Annotated[
        list[str], typer.Option("--participant", "-p", help="A participant as ROLE=URL (repeat for each).")
    ],
    config: Annotated[Path | None, typer.Option(help="JSON file with the request's config (scenarios...).")] = None,
    green: Annotated[
        str | None, typer.Option(help="URL of a running green assessor [default: run one in this process].")
    ] = None,
    port: Annotated[
        int, typer.Option(help="Port of the embedded green (where the participants must export their spans).")
    ] = 9009,
    output: Annotated[Path, typer.Option(help="Where to write results.json.")] = Path("output/results.json"),
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the whole assessment.")] = 3600.0,
) -> None:
    """Send an assessment request and write the AgentBeats results.json from the result.

    Exits 0 when the assessment completed, 1 when it was rejected or failed, 2 on bad arguments.
    """
    from coordbench.a2a import AgentCallError
    from coordbench.green import RequestError, create_green_app
    from coordbench.green.request import validate_request
    from coordbench.results.document import ResultRow, ResultsDocument, ResultsDocumentError
    from coordbench.server.loopback import LoopbackServer

    console = Console(stderr=True, log_path=False)
    if not (math.isfinite(timeout) and timeout > 0):
        raise typer.BadParameter(f"must be a number of seconds > 0, got {timeout}", param_hint="--timeout")
    if not 0 <= port <= _MAX_PORT:
        raise typer.BadParameter(f"must be a port number, 0 to {_MAX_PORT}, got {port}", param_hint="--port")
    if green is not None and not _is_http_url(green):
        raise typer.BadParameter(f"expected an http(s) URL, got {green!r}", param_hint="--green")
    check_writable(output, "--output")
    body = {"participants": _participants(participant), "config": _config(config)}
    try:
        validate_request(body)
    except RequestError as exc:
        fail(exc.message, console=console)
    server: LoopbackServer | None = None
    if green is None:
        try:
            server = LoopbackServer(lambda url: create_green_app(_embedded(url, port)), port=port)
            green = server.start()
        except OSError as exc:
            fail(f"cannot serve the embedded green on port {port}: {exc.strerror or exc}", console=console)
        console.print(f"embedded green at {green} (participants export OTLP to {green.rstrip('/')}/v1/traces)")
    try:
        state, text, data = asyncio.run(_run(green, body, timeout, console))
    except AgentCallError as exc:
        fail(exc.message, 1, console=console)
    finally:
        if server is not None:
            server.stop()
    if state != "completed":
        console.print(f"[red]assessment {escape(state)}:[/red] {escape(text)}", soft_wrap=True)
        raise typer.Exit(1)
    try:
        rows = [ResultRow.read(item) for item in data]
    except ResultsDocumentError as exc:
        print(json.dumps(data, ensure_ascii=False))  # whatever came back is not lost
        fail(f"the green's result is not coordbench's: {exc}; printed as received", 1, console=console)
    text = ResultsDocument.of(rows).text()  # the green's own writer: the same bytes as its copy
    try:
        write_text(output, text)
    except OSError as exc:
        print(text, end="")  # an assessment's results are not lost to a full disk
        fail(f"cannot write {output}: {exc.strerror or exc}; printed instead", 1, console=console)
    evaluated = _print_summary(console, rows)
    console.print(f"results written to {output}")
    if not evaluated:
        console.print("[red]no scenario could be evaluated normally (see the reasons above)[/red]")
        raise typer.Exit(1)


_MAX_PORT = 65_535


def _is_http_url(text: str) -> bool:
    """The rule participant URLs are held to (``AnyHttpUrl``)."""
    from pydantic import AnyHttpUrl, TypeAdapter, ValidationError

    try:
        TypeAdapter(AnyHttpUrl).validate_python(text)
    except ValidationError:
        return False
    return True


def _embedded(url: str, port: int) -> GreenSettings:
    """Settings of an in-process green: this CLI writes results.json itself."""
    from coordbench.green import GreenSettings

    # its own spans stay in its store: not exported anywhere, least of all to itself after it has stopped
    values: dict[str, Any] = {
        "port": port,
        "card_url": url,
        "output_dir": None,
        "grpc_port": None,
        "export_self": False,
    }
    return GreenSettings(**values)


async def _run(url: str, body: dict[str, Any], limit: float, console: Console) -> tuple[str, str, list[Any]]:
    from coordbench.a2a import Messenger

    with console.status("assessing...") as status:

        def show(state: str, text: str) -> None:
            line = text.splitlines()[0] if text else state
            status.update(f"assessing: {line}")
            console.log(line)

        async with Messenger(timeout=limit) as messenger:
            reply = await messenger.send(url, json.dumps(body), new_conversation=True, on_status=show)
    return reply.state, reply.text, reply.data


def _print_summary(console: Console, rows: Sequence[ResultRow]) -> int:
    """Print each row's scenarios with their status and, when something went wrong, why; how many were evaluated."""
    from coordbench.results import spread_lines

    evaluated = 0
    for row in rows:
        detail = row.detail
        table = Table(title=f"overall score {row.score:.1f}/{row.max_score:g}, pass rate {row.pass_rate:.0f}%")
        table.add_column("scenario")
        table.add_column("mode")
        table.add_column("status")
        table.add_column("score", justify="right")
        table.add_column("answer", justify="right")
        table.add_column("coordination", justify="right")
        table.add_column("passed")
        table.add_column("shape")
        for entry in detail.scenarios:
            graph = entry.graph()
            table.add_row(
                entry.id,
                entry.mode,
                entry.status,
                f"{entry.score:.2f}",
                _quality(entry.answer_quality),
                _quality(entry.coordination_quality),
                "yes" if entry.passed else "no",
                f"{graph.topology} / {entry.label}" if graph is not None else "-",
            )
            evaluated += entry.status == "evaluated"
        console.print(table)
        for line in spread_lines(detail.spread):
            console.print(line, soft_wrap=True)
        for entry in detail.scenarios:  # what went wrong, in full: a table cell would cut it
            if entry.error:
                console.print(f"scenario {entry.id}: {entry.status}: {entry.error}", soft_wrap=True)
        for entry in detail.scenarios:
            if entry.mode == "live" and entry.trace_id:
                console.print(f"scenario {entry.id}: trace {entry.trace_id}", soft_wrap=True)
        for reason in detail.judge_fallbacks:
            console.print(f"judge: rule-based ({reason})")
        if detail.ignored_config_keys:
            ignored = ", ".join(detail.ignored_config_keys)
            console.print(f"[yellow]ignored config keys (not known to coordbench):[/yellow] {escape(ignored)}")
    return evaluated


def _quality(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else "-"
