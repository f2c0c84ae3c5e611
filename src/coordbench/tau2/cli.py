"""``coordbench tau2 ...``: tau2's own command line, with ``a2a_agent`` and its ``--a2a-*`` flags.

``coordbench tau2 serve`` serves tau2 evaluations over A2A instead (:mod:`coordbench.tau2.service`).

Every argument other than ``--a2a-*`` goes to tau2's CLI unchanged, so every tau2 flag, agent
and subcommand behaves as with ``tau2`` itself. With ``run --agent a2a_agent``, before tau2
starts: the settings are validated, the agent's card is read (a missing or invalid card stops
here, with exit code 2), the settings join ``--agent-llm-args`` (where tau2 records them; the
token never does), and a ``--save-to`` name is chosen when none is given. After the run, the
protocol metrics are written next to tau2's results as ``<save-to>_a2a_metrics.json``.

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) set, the run
is traced: one trace whose root is the ``tau2 run`` span of service ``tau2``, and one A2A call
span per request, which the agent's own spans join through W3C trace context.
"""

# tau2 ships no type information: its modules are untyped to pyright.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.markup import escape

from coordbench.errors import ConfigurationError
from coordbench.redaction import redact_url
from coordbench.telemetry import otlp_endpoint

if TYPE_CHECKING:
    from coordbench.tau2.config import A2AConfig

__all__ = ["SERVICE_NAME", "main"]

SERVICE_NAME = "tau2"
"""``service.name`` of the driver's spans: the tau2 node of the agent graph."""

_err = Console(stderr=True)


A2A_HELP = """coordbench adds to tau2's `run` (with --agent a2a_agent):
  --a2a-endpoint URL     the A2A agent's base URL, where its card is served (required)
  --a2a-auth-token T     bearer token for every request (or COORDBENCH_A2A_AUTH_TOKEN)
  --a2a-timeout S        seconds one A2A call may take (default 300)
  --a2a-no-verify-tls    do not verify the agent's TLS certificate
Protocol metrics: <results-dir>/<save-to>_a2a_metrics.json. Spans: set OTEL_EXPORTER_OTLP_ENDPOINT.
`coordbench tau2 serve --help`: tau2 evaluations offered over A2A.
"""


OVERVIEW = """usage: coordbench tau2 COMMAND [ARGS...]

tau2-bench's own command line, with one more agent, a2a_agent, that talks to a remote A2A agent.

commands:
  run      tau2's run: every tau2 flag, plus --a2a-* with --agent a2a_agent (`coordbench tau2 run --help`)
  serve    tau2 evaluations offered over A2A (Google ADK; `coordbench tau2 serve --help`)
  ...      every other tau2 command, unchanged (`coordbench tau2 view`, `coordbench tau2 domain`...)

Without a hosted model key, simulate the user with the local scripted user (no key, no internet):
  coordbench tau2 run --domain mock --agent a2a_agent --a2a-endpoint URL --user scripted_user --num-tasks 2
"""


def _quiet_tau2_logs() -> None:
    """tau2 logs at DEBUG through loguru as it is imported: keep its warnings, drop the rest (LOGURU_LEVEL wins)."""
    if os.environ.get("LOGURU_LEVEL"):
        return
    try:
        from loguru import logger
    except ImportError:  # pragma: no cover - tau2 depends on loguru
        return
    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def _a2a_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--a2a-endpoint")
    parser.add_argument("--a2a-auth-token")
    parser.add_argument("--a2a-timeout", type=float)
    parser.add_argument("--a2a-no-verify-tls", action="store_true")
    return parser


