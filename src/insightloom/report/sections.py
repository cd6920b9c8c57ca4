"""The report stored section by section, so a refused or audited passage is resent alone, not the whole report.

A section is one heading and the Markdown under it up to the next heading of any level, so every heading a refusal
or an audit finding names (``section 'Revenue by Region'``) is one stored section. They live in
``report_sections/NN.md`` in report order. Storing a section whose heading is already stored replaces it in place,
together with its old sub-sections (the deeper headings after it), so a sub-section left out of the new text is gone;
a new one goes after the section stored just before it (or at the end). Storing a heading with no Markdown under it
deletes that section and its sub-sections (a ``# Title`` with nothing under it is kept: the title is printed). A
whole report rendered at once is stored the same way, so a later retry can patch just one of its sections.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from insightloom.errors import BadInputError
from insightloom.fileio import list_regular_files, read_text, write_text_atomic
from insightloom.report.markdown_blocks import HEADING_RE, plain_text

logger = logging.getLogger(__name__)

__all__ = [
    "SECTIONS_DIR",
    "Section",
    "assemble",
    "delete_section",
    "is_deletion",
    "load_sections",
    "section_from_call",
    "split_sections",
    "store_sections",
]

SECTIONS_DIR = "report_sections"
DEFAULT_LEVEL = 2
_FILE_RE = re.compile(r"^\d{2,4}\.md$")


@dataclass(frozen=True)
class Section:
    """One heading and the Markdown under it.

    Attributes:
        heading: The heading text as written (without the ``#`` marks); empty for text before the first heading.
        level: 1 for the title, 2-6 for ``##``-``######``, 0 for text before the first heading.
        body: The Markdown under the heading.
    """

    heading: str
    level: int
    body: str = ""

    @property
    def key(self) -> str:
        """The heading as printed, compared without case or extra spaces (how a finding names the section)."""
        return section_key(self.heading)

    def markdown(self) -> str:
        """The section as Markdown, heading line first."""
        body = self.body.strip("\n")
        if self.level == 0:
            return body + "\n"
        return f"{'#' * self.level} {self.heading}\n\n{body}\n" if body else f"{'#' * self.level} {self.heading}\n"


def section_key(heading: str) -> str:
    """``## `Revenue` by  Region`` and ``revenue by region`` name the same section."""
    text = HEADING_RE.sub(r"\2", heading.strip())
    return " ".join(plain_text(text)[0].split()).casefold()


def split_sections(markdown: str) -> list[Section]:
    """Cut Markdown at every heading line; text before the first heading is a level-0 section."""
    sections: list[Section] = []
    heading, level, body = "", 0, []
    for line in markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = HEADING_RE.match(line)
        if match is None:
            body.append(line)
            continue
        if level or "\n".join(body).strip():
            sections.append(Section(heading, level, "\n".join(body).strip("\n")))
        heading, level, body = match.group(2), len(match.group(1)), []
    if level or "\n".join(body).strip():
        sections.append(Section(heading, level, "\n".join(body).strip("\n")))
    return sections


def section_from_call(heading: str, markdown: str, stored: list[Section]) -> list[Section]:
    """The sections one ``render_section(heading, markdown)`` call holds: the named one, then its sub-sections.

    ``heading`` may carry its ``#`` marks; without them a stored section's level is kept (else ``##``). A first line
    of ``markdown`` that repeats the heading (in any case) is not printed twice: its wording and level are used.

    Raises:
        BadInputError: The heading is empty.
    """
    match = HEADING_RE.match(heading.strip())
    text = (match.group(2) if match else heading).strip()
    if not section_key(text):
        raise BadInputError(
            "render_section needs a heading.", "Pass the section's heading, e.g. render_section('Findings', '...')."
        )
    known = {s.key: s.level for s in stored}
    level = len(match.group(1)) if match else known.get(section_key(text), DEFAULT_LEVEL)
    parts = split_sections(markdown)
    if parts and parts[0].level and parts[0].key == section_key(text):
        repeated = parts.pop(0)  # the markdown repeated the heading line: print it as written there
        text, level = repeated.heading, level if match else repeated.level
        parts.insert(0, Section("", 0, repeated.body))
    body = parts.pop(0).body if parts and parts[0].level == 0 else ""
    return [Section(text, level, body), *parts]


def _subtree_end(sections: list[Section], index: int) -> int:
    """The index after the section at ``index`` and its sub-sections (the deeper headings that follow it).

    The title's sub-sections are the whole report, so a title (or the text above it) stands alone.
    """
    level = sections[index].level
    end = index + 1
    while level > 1 and end < len(sections) and sections[end].level > level:
        end += 1
    return end


def _find(sections: list[Section], key: str) -> int | None:
    return next((i for i, s in enumerate(sections) if s.key == key and s.level), None)


def _groups(new: list[Section]) -> list[list[Section]]:
    """``new`` cut into sections each with the deeper headings under it (the title stands alone)."""
    groups: list[list[Section]] = []
    for section in new:
        head = groups[-1][0] if groups else None
        if head is not None and head.level > 1 and section.level > head.level:
            groups[-1].append(section)
        else:
            groups.append([section])
    return groups


def store_sections(job_dir: Path, new: list[Section], *, replace_all: bool = False) -> list[Section]:
    """Merge ``new`` into the stored sections (or replace them all) and write them; returns the stored list.

    Each section of ``new`` with the deeper headings under it replaces the stored section of the same heading
    together with that section's old sub-sections, or goes after the one stored just before it when it is new.
    """
    if replace_all:  # a whole report, kept exactly as written (even with a heading used twice)
        _write(Path(job_dir), new)
        return list(new)
    sections = load_sections(job_dir)
    at = len(sections)
    for group in _groups(new):
        index = _find(sections, group[0].key)
        if index is None:
            sections[at:at] = group
        else:
            sections[index : _subtree_end(sections, index)] = group
            at = index
        at += len(group)
    _write(Path(job_dir), sections)
    return sections


def delete_section(job_dir: Path, heading: str) -> list[Section] | None:
    """Delete the stored section named ``heading`` and its sub-sections; None when no such section is stored."""
    sections = load_sections(job_dir)
    index = _find(sections, section_key(heading))
    if index is None:
        return None
    del sections[index : _subtree_end(sections, index)]
    _write(Path(job_dir), sections)
    return sections


def is_deletion(new: list[Section]) -> bool:
    """Whether one call's sections ask to delete: a heading below the title with no Markdown under it."""
    return len(new) == 1 and new[0].level > 1 and not new[0].body.strip()


def _folder(job_dir: Path) -> Path:
    folder = job_dir / SECTIONS_DIR
    if folder.is_symlink():
        raise BadInputError(f"{folder} is a symbolic link.", f"Remove it; the renderer keeps {SECTIONS_DIR}/ itself.")
    return folder


def _write(job_dir: Path, sections: list[Section]) -> None:
    folder = _folder(job_dir)
    names = [f"{i:02d}.md" for i in range(1, len(sections) + 1)]
    for name, section in zip(names, sections, strict=True):
        write_text_atomic(folder / name, section.markdown(), beneath=job_dir)
    for stale in _stored_names(job_dir):
        if stale not in names:
            (folder / stale).unlink()


def _stored_names(job_dir: Path) -> list[str]:
    """The stored section files' names in report order, listed without following a link (none when no folder).

    A link or FIFO a script planted among them is not a section file.
    """
    try:
        names = list_regular_files(_folder(job_dir), beneath=job_dir)
    except FileNotFoundError:
        return []
    return sorted((name for name in names if _FILE_RE.match(name)), key=lambda name: int(name.removesuffix(".md")))


def load_sections(job_dir: Path) -> list[Section]:
    """The stored sections, in report order (empty when none are stored)."""
    job_dir = Path(job_dir)
    folder = _folder(job_dir)
    sections: list[Section] = []
    for name in _stored_names(job_dir):
        parts = split_sections(read_text(folder / name, beneath=job_dir))
        if parts:
            first = parts[0]
            rest = "\n\n".join(part.markdown() for part in parts[1:])  # a hand-edited file may hold sub-headings
            sections.append(Section(first.heading, first.level, "\n\n".join(p for p in (first.body, rest) if p)))
    return sections


def assemble(sections: list[Section], title: str | None) -> str:
    """The whole report: a stored ``#`` section first (else ``# title``), then the others in order."""
    head = next((s for s in sections if s.level == 1), None)
    parts = [head.markdown() if head else f"# {title or 'Analysis Report'}\n"]
    parts += [s.markdown() for s in sections if s is not head]
    return "\n".join(parts)
