"""The offline Tracker: pass the items the last agent listed as completed, and those it reported as not possible,
to ``update_plan``; the tool decides what the job files support."""

from __future__ import annotations

from typing import Any

from ....state import completed_tasks, not_possible_tasks
from ..conversation import Conversation, Reply
from .role_helpers import standard_response


def tracker(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        arguments: dict[str, Any] = {"items": completed_tasks(conv.user_text)}
        impossible = not_possible_tasks(conv.user_text)
        if impossible:
            arguments["not_possible"] = [f"{item} — not possible: {reason}" for item, reason in impossible]
        return Reply.call("update_plan", **arguments)
    return Reply(
        text=standard_response("SUCCESS" if last.status == "success" else "ERROR", [], [], ["plan.md"])
        + "\n"
        + last.result
    )
