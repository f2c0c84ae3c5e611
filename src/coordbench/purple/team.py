"""A purple team: its members, who delegates to whom, how, and the faults some members have.

A team comes from a TOML file (``data/teams/*.toml``) or is built from a shape name::

    [team]
    name = "star"
    entry = "coordinator"            # the member the assessor hands the task to

    [[members]]
    name = "coordinator"
    role = "coordinator"
    delegates = ["researcher", "analyst", "writer"]
    mode = "parallel"                # parallel | serial | chain | react | groupchat | handoff
    select = "order"                 # order | model: who speaks next (react, groupchat, handoff)

    [[members]]
    name = "researcher"
    role = "researcher"
    delay = 0.0                      # faults: a slow member (seconds), one that fails
    fail = "none"                    # none | raise | failed
    export = true                    # false: a member that exports no spans

Shapes (:data:`SHAPES`): ``star`` (the hub delegates to all), ``chain`` (a pipeline whose first
worker is the entry), ``tree``
(coordinator, leads, workers), ``mesh`` (specialists consult each other), ``bottleneck``
(everything funnels through one relay, which works one request at a time), ``isolated`` (a
registered member nobody calls), each with ``size`` workers. The shapes agent frameworks produce
(:data:`FRAMEWORK_SHAPES`), each call decided on the last answer by a step of the caller's own (a
model's choice with ``select = "model"`` and a model configured, else the rules): ``react`` (an
orchestrator calls one member, reads the answer, decides, and calls the next, handing on what it
learned), ``groupchat`` (a manager hands each speaker the conversation so far), ``handoff`` (each
member does its part and hands the work on to the next).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coordbench.errors import CoordbenchError, describe_validation_error
from coordbench.purple.roles import ROLES
from coordbench.purple.shapes import ALL_SHAPES, FRAMEWORK_SHAPES, SHAPES

__all__ = ["ALL_SHAPES", "FRAMEWORK_SHAPES", "SHAPES", "Member", "Team", "TeamFileError", "load_team", "team_for_shape"]

WORKER_ROLES = ("researcher", "analyst", "writer", "reviewer")
_NAME = r"^[a-z][a-z0-9-]{0,62}$"


class TeamFileError(CoordbenchError, ValueError):
    """A team file cannot be read or does not describe a consistent team; the message says why."""

    default_message = "invalid team file"


class Member(BaseModel):
    """One agent of the team.

    Attributes:
        name: Its name (its agent card's, and its role in an assessment request).
        role: What it does (:data:`~coordbench.purple.roles.ROLES`).
        delegates: Members it hands work to, in order.
        consults: Members it asks for a second opinion on its own work (one hop, no further).
        mode: How it delegates: side by side, one after another, as a chain (each
            delegate gets the previous one's work), as a ReAct orchestrator (one delegate at a
            time, the next decided on the last answer, which it hands on), as a group chat's
            manager (each delegate in turn gets the conversation so far), or as a handoff
            (its own part done, it decides whom to hand the work on to).
        select: How the next delegate is chosen in ``react``, ``groupchat`` and ``handoff``:
            ``order`` (the rules: the next in the list) or ``model`` (the configured model picks,
            the rules when it cannot).
        rounds: Turns each speaker gets in a group chat.
        delay: Seconds it waits before working (a slow member).
        fail: ``raise`` (its executor raises), ``failed`` (it answers a failed task), or ``none``.
        export: Whether it exports its spans (``false``: a member that exports nothing).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME)
    role: str
    delegates: list[str] = Field(default_factory=list[str], max_length=32)
    consults: list[str] = Field(default_factory=list[str], max_length=32)
    mode: Literal["parallel", "serial", "chain", "react", "groupchat", "handoff"] = "parallel"
    select: Literal["order", "model"] = "order"
    rounds: int = Field(default=1, ge=1, le=8)
    delay: float = Field(default=0.0, ge=0, le=600)
    fail: Literal["none", "raise", "failed"] = "none"
    export: bool = True

    @model_validator(mode="after")
    def _known_role(self) -> Member:
        if self.role not in ROLES:
            raise ValueError(f"member {self.name!r}: unknown role {self.role!r} (known: {', '.join(ROLES)})")
        return self


