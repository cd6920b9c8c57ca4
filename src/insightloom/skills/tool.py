"""``skill_tool`` and the guard that enforces a loaded skill's ``allowed-tools``.

Strands documents ``allowed-tools`` as parsed but not enforced, so we enforce it with a hook: once an agent has loaded
a skill that declares ``allowed-tools``, a call to any other tool is cancelled with a message the model can act on.
The restriction is per agent (kept in ``agent.state``) and lasts while the skill can still be in the agent's context:
it is cleared when the agent starts an invocation with an empty history.
"""

from __future__ import annotations

import logging
from typing import Any

from strands import tool
from strands.hooks import AfterToolCallEvent, BeforeInvocationEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.types.tools import AgentTool

from insightloom.skills.catalog import SkillCatalog

logger = logging.getLogger(__name__)

SKILL_TOOL_NAME = "skill_tool"
#: Key in ``agent.state`` holding the names of the skills the agent has loaded, in load order.
STATE_KEY = "insightloom_loaded_skills"


def make_skill_tool(catalog: SkillCatalog) -> tuple[AgentTool, SkillToolGuard]:
    """Build the ``skill_tool`` for an agent and the guard that enforces ``allowed-tools``.

    Build one pair per agent: pass the tool in ``tools=`` and the guard in ``hooks=``.

    Args:
        catalog: The job's skill catalog (its ``prompt_block()`` is what the agent's prompt lists).

    Returns:
        ``(tool, guard)``.
    """

    @tool(name=SKILL_TOOL_NAME)
    def skill_tool(skill_name: str) -> str:
        """Load the full instructions of a skill listed in the skills catalog of your prompt.

        Load a skill before the work it covers, and follow its instructions. Some skills restrict which tools you may
        call while they are loaded.

        Args:
            skill_name: The skill's name exactly as listed in the catalog, e.g. "duckdb-checks".
        """
        skill = catalog.get(skill_name)  # UnknownSkillError -> an error tool result naming the available skills
        logger.info("Skill %s loaded (allowed tools: %s)", skill.name, skill.allowed_tools or "any")
        header = f"# Skill: {skill.name}\n"
        if skill.allowed_tools:
            allowed = ", ".join(sorted({*skill.allowed_tools, SKILL_TOOL_NAME}))
            header += f"While this skill is loaded you may call only these tools: {allowed}.\n"
        return f"{header}\n{skill.body}"

    return skill_tool, SkillToolGuard(catalog)


class SkillToolGuard(HookProvider):
    """Cancels tool calls that a loaded skill's ``allowed-tools`` does not permit.

    With several restricting skills loaded, a tool must be allowed by every one of them: each skill's restriction
    holds while it is loaded. ``skill_tool`` itself is always allowed.

    Args:
        catalog: The catalog the agent's ``skill_tool`` loads from.
    """

    def __init__(self, catalog: SkillCatalog) -> None:
        self._catalog = catalog

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Subscribe to the invocation and tool-call events of the agent."""
        registry.add_callback(BeforeInvocationEvent, self._on_invocation)
        registry.add_callback(BeforeToolCallEvent, self._before_tool)
        registry.add_callback(AfterToolCallEvent, self._after_tool)

    @staticmethod
    def loaded_skills(agent: Any) -> list[str]:
        """Return the skills ``agent`` has loaded successfully, in load order."""
        return list(agent.state.get(STATE_KEY) or [])

    @staticmethod
    def reset(agent: Any) -> None:
        """Forget the skills ``agent`` loaded (for callers that reuse an agent with a fresh context)."""
        agent.state.delete(STATE_KEY)

    def _on_invocation(self, event: BeforeInvocationEvent) -> None:
        # A fresh history means no skill body is in context any more, so its restriction no longer applies.
        if not event.agent.messages and self.loaded_skills(event.agent):
            logger.debug("Agent %s starts with an empty history; clearing loaded skills.", event.agent.name)
            self.reset(event.agent)

    def _after_tool(self, event: AfterToolCallEvent) -> None:
        if event.tool_use.get("name") != SKILL_TOOL_NAME:
            return
        result = event.result
        if not isinstance(result, dict) or result.get("status") != "success":
            return
        name = (event.tool_use.get("input") or {}).get("skill_name")
        if not isinstance(name, str) or name not in self._catalog:
            return
        loaded = self.loaded_skills(event.agent)
        if name not in loaded:
            loaded.append(name)
            event.agent.state.set(STATE_KEY, loaded)

    def _before_tool(self, event: BeforeToolCallEvent) -> None:
        tool_name = event.tool_use.get("name", "")
        if tool_name == SKILL_TOOL_NAME:
            return
        blocking = self._blocking_skills(event.agent, tool_name)
        if not blocking:
            return
        detail = "; ".join(f"skill '{name}' allows only: {', '.join(tools)}" for name, tools in blocking)
        message = (
            f"Tool '{tool_name}' is not allowed while these skills are loaded: {detail} (skill_tool is always "
            f"allowed). Use an allowed tool instead."
        )
        logger.warning("Cancelled %s for agent %s: %s", tool_name, event.agent.name, detail)
        event.cancel_tool = message

    def _blocking_skills(self, agent: Any, tool_name: str) -> list[tuple[str, tuple[str, ...]]]:
        """Return (skill, allowed tools) for each loaded skill whose ``allowed-tools`` excludes ``tool_name``."""
        blocking: list[tuple[str, tuple[str, ...]]] = []
        for name in self.loaded_skills(agent):
            if name not in self._catalog:
                continue
            allowed = self._catalog.get(name).allowed_tools
            if allowed is not None and tool_name not in allowed:
                blocking.append((name, allowed))
        return blocking
