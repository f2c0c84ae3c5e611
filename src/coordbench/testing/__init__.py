"""Testing helpers for A2A agent authors (the fixtures live in the ``coordbench`` pytest plugin).

- :class:`RecordingSpanExporter`: in-memory spans you can wait for and turn into a tree.
- :class:`~coordbench.spantree.SpanTree`: assert on parents, agents, calls and call chains.
- :class:`LoopbackServer`: serve an agent on a random 127.0.0.1 port for a test.
- :func:`assert_coordination`, :func:`assert_no_regression`: judge a recorded trace's
  coordination, or hold it to a baseline (:mod:`coordbench.testing.coordination`; imported on
  first use, since it brings the evaluators and their numeric libraries).
"""

from typing import TYPE_CHECKING

from coordbench.lazy import lazy_exports
from coordbench.server.loopback import LoopbackServer, bind_loopback
from coordbench.spans import SpanData, span_data_from_readable
from coordbench.spantree import AgentCall
from coordbench.testing.exporter import RecordingSpanExporter
from coordbench.testing.tree import SpanTree

if TYPE_CHECKING:
    from coordbench.testing.coordination import (
        CoordinationAssertionError,
        assert_coordination,
        assert_no_regression,
        evaluate_coordination,
    )

__all__ = [
    "AgentCall",
    "CoordinationAssertionError",
    "LoopbackServer",
    "RecordingSpanExporter",
    "SpanData",
    "SpanTree",
    "assert_coordination",
    "assert_no_regression",
    "bind_loopback",
    "evaluate_coordination",
    "span_data_from_readable",
]

__getattr__ = lazy_exports(
    __name__,
    dict.fromkeys(
        ["CoordinationAssertionError", "assert_coordination", "assert_no_regression", "evaluate_coordination"],
        "coordination",
    ),
)
