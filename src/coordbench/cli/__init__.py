"""The ``coordbench`` command."""

from coordbench.cli.app import app, main

__all__ = ["app", "main"]
