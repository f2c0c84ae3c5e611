"""The purple team: configurable A2A participant agents for end-to-end runs (rule-based, model optional).

The names below are imported when first used, not with the package: ``coordbench demo --help``
and the fleet's members import only the modules they need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coordbench.lazy import lazy_exports

if TYPE_CHECKING:
    from coordbench.purple.agent import PurpleAgent
    from coordbench.purple.launcher import Fleet, TeamProcesses, TeamStartError
    from coordbench.purple.memory import ContextMemory, Remembered
    from coordbench.purple.roles import ROLES, Work
    from coordbench.purple.server import PurpleSettings, create_purple_app
    from coordbench.purple.team import (
        ALL_SHAPES,
        FRAMEWORK_SHAPES,
        SHAPES,
        Member,
        Team,
        TeamFileError,
        load_team,
        team_for_shape,
    )

_WHERE = {
    "PurpleAgent": "agent",
    "Fleet": "launcher",
    "TeamProcesses": "launcher",
    "TeamStartError": "launcher",
    "ContextMemory": "memory",
    "Remembered": "memory",
    "ROLES": "roles",
    "Work": "roles",
    "PurpleSettings": "server",
    "create_purple_app": "server",
    "SHAPES": "team",
    "ALL_SHAPES": "team",
    "FRAMEWORK_SHAPES": "team",
    "Member": "team",
    "Team": "team",
    "TeamFileError": "team",
    "load_team": "team",
    "team_for_shape": "team",
}

__all__ = [
    "ALL_SHAPES",
    "FRAMEWORK_SHAPES",
    "ROLES",
    "SHAPES",
    "ContextMemory",
    "Fleet",
    "Member",
    "PurpleAgent",
    "PurpleSettings",
    "Remembered",
    "Team",
    "TeamFileError",
    "TeamProcesses",
    "TeamStartError",
    "Work",
    "create_purple_app",
    "load_team",
    "team_for_shape",
]


__getattr__ = lazy_exports(__name__, _WHERE)
