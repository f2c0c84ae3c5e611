"""``coordbench tau2``: tau2-bench's command line with the ``a2a_agent`` (extra ``coordbench[tau2]``)."""

from __future__ import annotations

import importlib.util

import typer

__all__ = ["tau2"]


def tau2(ctx: typer.Context) -> None:
    """Run tau2-bench (every tau2 subcommand and flag), with --agent a2a_agent and its --a2a-* flags.

    Example: coordbench tau2 run --domain mock --agent a2a_agent --a2a-endpoint http://127.0.0.1:9019/
    --user-llm openai/gpt-4.1-mini --num-tasks 2 --results-dir out. The protocol metrics of an
    a2a_agent run are written next to tau2's results as <save-to>_a2a_metrics.json.
    """
    if importlib.util.find_spec("tau2") is None:
        typer.echo("coordbench tau2 needs tau2-bench: pip install 'coordbench[tau2]'", err=True)
        raise typer.Exit(2)
    from coordbench.tau2.cli import main

    raise typer.Exit(main(ctx.args))
