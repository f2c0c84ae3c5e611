"""``coordbench``: the assessor, its client, re-evaluation, the trace backend, ground truth."""

from __future__ import annotations

import logging
from typing import Annotated

import typer
from rich.console import Console

from coordbench.cli.assess import assess
from coordbench.cli.attribute import attribute
from coordbench.cli.compare import compare
from coordbench.cli.demo import demo
from coordbench.cli.evaluate import evaluate
from coordbench.cli.green import green
from coordbench.cli.groundtruth import groundtruth
from coordbench.cli.purple import purple, team_app
from coordbench.cli.receiver import receiver
from coordbench.cli.report import report
from coordbench.cli.tau2 import tau2
from coordbench.redaction import RedactFilter

__all__ = ["app", "main"]

app = typer.Typer(
    name="coordbench",
    help="OpenTelemetry-native tracing and evaluation of coordination in A2A multi-agent systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.command("demo")(demo)
app.command("green")(green)
app.command("assess")(assess)
app.command("evaluate")(evaluate)
app.command("attribute")(attribute)
app.command("receiver")(receiver)
app.command("groundtruth")(groundtruth)
app.command("purple")(purple)
app.command("report")(report)
app.command("compare")(compare)
app.command(
    "tau2",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)(tau2)
app.add_typer(team_app, name="team")

err = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        from coordbench import __version__

        print(__version__)
        raise typer.Exit


@app.callback()
def _root(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO level.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    # a URL or a provider's error may carry a secret: logs show it redacted
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactFilter) for f in handler.filters):
            handler.addFilter(RedactFilter())


def main() -> None:
    """Entry point of the ``coordbench`` script."""
    app()
