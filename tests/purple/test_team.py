"""Team shapes, team files and their errors, the message memory, and the rule-based roles."""

from __future__ import annotations

from pathlib import Path

import pytest

from coordbench.purple import SHAPES, ContextMemory, Remembered, TeamFileError, Work, load_team, team_for_shape
from coordbench.purple.roles import contribute, merge, subtask

TEAMS = Path(__file__).parent.parent.parent / "data" / "teams"


@pytest.mark.parametrize(
    ("shape", "entry", "edges"),
    [
        ("star", "coordinator", {("coordinator", "researcher"), ("coordinator", "analyst"), ("coordinator", "writer")}),
        ("chain", "researcher", {("researcher", "analyst"), ("analyst", "writer")}),
        ("tree", "coordinator", {("coordinator", "research-lead"), ("coordinator", "writing-lead"),
                                 ("research-lead", "researcher"), ("research-lead", "analyst"),
                                 ("writing-lead", "writer")}),
        ("mesh", "coordinator", {("coordinator", "researcher"), ("coordinator", "analyst"), ("coordinator", "writer"),
                                 ("researcher", "analyst"), ("analyst", "writer"), ("writer", "researcher")}),
        ("bottleneck", "coordinator", {("coordinator", "relay"), ("relay", "researcher"), ("relay", "analyst"),
                                       ("relay", "writer")}),
        ("isolated", "coordinator", {("coordinator", "researcher"), ("coordinator", "analyst"),
                                     ("coordinator", "writer")}),
    ],
)  # fmt: skip
def test_each_shape_has_its_structure_and_its_file(shape: str, entry: str, edges: set[tuple[str, str]]) -> None:
    team = team_for_shape(shape)
    assert team.entry == entry
    assert {(m.name, d) for m in team.members for d in (*m.delegates, *m.consults)} == edges
    assert load_team(TEAMS / f"{shape}.toml") == team  # the shipped file is the same team
    if shape == "isolated":
        assert team.member("observer").role == "observer" and "observer" not in team.called
    if shape == "bottleneck":
        assert team.member("relay").mode == "serial"