def _tau2_peek() -> argparse.ArgumentParser:
    """The tau2 flags this wrapper reads (tau2 still gets and parses them)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--agent")
    parser.add_argument("--agent-llm-args")
    parser.add_argument("--save-to")
    parser.add_argument("--results-dir")
    parser.add_argument("--domain", "-d")
    parser.add_argument("--user", default="user_simulator")
    parser.add_argument("--user-llm", default="gpt-4.1")
    parser.add_argument("--user-llm-args", default="")
    return parser


def missing_user_key(peek: argparse.Namespace) -> str | None:
    """One line saying which key tau2's model-driven user lacks, or ``None`` (a key, an ``api_key``, or no model).

    tau2's ``user_simulator`` asks ``--user-llm`` what the user says; without its provider's key
    litellm fails deep inside the run. ``--user scripted_user`` needs no model at all.
    """
    if peek.user != "user_simulator" or "api_key" in (peek.user_llm_args or ""):
        return None
    import litellm

    check = cast("dict[str, Any]", litellm.validate_environment(model=peek.user_llm))
    missing = [str(k) for k in check.get("missing_keys") or []]
    if check.get("keys_in_environment") or not missing:
        return None
    return (
        f"tau2's simulated user (--user-llm {peek.user_llm}) needs {', '.join(missing)}, which is not set: set it, "
        "or run offline with --user scripted_user (no model, no key)"
    )


class UsageError(ConfigurationError):
    """The command line cannot be run as given."""


def _replace_flag(args: list[str], flag: str, value: str) -> list[str]:
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == flag:
            skip = True
            continue
        if arg.startswith(flag + "="):
            continue
        out.append(arg)
    return [*out, flag, value]


def _results_dir(peek: argparse.Namespace) -> Path:
    if peek.results_dir:
        return Path(peek.results_dir)
    from tau2.utils.utils import DATA_DIR

    return Path(DATA_DIR) / "simulations"


def _prepare(a2a: argparse.Namespace, rest: list[str], peek: argparse.Namespace) -> tuple[A2AConfig, list[str]]:
    """Validate the A2A settings; fill ``peek.agent_llm_args`` and ``peek.save_to``; the arguments for tau2."""
    from coordbench.tau2.config import LLM_ARGS_KEYS, TOKEN_ENV, A2AConfig

    if not a2a.a2a_endpoint:
        raise UsageError("--agent a2a_agent needs --a2a-endpoint URL (the agent's base URL, where its card is)")
    token = a2a.a2a_auth_token or os.environ.get(TOKEN_ENV) or None
    values: dict[str, Any] = {
        "endpoint": a2a.a2a_endpoint,
        "auth_token": token,
        "verify_tls": not a2a.a2a_no_verify_tls,
    }
    if a2a.a2a_timeout is not None:
        values["timeout"] = a2a.a2a_timeout
    config = A2AConfig.create(**values)
    try:
        llm_args = json.loads(peek.agent_llm_args) if peek.agent_llm_args else {}
    except ValueError as exc:
        raise UsageError(f"--agent-llm-args must be a JSON object: {exc}") from None
    if not isinstance(llm_args, dict):
        raise UsageError("--agent-llm-args must be a JSON object")
    clashing = sorted(set(llm_args) & set(LLM_ARGS_KEYS))
    if clashing:
        raise UsageError(f"give {', '.join(clashing)} with the --a2a-* flags, not in --agent-llm-args")
    peek.agent_llm_args = llm_args
    if not peek.save_to:
        peek.save_to = f"a2a_{peek.domain or 'run'}_{time.strftime('%Y%m%d-%H%M%S')}_{os.getpid()}"
        rest = [*rest, "--save-to", peek.save_to]
    saved = _results_dir(peek) / f"{peek.save_to}.json"
    if saved.exists() and not sys.stdin.isatty():
        raise UsageError(f"{saved} exists and tau2 would ask whether to resume it; choose another --save-to")
    return config, rest


def _tau2_main(args: list[str]) -> None:
    """tau2's own CLI on ``args`` (it reads ``sys.argv``)."""
    from tau2 import cli as tau2_cli

    argv = sys.argv
    sys.argv = ["tau2", *args]
    try:
        tau2_cli.main()
    finally:
        sys.argv = argv


def _tracing_requested() -> bool:
    return otlp_endpoint("traces") is not None


