"""StepTree: virtual root and orphans, critical path, parallelism."""

from __future__ import annotations

from coordbench.graph import VIRTUAL_ROOT, StepTree
from coordbench.steps import CallType
from support.spans import sid, span


def test_orphans_hang_under_the_virtual_root() -> None:
    tree = StepTree([span("root", span_id=sid(1)), span("lost child", span_id=sid(2), parent=sid(99))])
    assert tree.roots == [sid(1)] and tree.orphans == [sid(2)]
    assert tree.parent_of(sid(2)) == VIRTUAL_ROOT == tree.parent_of(sid(1))
    assert tree.step(sid(2)).call_type is CallType.HOST
    assert tree.depth() == 1


def test_critical_path_of_sequential_and_nested_work() -> None:
    # root A 0..100; B 0..30 then C 40..100, inside C a tool step of D 50..90
    spans = [
        span("a", span_id=sid(1), start_ms=0, end_ms=100, service="A"),
        span("b", span_id=sid(2), parent=sid(1), start_ms=0, end_ms=30, service="B"),
        span("c", span_id=sid(3), parent=sid(1), start_ms=40, end_ms=100, service="C"),
        span("d", span_id=sid(4), parent=sid(3), start_ms=50, end_ms=90, service="D"),
    ]
    path = StepTree(spans).critical_path()
    # walking back: C covers 100..40 (its own 100..90 and 50..40 = 20, D 90..50 = 40), A 40..30, B 30..0
    assert path.length_ms == 100
    assert path.by_agent_ms == {"A": 10.0, "B": 30.0, "C": 20.0, "D": 40.0}
    assert sum(end - start for _, _, start, end in path.segments) == 100 * 1_000_000


def test_critical_path_with_clock_skew_stays_inside_the_root() -> None:
    """Hosts whose clocks disagree: children starting before or ending after their parent.

    Root R 0..100; its child X 5..105 ends after it; X's children are Y 20..200 and Z -30..-10
    (wholly before X); Y's child W -50..60 starts before everyone. Each child is clipped to the
    window of its parent the walk is in: X to 5..100, Y to 20..100, W to 20..60, and Z is not
    on the path. Unclipped, W was credited from -50 and the agents' times summed past the root.
    """
    spans = [
        span("r", span_id=sid(1), start_ms=0, end_ms=100, service="R"),
        span("x", span_id=sid(2), parent=sid(1), start_ms=5, end_ms=105, service="X"),
        span("y", span_id=sid(3), parent=sid(2), start_ms=20, end_ms=200, service="Y"),
        span("z", span_id=sid(4), parent=sid(2), start_ms=-30, end_ms=-10, service="Z"),
        span("w", span_id=sid(5), parent=sid(3), start_ms=-50, end_ms=60, service="W"),
    ]
    path = StepTree(spans).critical_path()
    # walking back from 100: Y 100..60 (40), W 60..20 (40), X 20..5 (15), R 5..0 (5)
    assert path.length_ms == 100
    assert path.by_agent_ms == {"R": 5.0, "W": 40.0, "X": 15.0, "Y": 40.0}
    assert sum(end - start for _, _, start, end in path.segments) == 100 * 1_000_000


def test_parallel_children_only_the_longest_is_critical() -> None:
    spans = [
        span("a", span_id=sid(1), start_ms=0, end_ms=100, service="A"),
        span("b", span_id=sid(2), parent=sid(1), start_ms=10, end_ms=60, service="B"),
        span("c", span_id=sid(3), parent=sid(1), start_ms=10, end_ms=90, service="C"),
    ]
    tree = StepTree(spans)
    assert tree.critical_path().by_agent_ms == {"A": 20.0, "C": 80.0}
    # self times: A 100 - union(10..90) = 20, B 50, C 80 → 150 / 100
    assert tree.parallelism() == 1.5


def test_deep_trees_and_empty_trees() -> None:
    spans = [span("s0", span_id=sid(1), start_ms=0, end_ms=5000)]
    for i in range(1, 3000):
        spans.append(span(f"s{i}", span_id=sid(i + 1), parent=sid(i), start_ms=i, end_ms=5000 - i))
    tree = StepTree(spans)
    assert tree.critical_path().length_ms == 5000
    assert tree.depth() == 3000
    empty = StepTree([])
    assert (empty.parallelism(), empty.critical_path().length_ms, empty.depth()) == (0.0, 0.0, 0)
