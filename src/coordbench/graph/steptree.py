"""The StepTree: a trace's call tree of traceability Steps, for path- and time-shaped measures.

Spans whose parent never arrived hang under a virtual root and are reported as orphans; the
tree stays usable (an incomplete trace still gets measured, and says so).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from coordbench.spans import SpanData
from coordbench.spantree import SpanTree
from coordbench.steps import Step, step_from_span

__all__ = ["VIRTUAL_ROOT", "CriticalPath", "StepTree"]


def _end_desc(span: SpanData) -> tuple[int, str]:
    return -span.end_time_unix_nano, span.span_id


VIRTUAL_ROOT = "virtual-root"
"""Parent id given to roots and orphans in :meth:`StepTree.parent_of`."""


@dataclass(frozen=True)
class CriticalPath:
    """The chain of work that set the trace's duration.

    Attributes:
        length_ms: Length of the critical path (the wall-clock span of the longest root).
        segments: ``(span_id, agent, start_ns, end_ns)`` pieces of the path, latest first.
        by_agent_ms: Critical-path milliseconds per agent, sorted by agent.
    """

    length_ms: float
    segments: tuple[tuple[str, str, int, int], ...]
    by_agent_ms: dict[str, float]


class StepTree:
    """Steps of one or more traces as a tree.

    Args:
        spans: The spans, or a :class:`~coordbench.spantree.SpanTree` of them.
    """

    def __init__(self, spans: Iterable[SpanData] | SpanTree) -> None:
        """Index the spans."""
        self.spans = spans if isinstance(spans, SpanTree) else SpanTree(spans)
        self._steps: dict[str, Step] = {}
        self._critical: CriticalPath | None = None

    @property
    def orphans(self) -> list[str]:
        """Step ids whose parent step never arrived."""
        return [s.span_id for s in self.spans.orphans]

    @property
    def roots(self) -> list[str]:
        """Step ids of true roots (no parent)."""
        return [s.span_id for s in self.spans.roots]

    def step(self, step_id: str) -> Step:
        """The Step with this id (converted from its span once).

        Raises:
            KeyError: For an unknown id.
        """
        step = self._steps.get(step_id)
        if step is None:
            span = self.spans.get(step_id)
            if span is None:
                raise KeyError(step_id)
            step = self._steps[step_id] = step_from_span(span)
        return step

    def steps(self) -> list[Step]:
        """Every step, by start time."""
        return [self.step(s.span_id) for s in self.spans.spans]

    def parent_of(self, step_id: str) -> str:
        """The parent step id; :data:`VIRTUAL_ROOT` for roots and orphans."""
        span = self.spans.get(step_id)
        if span is None:
            raise KeyError(step_id)
        parent = self.spans.parent(span)
        return parent.span_id if parent is not None else VIRTUAL_ROOT

    def depth(self) -> int:
        """Number of levels below the virtual root (0 for an empty tree)."""
        return max((d + 1 for d, _ in self.spans.walk()), default=0)

    def critical_path(self) -> CriticalPath:
        """The critical path of the longest root (roots and orphans both count).

        Walking back from the root's end, the last child to finish before the cursor is on
        the path: the gap between its end and the cursor is the parent's own time, then the
        walk continues inside that child, and after it from the child's start. Children
        that start after the cursor ran in the shadow of a longer sibling and are not on
        the path. So the segments tile the root's duration, and ``by_agent_ms`` says which
        agents the end-to-end latency waited for. Spans from hosts whose clocks disagree can
        start before their parent or end after it: each child is clipped to the part of its
        parent the walk is in, so the segments still tile the root and no agent is credited
        with time outside it.

        Example:
            >>> from coordbench.spans import SpanData, SpanKind
            >>> def s(i, parent, start, end, service):
            ...     return SpanData("ab" * 16, f"{i:016x}", parent and f"{parent:016x}", f"s{i}",
            ...                     SpanKind.INTERNAL, start, end, resource={"service.name": service})
            >>> # root 0..100 ms (A); two parallel children: B 10..40, C 10..90
            >>> ms = 1_000_000
            >>> tree = StepTree([s(1, None, 0, 100 * ms, "A"), s(2, 1, 10 * ms, 40 * ms, "B"),
            ...                  s(3, 1, 10 * ms, 90 * ms, "C")])
            >>> path = tree.critical_path()
            >>> path.length_ms, path.by_agent_ms
            (100.0, {'A': 20.0, 'C': 80.0})
        """
        if self._critical is None:  # walked once: the latency evaluator and the graph tier both ask
            self._critical = self._walk_critical_path()
        found = self._critical
        return CriticalPath(length_ms=found.length_ms, segments=found.segments, by_agent_ms=dict(found.by_agent_ms))

    def _walk_critical_path(self) -> CriticalPath:
        best: tuple[float, list[tuple[str, str, int, int]]] = (0.0, [])
        for top in self.spans.roots + self.spans.orphans:
            segments = self._critical_segments(top)
            length = (top.end_time_unix_nano - top.start_time_unix_nano) / 1e6
            if length > best[0] or not best[1]:
                best = (length, segments)
        by_agent: dict[str, float] = defaultdict(float)
        for _, agent, start, end in best[1]:
            by_agent[agent] += (end - start) / 1e6
        return CriticalPath(
            length_ms=max(0.0, best[0]),
            segments=tuple(best[1]),
            by_agent_ms={a: by_agent[a] for a in sorted(by_agent)},
        )

    def _critical_segments(self, top: SpanData) -> list[tuple[str, str, int, int]]:
        segments: list[tuple[str, str, int, int]] = []
        # Frames: (span, its agent, cursor to walk back from, its children latest-ending first, next
        # index, the earliest time the walk may reach in it: its start, clipped to its parent's window)
        stack: list[tuple[SpanData, str, int, Sequence[SpanData], int, int]] = []

        children_of = self.spans.children_of

        def push(span: SpanData, cursor: int, floor: int) -> None:
            kids = children_of(span.span_id)
            if len(kids) > 1:
                kids = sorted(kids, key=_end_desc)
            start = max(span.start_time_unix_nano, floor)
            stack.append((span, self.spans.agent_of(span) or "?", min(cursor, span.end_time_unix_nano), kids, 0, start))

        push(top, top.end_time_unix_nano, top.start_time_unix_nano)
        while stack:
            span, agent, cursor, kids, index, start = stack.pop()
            while index < len(kids):
                child = kids[index]
                index += 1
                child_end = min(child.end_time_unix_nano, cursor)
                if child_end <= start or child.start_time_unix_nano >= cursor:
                    continue
                if cursor > child_end:
                    segments.append((span.span_id, agent, child_end, cursor))
                # resume this span from the child's start once the child is done
                stack.append((span, agent, max(child.start_time_unix_nano, start), kids, index, start))
                push(child, child_end, start)
                break
            else:
                if cursor > start:
                    segments.append((span.span_id, agent, start, cursor))
        return segments

    def self_time_ns(self, step_id: str) -> int:
        """A step's own time: its duration minus the union of its children's intervals (clipped to it).

        Raises:
            KeyError: For an unknown id.
        """
        span = self.spans.get(step_id)
        if span is None:
            raise KeyError(step_id)
        return self._self_time(span)

    def _self_time(self, span: SpanData) -> int:
        start, end = span.start_time_unix_nano, span.end_time_unix_nano
        covered = 0
        cursor = start
        # children come sorted by start, and clipping to the parent keeps that order
        for child in self.spans.children_of(span.span_id):
            c_start, c_end = max(child.start_time_unix_nano, start), min(child.end_time_unix_nano, end)
            if c_end <= cursor:
                continue
            covered += c_end - max(c_start, cursor)
            cursor = c_end
        return max(0, (end - start) - covered)

    def parallelism(self) -> float:
        """Average number of steps working at once: Σ self time / wall time.

        A step's self time is its duration minus the union of its children's intervals
        (clipped to it). 1.0 means strictly sequential work; 2.0 means two steps were busy
        at any moment on average. 0.0 for an empty tree.

        Example:
            >>> from coordbench.spans import SpanData, SpanKind
            >>> def s(i, parent, start, end):
            ...     return SpanData("ab" * 16, f"{i:016x}", parent and f"{parent:016x}", f"s{i}",
            ...                     SpanKind.INTERNAL, start, end)
            >>> # root 0..100 with two children running side by side over 0..100: 200 / 100
            >>> StepTree([s(1, None, 0, 100), s(2, 1, 0, 100), s(3, 1, 0, 100)]).parallelism()
            2.0
        """
        spans = self.spans.ordered()
        if not spans:
            return 0.0
        wall = max(s.end_time_unix_nano for s in spans) - min(s.start_time_unix_nano for s in spans)
        if wall <= 0:
            return 0.0
        total = sum(self._self_time(span) for span in spans)
        return total / wall
