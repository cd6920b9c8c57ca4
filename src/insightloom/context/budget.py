"""TokenBudget: fit named regions of context into a fixed number of tokens, never cutting a sentence.

Regions are reserved in order. The fixed ones (system prompt, tools) are taken whole or the budget refuses; then
clues and history; then documents. When the total is over, documents are compressed first (the last one first,
since callers list them by relevance), then clues and history (the oldest first). A fragment is only ever kept
whole, extractively compressed (whole sentences kept in their original order) or dropped, so what the model reads
is always text someone wrote, never half a sentence.

Sentences are cut after ``. ! ? …`` followed by a space, after ``。！？`` (Chinese and Japanese need no space), and at
every line break, which makes a line of code or a CSV row one unit.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import ConfigError
from .tokens import count_tokens

logger = logging.getLogger(__name__)

#: Region names in reservation order.
REGIONS: tuple[str, ...] = ("system", "tools", "clues", "history", "documents")
FIXED_REGIONS = frozenset({"system", "tools"})
_HISTORY_REGIONS = frozenset({"clues", "history"})
Mode = Literal["whole", "compressed", "dropped"]

# A unit ends after sentence punctuation (plus closing quotes/brackets) and the spaces after it, after CJK
# full stops, or at a line break. Whatever trails without an end is a unit too.
_UNIT_RE = re.compile(
    r".*?(?:[.!?…]+[\"'”’)\]»]*[ \t]+(?=\S)|[。！？]+[」』”’)\]]*[ \t]*|\n|$)",
    re.S,
)


def split_units(text: str) -> list[str]:
    """Split text into sentence units that concatenate back to exactly ``text``.

    Each unit keeps the whitespace that follows it, so joining a subsequence reads naturally.
    """
    units = [m.group(0) for m in _UNIT_RE.finditer(text) if m.group(0)]
    return units


def compress_text(text: str, max_tokens: int, count: Callable[[str], int] = count_tokens) -> str:
    """The longest prefix-order selection of whole sentences of ``text`` that fits ``max_tokens``.

    Sentences are taken in order and a sentence that does not fit is skipped (a later, shorter one may still fit),
    so the result is a subsequence of the sentences, in their original order. Returns ``text`` when it fits whole and
    ``""`` when not even one sentence fits.
    """
    if max_tokens <= 0:
        return ""
    if count(text) <= max_tokens:
        return text
    kept: list[str] = []
    used = 0
    for unit in split_units(text):
        cost = count(unit)
        if used + cost <= max_tokens:
            kept.append(unit)
            used += cost
    # Units were counted one by one; BPE can merge across a join, so check the joined text and trim from the end.
    while kept and count("".join(kept).rstrip()) > max_tokens:
        kept.pop()
    return "".join(kept).rstrip()


@dataclass(frozen=True)
class Fragment:
    """One piece of context.

    Attributes:
        text: The text as it would be sent.
        region: One of REGIONS.
        id: A name for logs and tests.
    """

    text: str
    region: str = "documents"
    id: str = ""

    def __post_init__(self) -> None:
        if self.region not in REGIONS:
            raise ValueError(f"unknown region {self.region!r}; use one of {', '.join(REGIONS)}")


@dataclass
class Packed:
    """What became of one fragment."""

    fragment: Fragment
    text: str
    mode: Mode


@dataclass
class Packing:
    """The fragments as they fit, in their original order.

    Attributes:
        limit: The budget in tokens.
        items: One entry per fragment given, dropped ones included.
        separator: What joins the kept texts.
    """

    limit: int
    items: list[Packed] = field(default_factory=list)
    separator: str = "\n\n"
    count: Callable[[str], int] = field(default=count_tokens, repr=False)

    @property
    def text(self) -> str:
        return self.separator.join(item.text for item in self.items if item.text)

    @property
    def used(self) -> int:
        return self.count(self.text)

    def region_text(self, region: str) -> str:
        return self.separator.join(item.text for item in self.items if item.text and item.fragment.region == region)

    def mode(self, fragment_id: str) -> Mode:
        return next(item.mode for item in self.items if item.fragment.id == fragment_id)


class TokenBudget:
    """Packs fragments into ``limit`` tokens (counted on the joined text), compressing the variable regions.

    Args:
        limit: The most tokens the packed text may hold.
        separator: Joins the kept fragments.
        count: The token counter (the product's tokenizer by default).
    """

    def __init__(self, limit: int, *, separator: str = "\n\n", count: Callable[[str], int] = count_tokens) -> None:
        if limit < 0:
            raise ValueError("a token budget cannot be negative")
        self.limit = limit
        self.separator = separator
        self.count = count

    def pack(self, fragments: Sequence[Fragment]) -> Packing:
        """Fit ``fragments``; the packed text never holds more than ``limit`` tokens.

        Raises:
            ConfigError: The fixed regions (system prompt and tools) alone are over the budget.
        """
        packing = Packing(self.limit, [Packed(f, f.text, "whole") for f in fragments], self.separator, self.count)
        fixed = self.separator.join(f.text for f in fragments if f.region in FIXED_REGIONS and f.text)
        fixed_tokens = self.count(fixed)
        if fixed_tokens > self.limit:
            raise ConfigError(
                f"The system prompt and tools take {fixed_tokens} tokens, more than the {self.limit}-token budget.",
                "raise the budget or shorten the prompt.",
            )
        if packing.used <= self.limit:
            return packing
        for index in self._compression_order(fragments):
            self._shrink(packing, index)
            if packing.used <= self.limit:
                break
        logger.debug("packed %d fragments into %d/%d tokens", len(fragments), packing.used, self.limit)
        return packing

    @staticmethod
    def _compression_order(fragments: Sequence[Fragment]) -> list[int]:
        """Documents first, the last one first; then clues and history, the oldest first."""
        documents = [i for i, f in enumerate(fragments) if f.region == "documents"]
        history = [i for i, f in enumerate(fragments) if f.region in _HISTORY_REGIONS]
        return list(reversed(documents)) + history

    def _shrink(self, packing: Packing, index: int) -> None:
        """Compress one fragment until the whole fits or the fragment is gone; each step keeps fewer tokens."""
        item = packing.items[index]
        while item.text and packing.used > self.limit:
            current = self.count(item.text)
            target = min(current - 1, current - (packing.used - self.limit))
            item.text = compress_text(item.fragment.text, target, self.count)
            item.mode = "compressed" if item.text else "dropped"
