"""The purple team: configurable A2A participant agents for end-to-end runs (rule-based, model optional)."""

from coordbench.purple.agent import PurpleAgent
from coordbench.purple.launcher import TeamProcesses, TeamStartError
from coordbench.purple.memory import ContextMemory, Remembered
from coordbench.purple.roles import ROLES, Work
from coordbench.purple.server import PurpleSettings, create_purple_app
from coordbench.purple.team import SHAPES, Member, Team, TeamFileError, load_team, team_for_shape

__all__ = [
    "ROLES",
    "SHAPES",
    "ContextMemory",
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
