"""The report's limitations: plan items settled as not possible (``- [~] … — not possible: <reason>``).

They come from ``plan.md`` on every render, not from the Reporter's Markdown, so a report can never leave them out
and a re-render never lists them twice. The item and the reason are quoted from the plan as labels (the backtick
style), because they are the plan's words, not claims the report makes with numbers. So that each stays one whole
label whatever the plan holds, the characters that would split or reinterpret it (``**``, backticks, braces of a
``{{calc:x}}``, the brackets of a ``[3]`` that reads as a citation marker) are dropped or softened first.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from insightloom.errors import UnsafePathError
from insightloom.fileio import read_text
from insightloom.plan import not_possible_items
from insightloom.report.markdown_blocks import Block

logger = logging.getLogger(__name__)

PLAN_FILE = "plan.md"
HEADINGS = {"en": ("Limitations", "not possible"), "ko": ("한계", "수행할 수 없음")}


_MARKUP_RE = re.compile(r"\*{2,}|[`{}]")
_CALC_COLON_RE = re.compile(r"\b(calc)\s*[:\uff1a]", re.IGNORECASE)  # "calc:x" would read as a broken reference


def _label(text: str) -> str:
    """``text`` as one label run: no bold markers, backticks or braces inside, brackets as parentheses."""
    clean = _CALC_COLON_RE.sub(r"\1 ", _MARKUP_RE.sub("", text)).replace("[", "(").replace("]", ")")
    clean = " ".join(clean.split())
    return f"`{clean}`" if clean else ""


def _settled_items(job_dir: Path) -> list[tuple[str, str]]:
    path = job_dir / PLAN_FILE
    if not path.is_file():
        return []
    try:
        return not_possible_items(read_text(path, beneath=job_dir))
    except (OSError, UnicodeDecodeError, UnsafePathError) as exc:
        logger.warning("cannot read %s for the report's limitations: %s", path, exc)
        return []


def with_limitations(blocks: list[Block], job_dir: Path, korean: bool) -> list[Block]:
    """``blocks`` with one bullet per not-possible item, under the report's own Limitations heading if it has one."""
    items = _settled_items(job_dir)
    if not items:
        return blocks
    heading, word = HEADINGS["ko" if korean else "en"]
    bullets = [Block("bullet", f"{_label(item)} — {word}: {_label(reason)}", quoted=True) for item, reason in items]
    at = next((i for i, b in enumerate(blocks) if b.kind == "heading" and b.text.strip() == heading), None)
    if at is None:
        return [*blocks, Block("heading", heading, level=2), *bullets]
    return [*blocks[: at + 1], *bullets, *blocks[at + 1 :]]