def _run_a2a(a2a: argparse.Namespace, rest: list[str], peek: argparse.Namespace) -> int:
    from coordbench.a2a import AgentCallError
    from coordbench.tau2.bridge import BRIDGE
    from coordbench.tau2.runner import a2a_session

    config, rest = _prepare(a2a, rest, peek)
    provider = None
    if _tracing_requested():
        from coordbench.instrument import A2AInstrumentor
        from coordbench.telemetry import configure_tracing

        provider = configure_tracing(SERVICE_NAME)
        A2AInstrumentor().instrument(tracer_provider=provider)
    results = _results_dir(peek) / f"{peek.save_to}.json"
    try:
        with a2a_session(config, domain=peek.domain or "", results=results) as session:
            _err.print(f"a2a_agent: {session.agent_name} at {redact_url(config.endpoint)}")
            missing = missing_user_key(peek)
            if missing is not None:
                raise UsageError(missing)
            _tau2_main(_replace_flag(rest, "--agent-llm-args", json.dumps(session.llm_args(peek.agent_llm_args))))
        report = session.report()
    except AgentCallError as exc:
        raise UsageError(f"cannot use {redact_url(config.endpoint)} as the agent ({exc.kind}): {exc}") from None
    finally:
        BRIDGE.close()
        if provider is not None:
            provider.force_flush()
    totals = report["totals"]
    _err.print(
        f"A2A: {totals['requests']} requests, {totals['latency_ms']:.0f} ms in calls, "
        f"{totals['transport_errors']} transport and {totals['reasoning_errors']} reasoning errors; "
        f"metrics: {session.metrics_file}"
    )
    if session.trace_id:
        _err.print(f"trace id: {session.trace_id}")
    return 0


def _serve(argv: list[str]) -> int:
    """``coordbench tau2 serve``: the tau2 evaluation service (extra ``coordbench[adk]``) on uvicorn."""
    parser = argparse.ArgumentParser(prog="coordbench tau2 serve", description="Serve tau2 evaluations over A2A.")
    parser.add_argument("--host", default="127.0.0.1", help="Interface to listen on (default 127.0.0.1).")
    parser.add_argument("--port", type=int, default=9020, help="Port (default 9020).")
    parser.add_argument("--card-url", help="The URL to put on the agent card (default http://HOST:PORT/).")
    args = parser.parse_args(argv)
    try:
        from coordbench.tau2.service import service_app
    except ImportError as exc:
        raise UsageError(f"the evaluation service needs Google ADK: pip install 'coordbench[adk]' ({exc})") from None
    import uvicorn

    if _tracing_requested():
        from coordbench.instrument import A2AInstrumentor
        from coordbench.telemetry import configure_tracing

        A2AInstrumentor().instrument(tracer_provider=configure_tracing("tau2-evaluator"))
    url = args.card_url or f"http://{args.host}:{args.port}/"
    _err.print(f"tau2 evaluation service: card at {url}.well-known/agent-card.json")
    uvicorn.run(service_app(url), host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: Sequence[str]) -> int:
    """Run tau2's CLI with ``a2a_agent`` registered; see the module docstring.

    Args:
        argv: The arguments after ``coordbench tau2``.

    Returns:
        The exit code: 0, or 2 for a command line that cannot run.
    """
    if not argv or list(argv[:1]) in (["-h"], ["--help"]):
        print(OVERVIEW, end="")
        return 0
    if list(argv[:1]) == ["serve"]:
        try:
            return _serve(list(argv[1:]))
        except ConfigurationError as exc:
            _err.print(f"[red]error:[/red] {escape(str(exc))}")
            return 2
    a2a, rest = _a2a_parser().parse_known_args(list(argv))
    if rest[:1] == ["run"] and {"-h", "--help"} & set(rest):
        print(A2A_HELP, flush=True)  # before tau2's own help, which takes tau2's import to build
    _quiet_tau2_logs()
    from coordbench.tau2.agent import AGENT_NAME, register

    register()
    peek, _ = _tau2_peek().parse_known_args(rest)
    uses_a2a = bool(rest) and rest[0] == "run" and peek.agent == AGENT_NAME
    given = [flag for flag, value in vars(a2a).items() if value not in (None, False)]
    try:
        if given and not uses_a2a:
            raise UsageError(f"--{given[0].replace('_', '-')} applies to `run --agent {AGENT_NAME}` only")
        if uses_a2a:
            return _run_a2a(a2a, rest, peek)
        missing = missing_user_key(peek) if rest[:1] == ["run"] and not {"-h", "--help"} & set(rest) else None
        if missing is not None:
            raise UsageError(missing)
    except ConfigurationError as exc:
        _err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    _tau2_main(rest)
    return 0
