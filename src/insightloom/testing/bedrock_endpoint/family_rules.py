"""What each model family accepts on Bedrock, as the strict endpoint enforces it: one table, ``FAMILY_RULES``.

The product has its own parameter table (``insightloom.models.families``), which decides what it *sends*; this one
decides what the endpoint *refuses*. They are kept apart on purpose: a test that checked the product against the
product's own table could never catch a wrong row in it.

Sources, per column:

- ``temperature``: Anthropic removed the sampling parameters from Claude Opus 4.7 and later ("temperature is
  deprecated for this model", a ``ValidationException`` on Bedrock; the Bedrock model card of Claude Opus 4.7, and
  Boise-State-Development/agentcore-public-stack#201 for the Bedrock error text).
- ``temperature_with_top_p``: Claude Opus 4.1, the Claude 4.5 and 4.6 models refuse ``temperature`` together with
  ``top_p`` ("`temperature` and `top_p` cannot both be specified for this model. Please use only one."; Bedrock's
  Anthropic Claude Messages parameter page; open-webui/open-webui#17922, BerriAI/litellm#15097).
- ``prompt_cache``: Bedrock's prompt-caching page lists the Claude models from Claude 3.5 Haiku and Claude 3.7 Sonnet
  on, and Amazon Nova; Claude 3.5 Sonnet v2 only for accounts admitted to the preview, Claude 3 not at all. Any
  other model refuses a ``cachePoint`` ("You invoked an unsupported model or your request did not allow prompt
  caching", pensarai/apex#943; strands-agents/harness-sdk#4168 reproduces the refusal with a raw Converse call).
- The minimum cacheable prefix per family is the product's ``context.prompt_cache.min_cacheable_tokens`` (Anthropic,
  "Prompt caching"), which is a documented figure rather than a product decision.

An id no row matches is treated as the strictest Claude family when it names Claude or Anthropic (a new family is
more likely to drop a parameter than to add one), and as a generic non-caching model otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FAMILY_RULES", "FamilyRule", "family_rule"]


@dataclass(frozen=True)
class FamilyRule:
    """What one model family accepts.

    Attributes:
        name: The family, as docs/testing.md names it.
        pattern: Matches the family's Bedrock model ids and inference profiles (case-insensitive, anywhere).
        temperature: Whether ``inferenceConfig.temperature`` is accepted at all.
        temperature_with_top_p: Whether ``temperature`` and ``topP`` may be sent together.
        prompt_cache: Whether ``cachePoint`` blocks are accepted.
        claude: Whether the family is Anthropic's (reasoning blocks must then carry their signature).
    """

    name: str
    pattern: str
    temperature: bool
    temperature_with_top_p: bool
    prompt_cache: bool
    claude: bool = True


FAMILY_RULES: tuple[FamilyRule, ...] = (
    FamilyRule("Claude Opus 4.7 and later", r"claude-opus-4-(?:[7-9]|[1-9]\d)(?!\d)", False, False, True),
    FamilyRule("Claude 4.5 / 4.6", r"claude-(?:sonnet|haiku|opus)-4-[56]", True, False, True),
    FamilyRule("Claude Opus 4.1", r"claude-opus-4-1", True, False, True),
    FamilyRule("Claude Sonnet 4 / Opus 4", r"claude-(?:sonnet|opus)-4-\d{8}", True, True, True),
    FamilyRule("Claude 3.7 Sonnet", r"claude-3-7-sonnet", True, True, True),
    FamilyRule("Claude 3.5 Haiku", r"claude-3-5-haiku", True, True, True),
    FamilyRule("Claude 3.5 Sonnet", r"claude-3-5-sonnet", True, True, False),
    FamilyRule("Claude 3", r"claude-3-(?:haiku|sonnet|opus)", True, True, False),
    FamilyRule("Amazon Nova", r"amazon\.nova-", True, True, True, claude=False),
)
#: The row for an unlisted Claude id: the strictest family's.
_UNLISTED_CLAUDE = FamilyRule("Claude (unlisted)", r"claude|anthropic", False, False, True)
_OTHER = FamilyRule("other Bedrock model", r".", True, True, False, claude=False)
_CLAUDE_RE = re.compile(_UNLISTED_CLAUDE.pattern, re.IGNORECASE)


def family_rule(model_id: str) -> FamilyRule:
    """The rules for ``model_id``: its row in ``FAMILY_RULES``, else the unlisted-Claude or generic row."""
    for rule in FAMILY_RULES:
        if re.search(rule.pattern, model_id, re.IGNORECASE):
            return rule
    return _UNLISTED_CLAUDE if _CLAUDE_RE.search(model_id) else _OTHER
