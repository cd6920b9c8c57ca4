"""``update_plan``: the Tracker ticks plan items by their exact wording."""

from __future__ import annotations

from strands import tool
from strands.types.tools import AgentTool

from ..errors import UnsafePathError
from ..plan import check_items, parse_plan
from ..runtime import JobRuntime
from .tool_results import tool_error


def make_update_plan(rt: JobRuntime) -> AgentTool:
    @tool(name="update_plan")
    def update_plan(items: list[str]) -> str | dict:
        """Mark plan items done: flips '- [ ]' to '- [x]' for each item whose wording matches exactly.

        Args:
            items: The exact wording of each completed item, as listed under Completed Tasks.
        """
        new_plan, flipped, missing = check_items(rt.state.full_plan, items)
        try:
            rt.job.write_text("plan.md", new_plan)
        except UnsafePathError as exc:
            return tool_error(str(exc))
        rt.state.set_plan(new_plan)
        status = parse_plan(new_plan).status_lines()
        text = f"Ticked {len(flipped)} item(s).\n## Plan Status\n{status}"
        if missing:
            text += "\nNot found among open items (check the exact wording): " + "; ".join(missing)
            if not flipped and items:
                return tool_error(text)
        return text

    return update_plan
