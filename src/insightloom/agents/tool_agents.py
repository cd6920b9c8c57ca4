"""The five tool agents, each a real Strands Agent exposed to the Supervisor as a tool.

Every call builds a fresh agent whose system prompt carries its own plan section in full (the Tracker's is the
section of the agent it tracks), the other sections as one line each and the budgeted clues; its input is the
Supervisor's task plus the last agent's message, fitted to the handoff budget, never the whole history. Only its
final text goes back, wrapped in RESPONSE_FORMAT, and shared_state is saved after the call.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from strands import tool
from strands.types.exceptions import MaxTokensReachedException
from strands.types.tools import AgentTool

from ..config import TOOL_AGENT_ROLES
from ..context.budget import Fragment, TokenBudget
from ..plan import parse_plan
from ..prompting import render_prompt
from ..runtime import JobRuntime
from ..state import RESPONSE_FORMAT
from ..tools import make_bash_tool, make_file_read, make_update_plan
from ..tools.report_tools import (
    ReportMemory,
    make_audit_report,
    make_draft_conclusions,
    make_patch_report,
    make_render_report,
    make_render_section,
    make_summary_table,
    make_validate_calculations,
)
from ..tools.tool_results import tool_error
from ..tools.write_and_execute import make_write_and_execute
from .factory import build_agent

logger = logging.getLogger(__name__)

DESCRIPTIONS = {
    "coder": "Analyses the data with Python scripts, tracks every number with a check, saves charts.",
    "validator": "Re-computes every tracked number independently and writes citations.json.",
    "reporter": "Writes the report from verified numbers and renders final_report.docx.",
    "tracker": "Ticks the plan items an agent completed, by their exact wording.",
    "auditor": "Audits final_report.docx and returns a verdict: pass, retry or needs_review.",
}


def tools_for(role: str, rt: JobRuntime) -> tuple[list[Any], list[Any]]:
    """The role's tools and extra hooks."""
    if role == "coder":
        from ..skills import discover_skills, make_skill_tool

        if rt.skills is None:
            rt.skills = discover_skills(rt.settings.skills_dirs, rt.cwd)
        catalog = rt.skills
        skill_tool, guard = make_skill_tool(catalog)
        return [make_write_and_execute(rt), make_bash_tool(rt), make_file_read(rt), skill_tool], [guard]
    if role == "validator":
        return [make_validate_calculations(rt), make_write_and_execute(rt), make_file_read(rt)], []
    if role == "reporter":
        memory = ReportMemory()  # patch_report() repairs what this call's last render refusal named
        render = [make_render_section(rt, memory), make_render_report(rt, memory), make_patch_report(rt, memory)]
        return [make_file_read(rt), *render, make_summary_table(rt), make_draft_conclusions(rt)], []
    if role == "tracker":
        return [make_update_plan(rt)], []
    return [make_audit_report(rt)], []


_RESPONSE_HEADER_RE = re.compile(r"\A\s*Response from (?P<role>\w+):", re.I)


def tracked_role(rt: JobRuntime, task: str = "") -> str:
    """The role whose section the Tracker works on: the agent of a leading ``Response from <role>:`` header of its
    task, else the last agent other than the Tracker itself (a second Tracker call in a row still sees that agent's
    section). Roles merely named in the task's text never count: "ready for the validator" is the Coder speaking."""
    header = _RESPONSE_HEADER_RE.match(task)
    if header and (named := header.group("role").lower()) in TOOL_AGENT_ROLES and named != "tracker":
        return named
    worked = [entry["agent"] for entry in rt.state.history if entry.get("agent") not in ("tracker", None)]
    return worked[-1] if worked else "coder"


