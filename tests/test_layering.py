"""The floors of ``docs/architecture.md``, held against every import in ``src/``.

The table under ``<!-- floors -->`` in docs/architecture.md is the data: each row is a floor
and the rooms on it (a module or package of ``coordbench``, or a module of a package that
stands on a floor of its own). Every ``import`` and ``from ... import`` in ``src/coordbench``
(at module level, in functions, under ``TYPE_CHECKING``: all of them) is read with ``ast`` and
must go to a room on the same floor or below; rooms must not import each other in a circle;
the light part of the package (what an agent author imports to trace an agent) must not reach
FastAPI, networkx, numpy or openai through any import of ours.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "coordbench"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

LIGHT = ("instrument", "steps", "semconv", "spans", "spantree")
"""What an agent author imports to trace an agent: OpenTelemetry and a2a-sdk only."""
HEAVY = ("fastapi", "networkx", "numpy", "openai")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, ast.Module]:
    """Every module of the package, parsed, by dotted name."""
    return {_module(p): ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in sorted(SRC.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The module of ours that ``name`` (a module, or a name imported from one) is, if any."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports() -> Iterator[Import]:
    """Every import of one of our modules by another, with its line."""
    for source, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{source}:{node.lineno}: a relative import (absolute imports only)"
                base = node.module or ""
                if base == "coordbench" or base.startswith("coordbench."):
                    for alias in node.names:
                        target = _resolve(f"{base}.{alias.name}")
                        if target is not None and target != source:
                            yield Import(source, target, node.lineno)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "coordbench" or alias.name.startswith("coordbench."):
                        target = _resolve(alias.name)
                        if target is not None and target != source:
                            yield Import(source, target, node.lineno)


def floors() -> dict[str, int]:
    """The rooms of the table in docs/architecture.md, each with its floor."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    match = re.search(r"<!-- floors -->\n(.*?)\n\n", text, re.S)
    assert match is not None, "docs/architecture.md lost its floors table (<!-- floors --> and the table after it)"
    rooms: dict[str, int] = {}
    for row in match.group(1).splitlines()[2:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        floor = int(cells[0].split()[0])
        for name in re.findall(r"`([^`]+)`", cells[1]):
            assert name not in rooms, f"room {name} stands on two floors"
            rooms[name] = floor
    return rooms


def room_of(module: str, rooms: dict[str, int]) -> str:
    """The most specific room holding ``module`` (``coordbench`` itself is the room ``__init__``)."""
    name = module.removeprefix("coordbench").removeprefix(".") or "__init__"
    while name not in rooms:
        assert "." in name, f"{module} is in no room of docs/architecture.md's floors table"
        name = name.rpartition(".")[0]
    return name


def test_every_module_is_on_a_floor_and_every_room_exists() -> None:
    rooms = floors()
    for module in modules():
        room_of(module, rooms)
    names = {m.removeprefix("coordbench").removeprefix(".") or "__init__" for m in modules()}
    stale = sorted(r for r in rooms if not any(n == r or n.startswith(r + ".") for n in names))
    assert stale == [], f"rooms in the table that the code no longer has: {stale}"


def upward(found: list[Import], rooms: dict[str, int]) -> list[str]:
    """The imports that run up a floor, in words."""
    out: list[str] = []
    for one in found:
        source, target = room_of(one.source, rooms), room_of(one.target, rooms)
        if source != target and rooms[target] > rooms[source]:
            out.append(f"{one.source}:{one.line} (floor {rooms[source]}) imports {one.target} (floor {rooms[target]})")
    return out


def circles(found: list[Import], rooms: dict[str, int]) -> list[list[str]]:
    """The circles of rooms importing each other."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    for one in found:
        source, target = room_of(one.source, rooms), room_of(one.target, rooms)
        if source != target:
            graph.add_edge(source, target)
    return sorted(sorted(c) for c in nx.simple_cycles(graph))


def test_no_import_runs_up_a_floor() -> None:
    assert upward(list(imports()), floors()) == [], "imports that run up a floor:\n" + "\n".join(
        upward(list(imports()), floors())
    )


def test_rooms_import_each_other_in_no_circle() -> None:
    assert circles(list(imports()), floors()) == []


def test_packages_taken_whole_import_each_other_in_no_circle() -> None:
    """Each top-level package as one room (``server`` whole, ``clickhouse`` whole): still no circle."""
    whole = {name.split(".")[0]: 0 for name in floors()}
    assert circles(list(imports()), whole) == []


def test_the_checks_see_an_upward_import_and_a_circle() -> None:
    """The upward imports this floor plan ended, put back, are caught, each by the check that owns it."""
    rooms = floors()
    found = list(imports())
    back = [
        Import("coordbench.settings", "coordbench.clickhouse.connection", 1),  # settings on the store engine
        Import("coordbench.online.job", "coordbench.green.request", 1),  # the evaluation config in the assessor
    ]
    assert [line.split(":")[0] for line in upward(found + back, rooms)] == [
        "coordbench.settings",
        "coordbench.online.job",
    ]
    meters_on_the_job = [Import("coordbench.meters", "coordbench.online.job", 1)]  # meters read the job's type
    assert circles(found + meters_on_the_job, rooms) == [["meters", "online"]]


def _third_party(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("light", LIGHT)
def test_the_light_part_reaches_no_heavy_dependency(light: str) -> None:
    """Everything an agent author's import reaches, through our own imports, imports none of the heavy packages."""
    graph: dict[str, set[str]] = {}
    for found in imports():
        graph.setdefault(found.source, set()).add(found.target)
    start = [m for m in modules() if m == f"coordbench.{light}" or m.startswith(f"coordbench.{light}.")]
    seen: dict[str, str] = {m: m for m in start}  # module -> the light module it was reached from
    todo = list(start)
    while todo:
        module = todo.pop()
        for target in graph.get(module, ()):
            if target not in seen:
                seen[target] = seen[module]
                todo.append(target)
    heavy = sorted(
        f"{module} (reached from {seen[module]}) imports {package}"
        for module in seen
        for package in _third_party(modules()[module]) & set(HEAVY)
    )
    assert heavy == [], "\n".join(heavy)
