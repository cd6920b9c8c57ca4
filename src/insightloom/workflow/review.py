"""The PlanReviewer step: a human (or ``--yes``) approves the plan, asks for changes, or cancels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class Decision:
    action: Literal["approve", "feedback", "cancel"]
    feedback: str = ""


class Reviewer(Protocol):
    def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
        """Decide on a plan; feedback is only offered while revision < max_revisions."""
        ...


class AutoApprove:
    """``--yes``: approve every plan as it is."""

    def review(self, plan: str, revision: int, max_revisions: int) -> Decision:
        return Decision("approve")


def parse_answer(answer: str, can_revise: bool) -> Decision | None:
    """Terminal answer rules: Enter or ``y`` approves, ``q`` cancels, other text is feedback (None if not allowed)."""
    text = answer.strip()
    if text.lower() in ("", "y", "yes"):
        return Decision("approve")
    if text.lower() in ("q", "quit"):
        return Decision("cancel")
    return Decision("feedback", text) if can_revise else None
