"""Protocol metrics of a tau2 run against an A2A agent: per request, per task, per run.

A request is one A2A call of one turn. Transport errors (the agent could not be reached, was
too slow, refused the token, broke the protocol or sent something that is not a reply) are kept
apart from the agent's reasoning errors (a tool that does not exist, arguments that do not
parse, a task the agent itself failed), since the first say nothing of the agent's competence.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from coordbench.a2a import ERROR_KINDS

__all__ = [
    "REASONING_ERRORS",
    "TRANSPORT_ERRORS",
    "MetricsBook",
    "RequestMetrics",
    "TaskMetrics",
    "run_report",
    "summarise",
]

TRANSPORT_ERRORS = ERROR_KINDS
"""Error kinds of the A2A exchange itself: those of :class:`coordbench.a2a.AgentCallError`."""
REASONING_ERRORS = ("unknown_tool", "invalid_arguments", "agent_failed")
"""Error kinds of the agent's answer: it asked for a tool tau2 does not have, gave arguments
that are not a JSON object, or ended its A2A task as failed or rejected."""


@dataclass
class RequestMetrics:
    """One A2A request of one turn.

    Attributes:
        turn: The turn of the task (0 for the first message tau2 sends).
        context_id: The A2A conversation of the task.
        latency_ms: Time spent in the A2A call, from sending to the parsed reply.
        local_ms: Time spent here around it: translating messages, parsing tool calls.
        request_bytes: Size of the HTTP request body(ies) of the call.
        response_bytes: Size of the HTTP response body(ies).
        http_status: The last HTTP status of the call (``None`` when no response came).
        input_tokens: Tokens the agent reported reading, when it reports usage.
        output_tokens: Tokens the agent reported writing, when it reports usage.
        state: The A2A task state of the reply (``completed``, ``failed``, ``message``...).
        tool_calls: How many tool calls the reply carried.
        error_kind: What went wrong, from :data:`TRANSPORT_ERRORS` or :data:`REASONING_ERRORS`.
        error: The error in words (no credentials).
    """

    turn: int
    context_id: str
    latency_ms: float = 0.0
    local_ms: float = 0.0
    request_bytes: int = 0
    response_bytes: int = 0
    http_status: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    state: str = ""
    tool_calls: int = 0
    error_kind: str | None = None
    error: str | None = None

    @property
    def error_class(self) -> str | None:
        """``transport`` or ``reasoning``, when the request had an error."""
        if self.error_kind is None:
            return None
        return "reasoning" if self.error_kind in REASONING_ERRORS else "transport"

    def as_dict(self) -> dict[str, Any]:
        """The request as a JSON object."""
        return {**asdict(self), "error_class": self.error_class}


@dataclass
class TaskMetrics:
    """The requests of one simulation (one task, one trial), in order."""

    context_id: str
    requests: list[RequestMetrics] = field(default_factory=list[RequestMetrics])

    def as_dict(self) -> dict[str, Any]:
        """The task's requests and their totals as a JSON object."""
        return {
            "context_id": self.context_id,
            "totals": summarise(self.requests),
            "requests": [r.as_dict() for r in self.requests],
        }


def _total(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def summarise(requests: list[RequestMetrics]) -> dict[str, Any]:
    """Totals over requests: counts, latency, bytes, tokens and errors by kind and class."""
    latencies = sorted(r.latency_ms for r in requests)
    errors: dict[str, int] = {}
    for request in requests:
        if request.error_kind is not None:
            errors[request.error_kind] = errors.get(request.error_kind, 0) + 1
    return {
        "requests": len(requests),
        "latency_ms": round(sum(latencies), 3),
        "max_latency_ms": round(latencies[-1], 3) if latencies else 0.0,
        "local_ms": round(sum(r.local_ms for r in requests), 3),
        "request_bytes": sum(r.request_bytes for r in requests),
        "response_bytes": sum(r.response_bytes for r in requests),
        "input_tokens": _total(r.input_tokens for r in requests),
        "output_tokens": _total(r.output_tokens for r in requests),
        "tool_calls": sum(r.tool_calls for r in requests),
        "errors": dict(sorted(errors.items())),
        "transport_errors": sum(n for kind, n in errors.items() if kind in TRANSPORT_ERRORS),
        "reasoning_errors": sum(n for kind, n in errors.items() if kind in REASONING_ERRORS),
    }


class MetricsBook:
    """The metrics of one run, filled by its agents from tau2's worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[str, TaskMetrics] = {}

    def record(self, request: RequestMetrics) -> None:
        """Add one request to its task (keyed by context id)."""
        with self._lock:
            task = self._tasks.setdefault(request.context_id, TaskMetrics(request.context_id))
            task.requests.append(request)

    def tasks(self) -> dict[str, TaskMetrics]:
        """The tasks recorded so far, by context id."""
        with self._lock:
            return dict(self._tasks)


def _field(value: Any, key: str) -> Any:
    return cast("dict[str, Any]", value).get(key) if isinstance(value, dict) else None


def _context_of(simulation: dict[str, Any]) -> str | None:
    messages: list[Any] = simulation.get("messages") or []
    for message in messages:
        context = _field(_field(_field(message, "raw_data"), "a2a"), "context_id")
        if context:
            return str(context)
    return None


def run_report(simulations: list[dict[str, Any]], book: MetricsBook, **about: Any) -> dict[str, Any]:
    """The protocol metrics of a run, task by task, joined to tau2's simulations.

    Args:
        simulations: The ``simulations`` of tau2's results file (JSON objects).
        book: What the run's agents recorded.
        about: Facts about the run to put first (endpoint, agent name, trace id...).

    Returns:
        ``{..about, "totals", "tasks": [...]}``, tasks in tau2's order by task id then trial.
        A simulation whose agent made no A2A call (it failed before) has no requests.
    """
    recorded = book.tasks()
    tasks: list[dict[str, Any]] = []
    requests: list[RequestMetrics] = []
    used: set[str] = set()
    for simulation in simulations:
        context = _context_of(simulation) or ""
        task = recorded.get(context, TaskMetrics(context))
        used.add(context)
        requests.extend(task.requests)
        tasks.append(
            {
                "task_id": simulation.get("task_id"),
                "trial": simulation.get("trial"),
                "reward": _field(simulation.get("reward_info"), "reward"),
                "termination_reason": simulation.get("termination_reason"),
                **task.as_dict(),
            }
        )
    unmatched = [t for c, t in recorded.items() if c not in used]
    for task in unmatched:  # simulations tau2 did not save (it was interrupted)
        requests.extend(task.requests)
        tasks.append({"task_id": None, "trial": None, "reward": None, "termination_reason": None, **task.as_dict()})
    tasks.sort(key=lambda t: (str(t["task_id"]), t["trial"] if t["trial"] is not None else -1, t["context_id"]))
    return {**about, "totals": summarise(requests), "tasks": tasks}
