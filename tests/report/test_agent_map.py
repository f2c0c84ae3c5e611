"""The agent map of a report is drawn the same in every process, whatever the string hash seed.

Idle agents sit in a row along the bottom; the agents that talked are laid out by NetworkX
(Kamada-Kawai from a circle, in node order). When the idle agents outnumbered the others, the
subgraph of the talking ones came in the order of a set, so the same evaluation drew another
picture under another ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import os
import subprocess
import sys

from coordbench.graph.metrics.result import AgentSummary, EdgeSummary
from coordbench.report.svg import agent_graph_svg

_DRAW = """
from coordbench.graph.metrics.result import AgentSummary, EdgeSummary
from coordbench.report.svg import agent_graph_svg
names = ["planner", "coder", "tester", "writer"] + [f"idle-{k}" for k in range(6)]
agents = [AgentSummary(name=n, role="agent", requests=1, calls=1, errors=0, tool_calls=0, tool_time_ms=0.0)
          for n in names]
edges = [EdgeSummary(caller=a, callee=b, count=1, errors=0, polls=0, latency_mean_ms=1.0, latency_p50_ms=1.0,
                     latency_max_ms=1.0) for a, b in [("planner", "coder"), ("coder", "tester"), ("tester", "writer")]]
print(agent_graph_svg(agents, edges, isolated=[n for n in names if n.startswith("idle")]))
"""


def test_the_agent_map_is_the_same_under_every_hash_seed() -> None:
    drawn = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _DRAW], env=env, capture_output=True, text=True, check=True,
                              timeout=120)  # fmt: skip
        drawn.add(done.stdout)
    assert len(drawn) == 1
    # and the picture is the one this process draws (it is not empty: every agent is in it)
    agents = [
        AgentSummary(name=n, role="agent", requests=1, calls=1, errors=0, tool_calls=0, tool_time_ms=0.0)
        for n in ["planner", "coder", "tester", "writer"] + [f"idle-{k}" for k in range(6)]
    ]
    svg = drawn.pop()
    assert all(f'data-agent="{a.name}"' in svg for a in agents)
    edges = [
        EdgeSummary(caller=a, callee=b, count=1, errors=0, polls=0, latency_mean_ms=1.0, latency_p50_ms=1.0,
                    latency_max_ms=1.0)
        for a, b in [("planner", "coder"), ("coder", "tester"), ("tester", "writer")]
    ]  # fmt: skip
    here = agent_graph_svg(agents, edges, isolated=[a.name for a in agents if a.name.startswith("idle")])
    assert svg == str(here) + "\n"
