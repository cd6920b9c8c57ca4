"""``handoff_to_planner``: the Coordinator passes an analysis request on."""

from __future__ import annotations

from strands import tool
from strands.types.tools import AgentTool

from ..runtime import JobRuntime


def make_handoff(rt: JobRuntime) -> AgentTool:
    @tool(name="handoff_to_planner")
    def handoff_to_planner(reason: str) -> str:
        """Hand a data-analysis request to the Planner. Use it for any request about the attached data.

        Args:
            reason: One sentence on why this needs an analysis plan.
        """
        rt.handoff = reason or "analysis requested"
        return "Handed off to the Planner. Reply with one short sentence and stop."

    return handoff_to_planner
