"""What each purple role does with its work, by rule: real, task-dependent text, no model needed.

A role reads a :class:`Work` (the task, what it was asked, everything its conversation holds, and
the answers of the agents it delegated to or consulted) and writes its contribution. The
coordinator also plans (one sub-task per delegate) and merges.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from coordbench.purple.text import extract, key_terms, numbers, risks, sentences, words

__all__ = ["ROLES", "Work", "content", "contribute", "merge", "subtask"]

ROLES: dict[str, str] = {
    "coordinator": "decomposes the task, delegates it and merges the answers",
    "lead": "coordinates a group of workers and summarises their work",
    "relay": "hands the work on to the workers it knows (everything funnels through it)",
    "researcher": "finds the facts the task rests on (an extractive summary of the material)",
    "analyst": "analyses key terms, figures and risks",
    "writer": "drafts the answer from the findings it is given",
    "reviewer": "critiques a draft: what it covers, what it misses",
    "observer": "a member kept for reference; it answers when asked",
}
"""Every role, and what it does."""

_CARRY = "\n\nWork so far:\n"
_HEADER = re.compile(
    r"^(\[[^\]]+\]\s*)?(Findings|Analysis|Draft|Review|Notes|Note|Answer|Summary|Key terms|Figures|Risks|"
    r"Covers|Missing|Length|Verdict)\b[^:]*:\s*"
)
_VERBS = {
    "researcher": "Find the facts relevant to",
    "analyst": "Analyse the key terms, figures and risks of",
    "writer": "Draft the answer to",
    "reviewer": "Review the draft answer to",
    "lead": "Coordinate your workers on",
    "relay": "Distribute to your workers",
    "coordinator": "Coordinate",
    "observer": "Comment on",
}


@dataclass
class Work:
    """What an agent works from.

    Attributes:
        task: The team's task (as the assessor gave it).
        asked: What this agent was asked (the text of the latest message).
        context: Every earlier text of the conversation, and details sent as data.
        inputs: Answers of the agents it delegated to or consulted, by agent name, in order.
    """

    task: str
    asked: str = ""
    context: list[str] = field(default_factory=list[str])
    inputs: dict[str, str] = field(default_factory=dict[str, str])

    @property
    def carried(self) -> str:
        """Work handed along with the request (the part of it after ``Work so far:``)."""
        return self.asked.split(_CARRY, 1)[1] if _CARRY in self.asked else ""

    @property
    def material(self) -> str:
        """All the text this agent may draw on: the task, work handed along, the conversation."""
        handed = content([self.carried]) if self.carried else []
        return "\n".join(dict.fromkeys(t for t in [self.task, *handed, *self.context] if t.strip()))


def subtask(role: str, task: str, *, carry: str = "") -> str:
    """What a delegating agent asks an agent of ``role``; ``carry`` is prior work handed along.

    Example:
        >>> subtask("analyst", "Plan the launch.")
        'Analyse the key terms, figures and risks of: Plan the launch.'
    """
    text = f"{_VERBS.get(role, 'Contribute to')}: {task}"
    return f"{text}{_CARRY}{carry}" if carry else text


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else "- (nothing found)"


def contribute(role: str, name: str, work: Work) -> str:
    """The contribution of agent ``name`` in ``role`` to ``work`` (deterministic)."""
    material = work.material
    if role == "researcher":
        found = extract(material, limit=3, exclude=sentences(work.task)[:1]) or extract(material, limit=3)
        return f"Findings ({name}):\n{_bullets(found)}"
    if role == "analyst":
        terms = ", ".join(f"{t} ({n})" for t, n in key_terms([material], limit=6))
        figures = ", ".join(numbers(material)) or "none stated"
        about = (sentences(work.task) or [work.task])[0]
        return (
            f"Analysis ({name}) of: {about}\nKey terms: {terms}\nFigures: {figures}\n"
            f"Risks:\n{_bullets(risks(material))}"
        )
    if role == "writer":
        return f"Draft ({name}):\n{_draft(work)}"
    if role == "reviewer":
        return f"Review ({name}):\n{_review(work)}"
    if role == "observer":
        return f"Note ({name}): the task concerns {', '.join(t for t, _ in key_terms([material], limit=3))}."
    return f"Notes ({name}):\n{_bullets(extract(material, limit=2))}"


def content(texts: Iterable[str]) -> list[str]:
    r"""The sentences of ``texts`` that carry content: headers, labels and bullets stripped, each once.

    Example:
        >>> content(["Findings (r):\n- Budget is tight.", "Key terms: budget (2)", "- Budget is tight."])
        ['Budget is tight.', 'budget (2)']
    """
    out: dict[str, None] = {}
    for text in texts:
        for sentence in sentences(text):
            cleaned = _HEADER.sub("", sentence.removeprefix("- ")).removeprefix("- ").strip()
            if cleaned and not cleaned.startswith("(") and cleaned not in out:
                out[cleaned] = None
    return list(out)


def _draft(work: Work) -> str:
    source = "\n".join(content([*work.inputs.values(), work.carried])) or work.material
    themes = ", ".join(t for t, _ in key_terms([work.task, source], limit=3))
    body = [s for s in extract(source, limit=4) if s not in sentences(work.task)[:1]]
    return " ".join([f"This answer addresses {themes}.", *dict.fromkeys(body)])


_DRAFT = re.compile(r"^(?:\[[^\]\n]{1,80}\][ \t]*)?((?:Draft|Writer) \()", re.MULTILINE)
"""Where a draft starts: the rule-based writer's ``Draft (name):`` or a model-written ``Writer (name, model):``.