def test_sizes_and_the_fault_files() -> None:
    assert [m.name for m in team_for_shape("star", 6).members][1:] == [
        "researcher", "analyst", "writer", "reviewer", "researcher-2", "analyst-2",
    ]  # fmt: skip
    assert load_team(TEAMS / "star-slow.toml").member("writer").delay == 2.0
    assert load_team(TEAMS / "star-failing.toml").member("writer").fail == "failed"
    assert load_team(TEAMS / "star-silent.toml").member("writer").export is False
    assert set(SHAPES) <= {p.stem for p in TEAMS.glob("*.toml")}
    with pytest.raises(ValueError, match="unknown shape 'ring'; known: star, chain"):
        team_for_shape("ring")
    with pytest.raises(ValueError, match="size must be 2 to 16 workers, got 1"):
        team_for_shape("star", 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[team\nname=", "is not TOML"),
        ('[team]\nname = "t"\nentry = "a"\n[[members]]\nname = "a"\nrole = "wizard"', "unknown role 'wizard'"),
        ('[team]\nname = "t"\nentry = "b"\n[[members]]\nname = "a"\nrole = "writer"', "entry 'b' is not a member"),
        ('[team]\nname = "t"\nentry = "a"\n[[members]]\nname = "a"\nrole = "writer"\ndelegates = ["z"]',
         "member 'a' names 'z', which is not a member"),
        ('[team]\nname = "t"\nentry = "a"\n[[members]]\nname = "a"\nrole = "writer"\ndelegates = ["a"]',
         "cannot delegate to or consult itself"),
        ('[team]\nname = "t"\nentry = "a"\n[[members]]\nname = "a"\nrole = "writer"\n[[members]]\nname = "a"\n'
         'role = "analyst"', "repeated: a"),
        ('[team]\nname = "t"\nentry = "a"\n[[members]]\nname = "a"\nrole = "writer"\nfail = "sometimes"',
         "members.0.fail"),
    ],
)  # fmt: skip
def test_a_bad_team_file_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "team.toml"
    path.write_text(text)
    with pytest.raises(TeamFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_team(path)
    with pytest.raises(TeamFileError, match="cannot read"):
        load_team(tmp_path / "missing.toml")


def test_memory_keeps_contexts_apart_and_bounded() -> None:
    now = [0.0]
    memory = ContextMemory(max_messages=3, max_contexts=2, max_age=10.0, clock=lambda: now[0])
    for i in range(5):
        memory.add("a", Remembered(text=f"a{i}"))
    assert [m.text for m in memory.messages("a")] == ["a2", "a3", "a4"]  # the oldest go first
    memory.add("b", Remembered(text="b0"))
    assert [m.text for m in memory.messages("b")] == ["b0"]  # nothing of a's
    memory.add("c", Remembered(text="c0"))  # a third context: the least recently used (a) goes
    assert memory.messages("a") == [] and len(memory) == 2
    now[0] = 11.0
    assert memory.messages("b") == [] and memory.messages("c") == []  # idle longer than max_age
    with pytest.raises(ValueError, match="max_messages"):
        ContextMemory(max_messages=0)


TASK = (
    "Plan the launch of the mobile app. The budget is 40,000 and the deadline is 2026-12-01. "
    "Marketing depends on the design team. Testing may slip if the devices arrive late."
)


def test_roles_write_task_dependent_text() -> None:
    research = contribute("researcher", "researcher", Work(TASK))
    assert research.startswith("Findings (researcher):")
    assert "Testing may slip if the devices arrive late." in research
    analysis = contribute("analyst", "analyst", Work(TASK))
    assert "Figures: 40,000, 2026-12-01" in analysis
    assert "- Marketing depends on the design team." in analysis  # a dependency is a risk
    other = contribute("analyst", "analyst", Work("Review the paper on graph metrics. It has 3 figures."))
    assert other != analysis and "Figures: 3" in other
    draft = contribute("writer", "writer", Work(TASK, inputs={"researcher": research, "analyst": analysis}))
    assert draft.startswith("Draft (writer):\nThis answer addresses")
    review = contribute("reviewer", "reviewer", Work(TASK, inputs={"writer": draft}))
    assert review.startswith("Review (reviewer):\nCovers: ") and "Verdict: " in review
    empty = contribute("reviewer", "reviewer", Work(TASK))
    assert "No draft was shared" in empty
    answer = merge("coordinator", Work(TASK, inputs={"researcher": research, "writer": draft}))
    assert answer.startswith("Answer (coordinator) to: Plan the launch of the mobile app.")
    assert "[researcher] Findings" in answer and "Summary: " in answer
    assert contribute("analyst", "analyst", Work(TASK)) == analysis  # deterministic


def test_the_reviewer_reads_the_draft_handed_along_with_its_request() -> None:
    """A chain or a consult puts the draft in the request itself (``subtask(..., carry=)``, as the agent builds it).

    The reviewer used to look only at its delegates' answers and the conversation, and answered
    "No draft was shared" in chain and mesh teams of four or more.
    """
    research = contribute("researcher", "researcher", Work(TASK))
    draft = contribute("writer", "writer", Work(TASK, inputs={"researcher": research}))
    handed = subtask("reviewer", TASK, carry=f"[researcher] {research}\n[writer] {draft}")
    review = contribute("reviewer", "reviewer", Work(TASK, asked=handed))
    assert "No draft was shared" not in review
    # the draft it measured is the writer's, not the research before it
    length = len(draft.split())
    assert f"Length: {length} words" in review
    # a model-written draft has another header; the reviewer finds it too
    written = "Writer (writer, qwen2.5-coder-0.5b):\nThe launch needs owners, a timeline and a budget of 40,000."
    review = contribute("reviewer", "reviewer", Work(TASK, asked=subtask("reviewer", TASK, carry=written)))
    assert "No draft was shared" not in review and f"Length: {len(written.split())} words" in review
