"""Skills: drop-in ``SKILL.md`` folders, their catalog, ``skill_tool`` and the ``allowed-tools`` guard.

Only the catalog (names and descriptions) is put in a prompt; an agent loads a skill's full instructions with
``skill_tool`` when it needs them. See :mod:`insightloom.skills.catalog` for discovery and
:mod:`insightloom.skills.tool` for the tool and the guard.
"""

from insightloom.skills.catalog import (
    SKILL_NAME_RE,
    Skill,
    SkillCatalog,
    builtin_skills_dir,
    discover,
    discover_skills,
    is_valid_skill_name,
    skill_folders,
)
from insightloom.skills.tool import SKILL_TOOL_NAME, SkillToolGuard, make_skill_tool

__all__ = [
    "SKILL_NAME_RE",
    "SKILL_TOOL_NAME",
    "Skill",
    "SkillCatalog",
    "SkillToolGuard",
    "builtin_skills_dir",
    "discover",
    "discover_skills",
    "is_valid_skill_name",
    "make_skill_tool",
    "skill_folders",
]
