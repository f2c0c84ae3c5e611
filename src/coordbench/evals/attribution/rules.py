"""The evidence rules of failure attribution: each reads the conversation and proposes findings.

A finding (:class:`~coordbench.evals.attribution.finding.Finding`) names an agent, the span where its
fault shows, how strongly the rule points at it (:data:`~coordbench.evals.attribution.finding.STRENGTH`),
and the evidence in words. The rules live by what they read: :mod:`.failures`, :mod:`.content`,
:mod:`.conduct`. ``docs/attribution.md`` lists every rule.
"""

from __future__ import annotations

from coordbench.evals.attribution.conduct import ended_early, relays, repeats
from coordbench.evals.attribution.content import ignored, lost, origins
from coordbench.evals.attribution.failures import failed_calls, failed_steps, markers
from coordbench.evals.attribution.finding import STRENGTH, Finding
from coordbench.evals.attribution.said import Conversation

__all__ = ["STRENGTH", "Finding", "findings"]


def findings(conv: Conversation, *, expected: str | None, members: list[str]) -> list[Finding]:
    """Every rule's findings on ``conv`` (``docs/attribution.md``), in time order (then rule, agent)."""
    task = conv.task_text()
    found = (
        failed_calls(conv)
        + failed_steps(conv)
        + markers(conv)
        + origins(conv, expected)
        + (lost(conv, expected) if expected else ignored(conv))
        + ended_early(conv, task, members)
        + repeats(conv)
        + relays(conv)
    )
    found.sort(key=lambda f: (f.time, f.rule, f.agent, f.span.span_id if f.span is not None else ""))
    return found