class Team(BaseModel):
    """A team of members, one of them the entry the assessor hands tasks to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME)
    description: str = ""
    entry: str
    members: list[Member] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _consistent(self) -> Team:
        names = [m.name for m in self.members]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"member names must be unique; repeated: {', '.join(repeated)}")
        if self.entry not in names:
            raise ValueError(f"entry {self.entry!r} is not a member ({', '.join(names)})")
        for member in self.members:
            for other in member.delegates + member.consults:
                if other not in names:
                    raise ValueError(f"member {member.name!r} names {other!r}, which is not a member")
                if other == member.name:
                    raise ValueError(f"member {member.name!r} cannot delegate to or consult itself")
        return self

    def member(self, name: str) -> Member:
        """The member called ``name``.

        Raises:
            KeyError: If there is none.
        """
        for member in self.members:
            if member.name == name:
                return member
        raise KeyError(name)

    @property
    def called(self) -> set[str]:
        """Members some other member delegates to or consults, and the entry."""
        return {self.entry} | {n for m in self.members for n in (*m.delegates, *m.consults)}


def load_team(path: Path) -> Team:
    """Read a team from a TOML file.

    Raises:
        TeamFileError: If the file cannot be read, is not TOML, or describes an inconsistent team.
    """
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TeamFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TeamFileError(f"{path} is not TOML: {exc}") from exc
    header = document.get("team", {})
    try:
        return Team.model_validate({**header, "members": document.get("members", [])})
    except ValidationError as exc:
        raise TeamFileError(f"{path}: {describe_validation_error(exc, whole='team')}") from exc


def _workers(size: int) -> list[Member]:
    out: list[Member] = []
    for i in range(size):
        role = WORKER_ROLES[i % len(WORKER_ROLES)]
        name = role if i < len(WORKER_ROLES) else f"{role}-{i // len(WORKER_ROLES) + 1}"
        out.append(Member(name=name, role=role))
    return out


def team_for_shape(shape: str, size: int = 3, *, select: Literal["order", "model"] = "order") -> Team:
    """The team of a named shape with ``size`` workers (2 to 16).

    Args:
        shape: One of :data:`ALL_SHAPES`.
        size: Workers in the team.
        select: How the framework shapes' deciding members choose the next delegate
            (``model``: with the model ``PURPLE_LLM_*`` configure).

    Raises:
        ValueError: For an unknown shape or a size out of range.
    """
    if shape not in ALL_SHAPES:
        raise ValueError(f"unknown shape {shape!r}; known: {', '.join(ALL_SHAPES)}")
    if not 2 <= size <= 16:
        raise ValueError(f"size must be 2 to 16 workers, got {size}")
    workers = _workers(size)
    names = [w.name for w in workers]
    description = {
        "star": "a coordinator hands each worker its part, all at once, and merges the answers",
        "chain": "a pipeline: each worker builds on the previous one's work",
        "tree": "a coordinator, two leads, and the workers under each lead",
        "mesh": "specialists who also consult each other on their work",
        "bottleneck": "everything funnels through one relay, which serves one worker after another",
        "isolated": "a star with a registered member that nobody calls",
        "react": "an orchestrator calls one worker at a time, reads the answer, decides, and calls the next",
        "groupchat": "a manager hands each speaker in turn the conversation so far",
        "handoff": "each worker does its part, then decides whom to hand the work on to",
    }[shape]
    members: list[Member]
    if shape in ("star", "isolated"):
        members = [Member(name="coordinator", role="coordinator", delegates=names), *workers]
        if shape == "isolated":
            members.append(Member(name="observer", role="observer"))
    elif shape in ("react", "groupchat"):
        lead = "coordinator" if shape == "react" else "manager"
        members = [Member(name=lead, role="coordinator", delegates=names, mode=shape, select=select), *workers]
        return Team(name=shape, description=description, entry=lead, members=members)
    elif shape == "handoff":
        handing = [
            w.model_copy(update={"delegates": names[i + 1 :], "mode": "handoff", "select": select})
            for i, w in enumerate(workers)
        ]
        return Team(name=shape, description=description, entry=names[0], members=handing)
    elif shape == "chain":  # the first worker is the entry: a pipeline has no one passing the task along
        chained = [
            w.model_copy(update={"delegates": names[i + 1 : i + 2], "mode": "chain"}) for i, w in enumerate(workers)
        ]
        return Team(name=shape, description=description, entry=names[0], members=chained)
    elif shape == "tree":
        half = (size + 1) // 2
        groups = [("research-lead", names[:half]), ("writing-lead", names[half:])]
        leads = [Member(name=lead, role="lead", delegates=group, mode="chain") for lead, group in groups if group]
        members = [
            Member(name="coordinator", role="coordinator", delegates=[lead.name for lead in leads]),
            *leads,
            *workers,
        ]
    elif shape == "mesh":
        consulting = [w.model_copy(update={"consults": [names[(i + 1) % size]]}) for i, w in enumerate(workers)]
        members = [Member(name="coordinator", role="coordinator", delegates=names), *consulting]
    else:  # bottleneck
        relay = Member(name="relay", role="relay", delegates=names, mode="serial")
        members = [Member(name="coordinator", role="coordinator", delegates=["relay"]), relay, *workers]
    return Team(name=shape, description=description, entry="coordinator", members=members)
