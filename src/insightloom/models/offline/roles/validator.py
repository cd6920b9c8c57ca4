"""The offline Validator: re-run every check through the deterministic tool, then report."""

from __future__ import annotations

from ..conversation import Conversation, Reply
from .common import plan_items, standard_response


def validator(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        return Reply.call("validate_calculations")
    ok = last.status == "success"
    return Reply(
        text=standard_response(
            "SUCCESS" if ok else "ERROR",
            plan_items(conv) if ok else [],
            [line for line in last.result.splitlines() if line.strip()][:5],
            ["citations.json", "validation_report.txt"],
        )
    )
