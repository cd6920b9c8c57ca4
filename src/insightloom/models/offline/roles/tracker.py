"""The offline Tracker: tick the items the last agent listed as completed."""

from __future__ import annotations

from ....state import completed_tasks
from ..conversation import Conversation, Reply
from .role_helpers import standard_response


def tracker(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        items = completed_tasks(conv.user_text)
        return Reply.call("update_plan", items=items)
    return Reply(
        text=standard_response("SUCCESS" if last.status == "success" else "ERROR", [], [], ["plan.md"])
        + "\n"
        + last.result
    )
