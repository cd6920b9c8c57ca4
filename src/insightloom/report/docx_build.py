"""python-docx helpers for the renderer: text runs, CJK fonts, pictures with alt text, captions, tables.

Charts once vanished when a paragraph's run text was reset, so these helpers only ever ADD runs; nothing here
rewrites an existing run, least of all one that holds a drawing. Backtick text gets the ``Data Label`` character
style (it looks like the text around it), which is how the audit knows it is a label and not a claim.
"""

from __future__ import annotations

import logging
from typing import BinaryIO

from docx.document import Document as DocumentObject
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Inches
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.text.run import Run

from insightloom.report.labels import LABEL_STYLE, QUOTE_STYLE
from insightloom.report.markdown_blocks import inline_runs

logger = logging.getLogger(__name__)

CHART_WIDTH_IN = 6.0
_STYLES_WITH_FONT = ("Normal", "Title", "Heading 1", "Heading 2", "Heading 3", "Caption", "List Bullet", "List Number")


def set_east_asian(run: Run, family: str | None) -> None:
    """Set the run's East-Asian font (``w:eastAsia`` on ``w:rFonts``) so Word draws Hangul with it."""
    if not family:
        return
    r_fonts = run._element.get_or_add_rPr().get_or_add_rFonts()
    r_fonts.set(qn("w:eastAsia"), family)


def set_style_east_asian(doc: DocumentObject, family: str) -> None:
    """Give the common styles the East-Asian font too, so text Word adds later (e.g. edits) stays readable."""
    for name in _STYLES_WITH_FONT:
        try:
            style = doc.styles[name]
        except KeyError:
            continue
        r_fonts = style.element.get_or_add_rPr().get_or_add_rFonts()
        r_fonts.set(qn("w:eastAsia"), family)


def _label_style(paragraph: Paragraph, name: str = LABEL_STYLE) -> str:
    """A label character style, added to the document on first use."""
    styles = paragraph.part.document.styles  # type: ignore[attr-defined]  # a body or table-cell paragraph: DocumentPart
    try:
        styles[name]
    except KeyError:
        styles.add_style(name, WD_STYLE_TYPE.CHARACTER)
    return name


def add_text(
    paragraph: Paragraph, text: str, east_asian: str | None, *, italic: bool = False, quoted: bool = False
) -> None:
    """Append ``text`` to the paragraph as runs: bold for ``**bold**``, the label style for ```labels``` (the
    quote style when the renderer quotes the plan's words)."""
    label = QUOTE_STYLE if quoted else LABEL_STYLE
    for piece in inline_runs(text):
        run = paragraph.add_run(piece.text, style=_label_style(paragraph, label) if piece.label else None)
        run.bold = piece.bold or None
        if italic:
            run.italic = True
        set_east_asian(run, east_asian)


def add_heading(doc: DocumentObject, text: str, level: int, east_asian: str | None) -> Paragraph:
    """A heading paragraph (level 0 is the Title style) whose runs carry the East-Asian font."""
    paragraph = doc.add_heading("", level=min(max(level, 0), 9))
    add_text(paragraph, text, east_asian)
    return paragraph


def add_paragraph(
    doc: DocumentObject, text: str, east_asian: str | None, style: str | None = None, *, quoted: bool = False
) -> Paragraph:
    """A body paragraph; an unknown style falls back to Normal rather than failing the render."""
    try:
        paragraph = doc.add_paragraph(style=style)
    except KeyError:
        logger.warning("style %r not in the template; using Normal", style)
        paragraph = doc.add_paragraph()
    add_text(paragraph, text, east_asian, quoted=quoted)
    return paragraph


def add_picture(doc: DocumentObject, image: BinaryIO, alt: str) -> None:
    """Embed a chart at the width it was drawn for, with its alt text on the drawing (``wp:docPr/@descr``).

    ``image`` is the chart's bytes, read by the caller through ``fileio``: python-docx would open a path itself,
    following a link a script planted there.
    """
    shape = doc.add_picture(image, width=Inches(CHART_WIDTH_IN))
    doc_pr = shape._inline.docPr
    doc_pr.set("descr", alt)
    doc_pr.set("title", alt[:250])
    doc.paragraphs[-1].alignment = WD_ALIGN_PARAGRAPH.CENTER


def add_caption(doc: DocumentObject, text: str, east_asian: str | None) -> Paragraph:
    """An italic caption paragraph under a figure."""
    try:
        paragraph = doc.add_paragraph(style="Caption")
    except KeyError:
        paragraph = doc.add_paragraph()
    add_text(paragraph, text, east_asian, italic=True)
    return paragraph


def add_table(doc: DocumentObject, rows: list[list[str]], east_asian: str | None) -> Table:
    """A grid table whose first row is a bold, repeating header row."""
    table = doc.add_table(rows=len(rows), cols=len(rows[0]))
    try:
        table.style = doc.styles["Table Grid"]
    except KeyError:
        logger.debug("template has no 'Table Grid' style")
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            paragraph = table.cell(r, c).paragraphs[0]
            add_text(paragraph, f"**{text}**" if r == 0 and text and "**" not in text else text, east_asian)
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    return table
