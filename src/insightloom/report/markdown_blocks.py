"""Parse the small Markdown subset the Reporter writes into blocks.

The subset: ``# Title`` (first line), ``##``/``###`` headings, paragraphs, ``- `` bullets (and ``1.`` items),
``![alt](charts/x.png)`` images on their own line, pipe tables, ``**bold**`` and ```label``` (a name or code, shown
as plain text but marked as a label so the number checks skip it). Anything richer is rendered as plain text rather
than rejected: a report with a stray construct is still better delivered than refused.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from insightloom.calc_refs import CALC_REF_RE

logger = logging.getLogger(__name__)

__all__ = [
    "CALC_REF_RE",
    "HEADING_RE",
    "Block",
    "InlineRun",
    "inline_runs",
    "located_runs",
    "parse_markdown",
    "plain_text",
    "plain_text_map",
    "split_row",
]

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET_RE = re.compile(r"^\s*[-*+]\s+(.*)$")
_ORDERED_RE = re.compile(r"^\s*\d{1,3}[.)]\s+(.*)$")
_IMAGE_RE = re.compile(r"^\s*!\[(.*?)\]\((.+?)\)\s*$")
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RULE_RE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_BOLD_RE = re.compile(r"\*\*(.+?)\*\*")


@dataclass
class Block:
    """One rendered unit.

    Attributes:
        kind: ``heading``, ``paragraph``, ``bullet``, ``number``, ``image`` or ``table``.
        text: Heading/paragraph/list text, or the image's alt text.
        level: Heading level (1-6).
        path: Image path as written.
        rows: Table rows, the header first.
        quoted: Its label runs are the plan's words quoted by the renderer (the limitations), never claims.
    """

    kind: str
    text: str = ""
    level: int = 0
    path: str = ""
    rows: list[list[str]] = field(default_factory=list)
    quoted: bool = False


def split_row(line: str) -> list[str]:
    """Cells of one pipe-table row; ``\\|`` is a literal pipe."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells = re.split(r"(?<!\\)\|", text)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _table(lines: list[str], start: int) -> tuple[Block, int] | None:
    if start + 1 >= len(lines) or not lines[start].strip().startswith("|"):
        return None
    if not _TABLE_SEP_RE.match(lines[start + 1]):
        return None
    rows = [split_row(lines[start])]
    end = start + 2
    while end < len(lines) and lines[end].strip().startswith("|"):
        rows.append(split_row(lines[end]))
        end += 1
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    return Block("table", rows=rows), end


def parse_markdown(markdown: str) -> list[Block]:
    """Split the Markdown into blocks, in document order."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(Block("paragraph", text=" ".join(p.strip() for p in para)))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        table = _table(lines, i)
        if table is not None:
            flush()
            blocks.append(table[0])
            i = table[1]
            continue
        i += 1
        if not line.strip() or line.strip().startswith("```") or _RULE_RE.match(line):
            flush()
            continue
        if match := HEADING_RE.match(line):
            flush()
            blocks.append(Block("heading", text=match.group(2), level=len(match.group(1))))
        elif match := _IMAGE_RE.match(line):
            flush()
            blocks.append(Block("image", text=match.group(1).strip(), path=match.group(2).strip()))
        elif match := _BULLET_RE.match(line):
            flush()
            blocks.append(Block("bullet", text=match.group(1).strip()))
        elif match := _ORDERED_RE.match(line):
            flush()
            blocks.append(Block("number", text=match.group(1).strip()))
        elif line[:1].isspace() and not para and blocks and blocks[-1].kind in {"bullet", "number"}:
            blocks[-1].text += " " + line.strip()  # continuation of a list item
        else:
            para.append(line)
    flush()
    return blocks


_CODE_RE = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class InlineRun:
    """One piece of inline text as the DOCX prints it.

    Attributes:
        text: The text, without Markdown markup.
        bold: From ``**bold**``.
        label: From ```backticks```: a name or code (a column, a product code), not a claim.
    """

    text: str
    bold: bool = False
    label: bool = False


def _label_runs(text: str, bold: bool, base: int) -> list[tuple[InlineRun, int]]:
    runs: list[tuple[InlineRun, int]] = []
    last = 0
    for match in _CODE_RE.finditer(text):
        runs.append((InlineRun(text[last : match.start()], bold), base + last))
        runs.append((InlineRun(match.group(1), bold, label=True), base + match.start(1)))
        last = match.end()
    runs.append((InlineRun(text[last:], bold), base + last))
    return runs


def located_runs(text: str) -> list[tuple[InlineRun, int]]:
    """:func:`inline_runs` with the offset in ``text`` where each run's text starts."""
    runs: list[tuple[InlineRun, int]] = []
    last = 0
    for match in _BOLD_RE.finditer(text):
        runs += _label_runs(text[last : match.start()], False, last)
        runs += _label_runs(match.group(1), True, match.start(1))
        last = match.end()
    runs += _label_runs(text[last:], False, last)
    return [(run, at) for run, at in runs if run.text]


def inline_runs(text: str) -> list[InlineRun]:
    """Split text on ``**bold**`` and then on ```labels```, dropping empty pieces."""
    return [run for run, _ in located_runs(text)]


def plain_text_map(text: str) -> tuple[str, list[tuple[int, int]], list[int]]:
    """:func:`plain_text` plus, for each printed character, its offset in ``text`` (to quote the Markdown)."""
    printed, spans = "", []
    offsets: list[int] = []
    for run, at in located_runs(text):
        if run.label:
            spans.append((len(printed), len(printed) + len(run.text)))
        printed += run.text
        offsets += range(at, at + len(run.text))
    return printed, spans, offsets


def plain_text(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text as printed (markup removed) and the offsets of its label runs."""
    printed, spans, _ = plain_text_map(text)
    return printed, spans
