"""Agents: the one factory and the tool agents the Supervisor calls."""

from .factory import ENGINEERED, ContextPolicy, build_agent
from .tool_agents import make_agent_tools, run_tool_agent

__all__ = ["ENGINEERED", "ContextPolicy", "build_agent", "make_agent_tools", "run_tool_agent"]
