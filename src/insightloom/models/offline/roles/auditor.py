"""The offline Auditor: run the deterministic audit and report its verdict."""

from __future__ import annotations

import re

from ..conversation import Conversation, Reply
from .role_helpers import plan_items, standard_response


def auditor(conv: Conversation) -> Reply:
    last = conv.last()
    if last is None:
        return Reply.call("audit_report")
    verdict = re.search(r"verdict\W+(\w+)", last.result, re.I)
    verdict_text = verdict.group(1).lower() if verdict else "needs_review"
    done = verdict_text in ("pass", "needs_review")
    status = "SUCCESS" if verdict_text == "pass" else "PARTIAL_SUCCESS"
    return Reply(
        text=standard_response(
            status,
            plan_items(conv) if done else [],
            [f"Verdict: {verdict_text}"] + last.result.splitlines()[1:4],
            ["audit_findings.json"],
        )
    )
