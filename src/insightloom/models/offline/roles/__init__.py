"""What the offline model says, per role, decided only from the prompt and the conversation so far.

One module per role; each exposes a function ``(Conversation) -> Reply``.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import reporter_writer
from ..conversation import Conversation, Reply
from .answerer import answerer
from .auditor import auditor
from .coder import coder
from .coordinator import coordinator
from .planner import planner
from .role_helpers import standard_response
from .summarizer import summarizer
from .supervisor import supervisor
from .tracker import tracker
from .validator import validator

ROLES: dict[str, Callable[[Conversation], Reply]] = {
    "coordinator": coordinator,
    "planner": planner,
    "supervisor": supervisor,
    "coder": coder,
    "validator": validator,
    "reporter": reporter_writer.reporter,
    "tracker": tracker,
    "auditor": auditor,
    "answerer": answerer,
}


def is_summarization(conv: Conversation) -> bool:
    """Whether the request is the conversation manager's summarization call (recognised by its prompt)."""
    return "summar" in conv.system_prompt[:400].lower() and not conv.tool_names


def respond(role: str, conv: Conversation) -> Reply:
    """The next reply for ``role``; summarization requests go to the summarizer."""
    return summarizer(conv) if is_summarization(conv) else ROLES[role](conv)


__all__ = ["ROLES", "is_summarization", "respond", "standard_response"]