Linear in the text: each line start is tried once, and the optional ``[agent]`` prefix is bounded."""


def _draft_in(text: str) -> str:
    """The draft ``text`` holds (from its header to the end), or ``""``."""
    found = _DRAFT.search(text)
    return text[found.start(1) :] if found else ""


def _review(work: Work) -> str:
    """A critique of the draft the reviewer was handed: by a delegate, along with its request, or earlier."""
    draft = next((d for d in (_draft_in(text) for text in work.inputs.values()) if d), "")
    draft = draft or _draft_in(work.carried)  # a chain or a consult hands the draft along with the request
    draft = draft or next((d for d in (_draft_in(text) for text in reversed(work.context)) if d), "")
    wanted = [t for t, _ in key_terms([work.task], limit=8)]
    if not draft:
        return f"No draft was shared; the answer should cover: {', '.join(wanted)}."
    present = set(words(draft))
    covered = [t for t in wanted if t in present]
    missing = [t for t in wanted if t not in present]
    verdict = "ready" if len(covered) >= max(1, len(wanted) * 2 // 3) else "needs another pass"
    return (
        f"Covers: {', '.join(covered) or 'none of the key terms'}\n"
        f"Missing: {', '.join(missing) or 'nothing'}\n"
        f"Length: {len(draft.split())} words in {len(sentences(draft))} sentences\n"
        f"Verdict: {verdict}"
    )


def merge(name: str, work: Work, own: str = "") -> str:
    """A delegating agent's answer: the task's point, each agent's part, and a summary across them.

    Example:
        >>> print(merge("coordinator", Work("Plan the launch.", inputs={"writer": "Draft (writer): Go in May."})))
        Answer (coordinator) to: Plan the launch.
        <BLANKLINE>
        [writer] Draft (writer): Go in May.
        <BLANKLINE>
        Summary: Go in May.
    """
    first = sentences(work.task)[:1] or [work.task]
    parts = [f"Answer ({name}) to: {first[0]}"]
    if own:
        parts.append(own)
    parts += [f"[{agent}] {text}" for agent, text in work.inputs.items()]
    pool = [s for s in content(work.inputs.values()) if s not in first and s.endswith((".", "!", "?"))]
    summary = extract("\n".join(pool), limit=2)
    if summary:
        parts.append("Summary: " + " ".join(summary))
    return "\n\n".join(parts)
