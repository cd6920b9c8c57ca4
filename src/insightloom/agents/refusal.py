"""Whether a model's turn was a refusal: the words a real model refuses with, in English and Korean, the stop
reasons Bedrock gives a blocked reply, and an empty turn.

Kept in product code so every role and every provider is read the same way; the supervising loop re-prompts a
refusing Supervisor once and then fails the job saying that the model refused (``workflow.supervising``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Stop reasons of a reply the provider blocked or the model declined (Bedrock Converse, Strands' names).
REFUSAL_STOP_REASONS = frozenset({"guardrail_intervened", "content_filtered", "refusal"})
_REFUSAL_RE = re.compile(
    r"\b(?:I\s*(?:can(?:no|')t|cannot|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|won'?t|will\s+not|must"
    r"\s+decline|decline)\s+(?:to\s+)?(?:help|assist|do|comply|continue|proceed|complete|perform|provide|fulfil)"
    r"|I'?m\s+sorry,?\s+but\s+I|(?:as\s+an\s+AI)|not\s+able\s+to\s+help\s+with)"
    r"|죄송하지만|도와\s*드릴\s*수\s*없|수행할\s*수\s*없|진행할\s*수\s*없|거절",
    re.IGNORECASE,
)
_FIRST_WORDS = 80


@dataclass(frozen=True)
class Refusal:
    """A refused turn: why it reads as one, and the model's first words (for the job's reason)."""

    why: str
    first_words: str


def _text_of(result: Any) -> str:
    message = getattr(result, "message", None) or {}
    blocks = message.get("content") if isinstance(message, dict) else None
    return " ".join(str(b.get("text") or "") for b in blocks or [] if isinstance(b, dict)).strip()


def refusal_of(result: Any) -> Refusal | None:
    """The refusal in an agent's result (a Strands ``AgentResult``), or None when the turn did not refuse (or the
    result is no model turn at all)."""
    if not hasattr(result, "message"):
        return None
    text = _text_of(result)
    words = " ".join(text.split())[:_FIRST_WORDS]
    stop = str(getattr(result, "stop_reason", "") or "")
    if stop in REFUSAL_STOP_REASONS:
        return Refusal(f"its reply was stopped ({stop})", words)
    if not text:
        return Refusal("its turn was empty", "")
    if _REFUSAL_RE.search(text[:600]):  # a refusal says so at once; a long report that quotes one does not count
        return Refusal("it refused", words)
    return None
