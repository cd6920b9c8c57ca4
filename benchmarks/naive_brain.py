"""The naive single-agent brain of the context ablation (benchmark code, not shipped in the wheel).

One agent holds every tool and walks the whole plan in one conversation (analysis scripts, validation, report,
audit, ticking the plan after each section).

It makes the same decisions the team makes, by asking each role's own brain about that role's slice of the
conversation, so the two policies of the ablation differ only in what goes into each model call: here, the whole
plan, every instruction and every tool output so far, on every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from insightloom.models.offline.conversation import Conversation, Reply, ToolExchange
from insightloom.models.offline.reporter_writer import reporter
from insightloom.models.offline.roles.auditor import auditor
from insightloom.models.offline.roles.coder import coder
from insightloom.models.offline.roles.role_helpers import language, standard_response
from insightloom.models.offline.roles.validator import validator
from insightloom.plan import parse_plan
from insightloom.state import completed_tasks

#: The sections walked in order, each by its role's brain; a section ends when the plan is ticked for it.
PHASES: tuple[tuple[str, Callable[[Conversation], Reply]], ...] = (
    ("coder", coder),
    ("validator", validator),
    ("reporter", reporter),
    ("auditor", auditor),
)
TICK_TOOL = "update_plan"


def _phase_messages(task: str, exchanges: list[ToolExchange]) -> list[Any]:
    """A conversation holding only ``exchanges``, as the role's own agent would have had it."""
    messages: list[Any] = [{"role": "user", "content": [{"text": task}]}]
    for index, exchange in enumerate(exchanges):
        tool_id = f"phase_{index}"
        use = {"toolUseId": tool_id, "name": exchange.name, "input": exchange.input}
        result = {"toolUseId": tool_id, "status": exchange.status, "content": [{"text": exchange.result}]}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})
        messages.append({"role": "user", "content": [{"toolResult": result}]})
    return messages


def _phase_conversation(conv: Conversation, role: str, since: int) -> Conversation:
    """The slice of the naive conversation that belongs to ``role``: its plan section and the exchanges since the
    previous section was ticked."""
    plan = parse_plan(conv.tag("full_plan") or "")
    profile = conv.tag("data_profile")
    prompt = "\n".join(
        [
            f"<plan_section>{plan.section_text(role)}</plan_section>",
            f"<data_profile>{profile}</data_profile>" if profile else "",
            f"<other_sections>{conv.tag('other_sections') or ''}</other_sections>",
            f"Write findings in the language {language(conv)}.",
        ]
    )
    exchanges = conv.exchanges()[since:]
    return Conversation(prompt, _phase_messages(conv.user_text, exchanges), conv.tool_names - {TICK_TOOL})


def naive(conv: Conversation) -> Reply:
    """The next step of the single agent: the current section's next tool call, its tick, or the final answer."""
    exchanges = conv.exchanges()
    ticks = [i for i, e in enumerate(exchanges) if e.name == TICK_TOOL]
    if len(ticks) >= len(PHASES):
        plan = parse_plan(conv.tag("full_plan") or "")
        items = [item.text for section in plan.sections for item in section.items]
        return Reply(text=standard_response("SUCCESS", items, [], ["final_report.docx"]))
    role, brain = PHASES[len(ticks)]
    since = ticks[-1] + 1 if ticks else 0
    reply = brain(_phase_conversation(conv, role, since))
    if reply.tool_calls:
        return reply
    return Reply.call(TICK_TOOL, items=completed_tasks(reply.text))
