"""What each model family accepts: ``temperature``, and extended thinking.

A request with a parameter the model rejects fails every call, so parameters are sent from an allowlist, as the
reference system does, and never guessed: a family missing here gets neither temperature nor thinking, with a debug
line. The table is matched on any provider's name for a model (a Bedrock id or profile, Anthropic's API id,
LiteLLM's ``bedrock/...``), first match wins.

Sources: Anthropic's model documentation (extended thinking: Claude 3.7 Sonnet and the Claude 4 models; Claude 4.5
models refuse ``temperature`` together with ``top_p``), and the Bedrock inference parameter pages for Amazon Nova,
Meta Llama and Mistral. ``docs/bedrock.md`` prints this table.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Family:
    """A model family's accepted parameters.

    Attributes:
        name: The family, as docs/bedrock.md names it.
        pattern: Matches the family's model ids (case-insensitive, searched anywhere in the id).
        temperature: Whether ``temperature`` may be sent.
        thinking: Whether extended thinking may be asked for.
    """

    name: str
    pattern: str
    temperature: bool
    thinking: bool


FAMILIES: tuple[Family, ...] = (
    Family("Claude 3.7 Sonnet", r"claude-3-7-sonnet", temperature=True, thinking=True),
    Family("Claude 3 / 3.5", r"claude-3-(?:5-)?(?:haiku|sonnet|opus)", temperature=True, thinking=False),
    Family("Claude 4 / 4.1 (Sonnet, Opus)", r"claude-(?:sonnet|opus)-4(?:-1)?-\d{8}", temperature=True, thinking=True),
    Family("Claude 4.5 (Sonnet, Haiku, Opus)", r"claude-(?:sonnet|haiku|opus)-4-5", temperature=True, thinking=True),
    Family("Amazon Nova", r"amazon\.nova-", temperature=True, thinking=False),
    Family("Meta Llama", r"meta\.llama", temperature=True, thinking=False),
    Family("Mistral", r"mistral\.", temperature=True, thinking=False),
    # OpenAI's reasoning models refuse temperature: o1, o3, o4-mini, gpt-5.
    Family("OpenAI reasoning", r"(?:^|[/.])(?:o\d(?:-|$)|o\d-mini|gpt-5)", temperature=False, thinking=False),
)
#: Ids outside the table that still take temperature: models a user serves through an OpenAI-compatible server
#: or Ollama, where the product cannot know the family and the server ignores what it does not use.
_OPEN_ENDED_PROVIDERS = ("openai", "ollama")
_CLAUDE_RE = re.compile(r"claude|anthropic\.", re.IGNORECASE)
_BEDROCK_VENDOR_RE = re.compile(r"(?:^|[./])(?:amazon|meta|mistral|cohere|ai21|deepseek|qwen|anthropic)\.")


def family(model_id: str) -> Family | None:
    """The family of ``model_id``, or None when the table does not know it."""
    return next((f for f in FAMILIES if re.search(f.pattern, model_id, re.IGNORECASE)), None)


def accepts_temperature_family(model_id: str, provider: str = "bedrock") -> bool:
    """Whether ``model_id``'s family takes ``temperature`` (an unknown Claude or Bedrock family does not)."""
    found = family(model_id)
    if found is not None:
        return found.temperature
    known_vendor = _CLAUDE_RE.search(model_id) or _BEDROCK_VENDOR_RE.search(model_id)
    if provider in _OPEN_ENDED_PROVIDERS and not known_vendor:
        return True
    logger.debug("no temperature for %s: its model family is not in the parameter table", model_id)
    return False


def supports_thinking(model_id: str) -> bool:
    """Whether ``model_id``'s family takes extended thinking."""
    found = family(model_id)
    return found is not None and found.thinking
