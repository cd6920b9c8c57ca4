"""The offline Planner: a plan from the data profile, or a revision from feedback (both the product's rules)."""

from __future__ import annotations

import re

from ..conversation import Conversation, Reply
from .role_helpers import language


def planner(conv: Conversation) -> Reply:
    from ..analyst import plan_markdown, revise_plan

    feedback = conv.tag("feedback")
    previous = conv.tag("previous_plan")
    profile = conv.json_tag("data_profile") or {"tables": [], "aliases": {}, "language": "en"}
    if feedback is not None and previous:
        found = re.search(r"This is revision (\d+)", conv.system_prompt)
        revision = int(found.group(1)) if found else 1
        return Reply(text=revise_plan(previous, feedback, revision, profile))
    request = conv.tag("request") or conv.user_text
    return Reply(text=plan_markdown(profile, request, language(conv), None))
