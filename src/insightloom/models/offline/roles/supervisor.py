"""The offline Supervisor: call the owner of the next open plan section, the Tracker after each agent, and the
Reporter again after an Auditor retry.

It decides from the latest Tracker result (its ``## Plan Status`` lines) and the latest Auditor verdict. Both survive
the reduction of older exchanges (``context.history``): the newest two exchanges stay verbatim and a reduced result
keeps its verdict line, so the decisions are the same with or without it.
"""

from __future__ import annotations

import re

from ....plan import parse_plan
from ..conversation import Conversation, Reply
from .role_helpers import standard_response

MAX_SUPERVISOR_STEPS = 60


def _next_role(conv: Conversation) -> str | None:
    """The role owning the first open plan section, from the latest Tracker report or the initial plan."""
    for exchange in reversed(conv.exchanges()):
        if exchange.name == "tracker":
            # "- Coder: 8/8 (done)" or "- Coder: 8/8 (done, 1 not possible)": not-possible items count as settled
            rows = re.findall(r"^- (\w+): (\d+)/(\d+) \((open|done)\b[^)]*\)", exchange.result, re.M)
            if rows:
                open_rows = [
                    name.lower() for name, _, _, state in rows if state == "open" and name.lower() != "tracker"
                ]
                return open_rows[0] if open_rows else None
    plan = parse_plan(conv.tag("full_plan") or "")
    return next((s.role for s in plan.sections if not s.done and s.role != "tracker"), None)


def supervisor(conv: Conversation) -> Reply:
    exchanges = conv.exchanges()
    if len(exchanges) >= MAX_SUPERVISOR_STEPS:
        return Reply(text=standard_response("ERROR", [], ["Stopped: too many steps without finishing the plan."], []))
    last = exchanges[-1] if exchanges else None
    if last is not None and last.name != "tracker":
        return Reply.call("tracker", input=f"Tick the items that {last.name} completed, by their exact wording.")
    agents = [e for e in exchanges if e.name != "tracker"]
    found = re.search(r"Maximum Reporter retries[^:\n]*:\s*(\d+)", conv.system_prompt)
    retries = int(found.group(1)) if found else 2
    audits = [e for e in agents if e.name == "auditor"]
    last_retry = bool(audits) and re.search(r"verdict\W+retry", audits[-1].result, re.I) is not None
    if last_retry and agents[-1].name == "auditor" and len(audits) <= retries:
        return Reply.call(
            "reporter",
            input="The Auditor asked for a retry. Patch only the flagged sections "
            "(see audit_findings.json) and render the report again.",
        )
    if last_retry and agents[-1].name == "reporter":
        return Reply.call("auditor", input="Audit the re-rendered report.")
    role = _next_role(conv)
    if role is None:
        return Reply(text=standard_response("SUCCESS", ["All plan sections are complete."], [], ["final_report.docx"]))
    stuck = [e.name for e in agents[-3:]]
    if len(stuck) == 3 and set(stuck) == {role}:
        return Reply(text=standard_response("ERROR", [], [f"{role} made no progress after three calls."], []))
    return Reply.call(role, input=f"Do the open items of your plan section ({role}).")