def tool_agent_prompt(role: str, rt: JobRuntime, task: str = "") -> str:
    """The role's system prompt for this call: static rules first, then its plan section, other sections, clues."""
    plan = parse_plan(rt.state.full_plan)
    # The Tracker sees the section of the agent it tracks, the others as one line.
    owner = tracked_role(rt, task) if role == "tracker" else role
    own = plan.section_text(owner)
    others = f"Title: {plan.title}\nRequest: {' '.join(rt.request.split())}\n{plan.others_one_line(owner)}"
    values: dict[str, Any] = {
        "plan_section": own,
        "other_sections": others,
        "clues": rt.state.clues,
        "max_tokens": rt.settings.spec(role).max_tokens,
        "language": rt.language,
    }
    if role == "coder":
        values["data_profile"] = rt.profile.to_prompt() if rt.profile else "<data_profile>{}</data_profile>"
        values["skills_catalog"] = rt.skills.prompt_block() if rt.skills else ""
    return render_prompt(role, rt.settings.prompts_dir, **values)


def handoff_message(rt: JobRuntime, task: str) -> str:
    """The tool agent's input: the task, then the last agent's message, within the handoff budget.

    The last message is compressed first (whole sentences kept in order), then the task; neither is ever cut
    mid-sentence.
    """
    fragments = [Fragment(task, "history", "task")]
    if rt.state.messages:
        last = rt.state.history[-1]["agent"] if rt.state.history else "previous agent"
        fragments.append(Fragment(RESPONSE_FORMAT.format(agent=last, text=rt.state.messages), "documents", "last"))
    return TokenBudget(rt.settings.handoff_budget_tokens).pack(fragments).text


def run_tool_agent(role: str, rt: JobRuntime, task: str) -> str:
    """Run one tool agent on ``task`` and return its final text."""
    tools, hooks = tools_for(role, rt)
    agent = build_agent(role, rt, tool_agent_prompt(role, rt, task), tools, hooks)
    result = agent(handoff_message(rt, task))
    text = str(result).strip()
    rt.state.record(role, text, clue_budget=rt.settings.clue_budget_tokens)
    return text


#: What an agent that ran out of output room should do instead; the Supervisor passes it on in its next task.
SMALLER_STEPS = {
    "reporter": "ask the reporter to render the report section by section: one render_section(heading, markdown) "
    "call per section, then render_report() with no argument to assemble them",
    "coder": "ask the coder for shorter scripts: one analysis per write_and_execute_tool call",
    "validator": "ask the validator to verify in several shorter scripts, a few calculations each",
}


def out_of_room(role: str, rt: JobRuntime) -> str:
    """The tool error for an agent whose answer hit its output limit, naming the smaller steps to take."""
    limit = rt.settings.spec(role).max_tokens
    steps = SMALLER_STEPS.get(role, f"ask the {role} for a shorter answer")
    return (
        f"The {role}'s answer hit its output limit ({limit:,} tokens) and was cut off, so nothing it was writing was "
        f"used. Fix: {steps}; or raise agents.{role}.max_tokens in insightloom.yaml."
    )


def make_agent_tool(role: str, rt: JobRuntime) -> AgentTool:
    """Expose one tool agent to the Supervisor, refusing calls made before earlier sections are done."""

    def call(input: str) -> str | dict:
        if rt.cancel.is_set():
            return tool_error("The job was cancelled. Stop and finish.")
        if role != "tracker":
            blocking = parse_plan(rt.state.full_plan).blocking_items(role)
            if blocking:
                return tool_error(
                    f"Refused: {role} cannot start while earlier plan items are unchecked: "
                    + "; ".join(blocking)
                    + ". Fix: call the agent that owns them first, then the tracker."
                )
        try:
            text = run_tool_agent(role, rt, input)
        except MaxTokensReachedException:
            return tool_error(out_of_room(role, rt))
        return RESPONSE_FORMAT.format(agent=role, text=text)

    call.__name__ = role
    call.__doc__ = f"{DESCRIPTIONS[role]}\n\nArgs:\n    input: The task, with the exact plan items to do.\n"
    return tool(name=role, description=DESCRIPTIONS[role])(call)


def make_agent_tools(rt: JobRuntime) -> list[AgentTool]:
    return [make_agent_tool(role, rt) for role in TOOL_AGENT_ROLES]
