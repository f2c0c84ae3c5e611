"""Testing helpers for A2A agent authors (the fixtures live in the ``coordbench`` pytest plugin).

- :class:`RecordingSpanExporter`: in-memory spans you can wait for and turn into a tree.
- :class:`~coordbench.spantree.SpanTree`: assert on parents, agents, calls and call chains.
- :class:`LoopbackServer`: serve an agent on a random 127.0.0.1 port for a test.
"""

from coordbench.loopback import LoopbackServer, bind_loopback
from coordbench.spans import SpanData, span_data_from_readable
from coordbench.spantree import AgentCall, SpanTree
from coordbench.testing.exporter import RecordingSpanExporter

__all__ = [
    "AgentCall",
    "LoopbackServer",
    "RecordingSpanExporter",
    "SpanData",
    "SpanTree",
    "bind_loopback",
    "span_data_from_readable",
]
