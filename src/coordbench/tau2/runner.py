"""One tau2 run against an A2A agent: the card read first, the run's trace, its metrics file.

:func:`a2a_session` wraps whatever starts tau2 (its own CLI in ``coordbench tau2 run``, or
:func:`evaluate` for the evaluation service): it reads the agent's card, opens the ``tau2 run``
span that every A2A call of the run descends from, gives the ``llm_args`` the agents need, and
afterwards writes ``<save_to>_a2a_metrics.json`` next to tau2's results.
"""

# tau2 ships no type information: its modules are untyped to pyright.
# pyright: reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
# pyright: reportMissingTypeStubs=false

from __future__ import annotations

import json
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry import trace

from coordbench import semconv
from coordbench.errors import ConfigurationError
from coordbench.redaction import redact_url
from coordbench.tau2.agent import Run, close_run, open_run, register
from coordbench.tau2.bridge import BRIDGE
from coordbench.tau2.config import A2AConfig
from coordbench.tau2.metrics import run_report

__all__ = ["RUN_SPAN", "A2ASession", "a2a_session", "evaluate"]

RUN_SPAN = "tau2 run"
"""The root span of a run; its service is the tau2 driver."""


@dataclass
class A2ASession:
    """A run in progress (see :func:`a2a_session`).

    Attributes:
        config: Where the agent is.
        agent_name: The name on the agent's card.
        run: The run's token, metrics and trace parent.
        trace_id: The run's trace (``None`` when tracing is off).
        results: tau2's results file of the run.
    """

    config: A2AConfig
    agent_name: str
    run: Run
    trace_id: str | None
    results: Path

    def llm_args(self, base: dict[str, Any] | None = None) -> dict[str, Any]:
        """``base`` plus what ``a2a_agent`` reads: the A2A settings (no token) and the run id."""
        return {**(base or {}), **self.config.llm_args(), "a2a_run": self.run.run_id}

    @property
    def metrics_file(self) -> Path:
        """Where the protocol metrics go: ``<save_to>_a2a_metrics.json`` beside the results."""
        return self.results.with_name(f"{self.results.stem}_a2a_metrics.json")

    def report(self) -> dict[str, Any]:
        """The protocol metrics of the run, joined to tau2's saved simulations; also written to :attr:`metrics_file`."""
        simulations: list[dict[str, Any]] = []
        if self.results.exists():
            simulations = json.loads(self.results.read_text(encoding="utf-8")).get("simulations", [])
        report = run_report(
            simulations,
            self.run.book,
            endpoint=redact_url(self.config.endpoint),
            agent=self.agent_name,
            trace_id=self.trace_id,
        )
        self.metrics_file.parent.mkdir(parents=True, exist_ok=True)
        self.metrics_file.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        return report


@contextmanager
def a2a_session(config: A2AConfig, *, domain: str, results: Path) -> Generator[A2ASession]:
    """Read the agent's card, then hold the run's span and metrics while tau2 runs.

    Args:
        config: Where the agent is.
        domain: The tau2 domain (recorded on the run's span).
        results: tau2's results file (``<results_dir>/<save_to>.json``).

    Raises:
        AgentCallError: The card is missing or invalid, or the agent is unreachable.
    """
    register()
    agent_name = BRIDGE.agent_name(config)
    tracer = trace.get_tracer("coordbench.tau2")
    attributes = {semconv.TAU2_DOMAIN: domain, semconv.TAU2_SAVE_TO: results.stem, semconv.TAU2_AGENT_NAME: agent_name}
    with tracer.start_as_current_span(RUN_SPAN, attributes=attributes) as span:
        context = span.get_span_context()
        run = open_run(config.token, trace.set_span_in_context(span))
        trace_id = format(context.trace_id, "032x") if context.is_valid else None
        try:
            yield A2ASession(config, agent_name, run, trace_id, results)
        finally:
            close_run(run)


def evaluate(
    config: A2AConfig,
    *,
    domain: str,
    results_dir: Path,
    save_to: str,
    user_llm: str,
    user_llm_args: dict[str, Any] | None = None,
    task_ids: list[str] | None = None,
    num_tasks: int | None = None,
    num_trials: int = 1,
    max_steps: int = 50,
    max_concurrency: int = 1,
) -> dict[str, Any]:
    """Run tau2 on ``domain`` against the agent and summarise: rewards, pass^k, tasks, protocol metrics.

    Args:
        config: Where the agent is.
        domain: A tau2 domain (``mock``, ``airline``, ``retail``, ``telecom``...).
        results_dir: Where tau2 writes its files.
        save_to: The run's file name (must not exist yet).
        user_llm: The user simulator's model (litellm name, e.g. ``openai/gpt-4.1-mini``).
        user_llm_args: Its arguments (``api_base``, ``api_key``, ``temperature``...).
        task_ids: The tasks to run (default: all, or the first ``num_tasks``).
        num_tasks: How many tasks, when no ids are given.
        num_trials: Trials per task (pass^k is computed for k up to this).
        max_steps: Steps before a simulation is cut.
        max_concurrency: Simulations run side by side.

    Returns:
        ``{"domain", "agent", "avg_reward", "pass_hat_k", "tasks", "protocol_metrics", "files"}``.

    Raises:
        AgentCallError: The agent's card cannot be read.
        ConfigurationError: ``save_to`` exists in ``results_dir``.
    """
    from tau2.data_model.simulation import RunConfig
    from tau2.run import run_domain

    results = results_dir / f"{save_to}.json"
    if results.exists():
        raise ConfigurationError(f"{results} exists; tau2 would ask whether to resume it")
    with a2a_session(config, domain=domain, results=results) as session:
        run_config = RunConfig.model_validate(
            {
                "domain": domain,
                "task_ids": task_ids,
                "num_tasks": num_tasks,
                "agent": "a2a_agent",
                "llm_agent": "a2a",
                "llm_args_agent": session.llm_args(),
                "user": "user_simulator",
                "llm_user": user_llm,
                "llm_args_user": dict(user_llm_args or {}),
                "num_trials": num_trials,
                "max_steps": max_steps,
                "save_to": save_to,
                "results_dir": str(results_dir),
                "max_concurrency": max_concurrency,
                "log_level": "ERROR",
                # what tau2's CLI passes: RunConfig's own default, None, breaks run_domain
                "llm_args_judge": {},
            }
        )
        outcome = run_domain(run_config)
    report = session.report()
    summary_file = results.with_name(f"{save_to}_results.json")
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.exists() else {}
    metrics = summary.get("metrics", {})
    tasks = [
        {
            "task_id": s.task_id,
            "trial": s.trial,
            "reward": s.reward_info.reward if s.reward_info is not None else None,
            "termination_reason": str(s.termination_reason.value),
        }
        for s in sorted(outcome.simulations, key=lambda s: (s.task_id, s.trial or 0))
    ]
    return {
        "domain": domain,
        "agent": session.agent_name,
        "avg_reward": metrics.get("avg_reward"),
        "pass_hat_k": metrics.get("pass_at_k", {}),
        "tasks": tasks,
        "protocol_metrics": report,
        "files": {"results": str(results), "metrics": str(session.metrics_file)},
    }
