"""``update_plan``: the Tracker ticks the plan items this job shows were done, and marks the not-possible ones.

The rules live in :mod:`.completion`; this wrapper writes the plan, records not-possible items in ``job.json`` and
words the result.
"""

from __future__ import annotations

from typing import Any

from strands import tool
from strands.types.tools import AgentTool

from ..errors import UnsafePathError
from ..plan import parse_plan
from ..runtime import JobRuntime
from .completion import Settlement, not_possible_records, settle_items
from .tool_results import tool_error


def _summary(result: Settlement) -> str:
    text = f"Ticked {len(result.ticked)} item(s)."
    if result.not_possible:
        text += f" Marked {len(result.not_possible)} item(s) not possible ([~])."
    text += f"\n## Plan Status\n{parse_plan(result.text).status_lines()}"
    if result.refused:
        text += "\nNot ticked:\n" + "\n".join(f"- {line}" for line in result.refused)
    if result.notes:
        text += "\nAlready settled:\n" + "\n".join(f"- {line}" for line in result.notes)
    return text


def make_update_plan(rt: JobRuntime) -> AgentTool:
    @tool(name="update_plan")
    def update_plan(
        items: list[str] | None = None, not_possible: list[str | dict[str, str]] | None = None
    ) -> str | dict[str, Any]:
        """Settle plan items: '- [ ]' becomes '- [x]' for each completed item whose work this job shows (the
        Coder's results and checks, the Validator's, Reporter's and Auditor's tool runs and files), or
        '- [~] <item> — not possible: <reason>' for each Coder item the agent reported as not possible.

        Args:
            items: The wording of each completed item, as listed under Completed Tasks (copied from the plan).
            not_possible: Items the agent reported as not possible, each "<exact item> — not possible: <reason>".
        """
        result = settle_items(rt.root, rt.state.full_plan, items or [], not_possible or [], evidence=rt.evidence)
        if result.changed:
            try:
                rt.job.write_text("plan.md", result.text)
                if result.not_possible:
                    rt.job.update(not_possible=not_possible_records(result.text))
            except UnsafePathError as exc:
                return tool_error(str(exc))
            rt.state.set_plan(result.text)
        text = _summary(result)
        return tool_error(text) if result.refused and not result.changed else text

    return update_plan
