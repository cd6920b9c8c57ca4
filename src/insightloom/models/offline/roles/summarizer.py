"""Extractive summaries for Strands' SummarizingConversationManager."""

from __future__ import annotations

import re

from ..conversation import Conversation, Reply


def summarizer(conv: Conversation) -> Reply:
    """Extractive summary for Strands' SummarizingConversationManager: keep plan/clue/tracking lines verbatim."""
    keep = [ln for ln in conv.user_text.splitlines() if re.match(r"^\s*(- \[[ x]\]|##|<clues>|Here is clues|calc)", ln)]
    return Reply(text="Summary of earlier work:\n" + "\n".join(keep[:200]))
