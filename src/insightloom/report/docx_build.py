"""python-docx helpers for the renderer: text runs, CJK fonts, pictures with alt text, captions, tables.

Charts once vanished when a paragraph's run text was reset, so these helpers only ever ADD runs; nothing here
rewrites an existing run, least of all one that holds a drawing. Backtick text gets the ``Data Label`` character
style (it looks like the text around it), which is how the audit knows it is a label and not a claim.

Layout: a table once split with one row alone on a page and a caption was orphaned from its figure, so a heading
and a picture keep with the paragraph after them, a table row never splits, and every row but the last keeps with
the next (a table moves to the next page whole when it fits there). The references appendix is set small and tight
(:func:`add_reference`), so it stays a short part of the report.
"""

from __future__ import annotations

import logging
from typing import BinaryIO

from docx.document import Document as DocumentObject
from docx.enum.section import WD_SECTION
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.section import Section
from docx.shared import Inches, Pt
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.text.run import Run

from insightloom.report.labels import LABEL_STYLE, QUOTE_STYLE
from insightloom.report.markdown_blocks import inline_runs

logger = logging.getLogger(__name__)

CHART_WIDTH_IN = 6.0
_STYLES_WITH_FONT = ("Normal", "Title", "Heading 1", "Heading 2", "Heading 3", "Caption", "List Bullet", "List Number")
REFERENCE_PT = 8
REFERENCE_COLUMNS = 2
_COLUMN_GAP_TWIPS = 360
_REFERENCE_AFTER_PT = 2
_REFERENCE_LABEL_BEFORE_PT = 6


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


def keep_with_next(paragraph: Paragraph) -> Paragraph:
    """Keep the paragraph on the page of the one after it (a heading, a picture above its caption)."""
    paragraph.paragraph_format.keep_with_next = True
    return paragraph


def add_heading(doc: DocumentObject, text: str, level: int, east_asian: str | None) -> Paragraph:
    """A heading paragraph (level 0 is the Title style) whose runs carry the East-Asian font, kept with what follows
    (a heading alone at the foot of a page reads as a lost section)."""
    paragraph = doc.add_heading("", level=min(max(level, 0), 9))
    add_text(paragraph, text, east_asian)
    return keep_with_next(paragraph)


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
    paragraph = doc.paragraphs[-1]
    paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    keep_with_next(paragraph)  # the caption comes next: never a page apart from its figure


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
    keep_together(table)
    return table


def keep_together(table: Table) -> None:
    """No row split across pages, and every row but the last kept with the next, so no row stands alone on a page."""
    last = len(table.rows) - 1
    for r, row in enumerate(table.rows):
        row._tr.get_or_add_trPr().append(OxmlElement("w:cantSplit"))
        if r == last:
            continue
        for cell in row.cells:
            for paragraph in cell.paragraphs:
                keep_with_next(paragraph)


def start_columns(doc: DocumentObject, count: int = REFERENCE_COLUMNS) -> None:
    """Set what is added from here on in ``count`` columns, on the same page (a continuous section break).

    The break is an empty paragraph one point high that ends the section before: a heading that ended it itself
    would be cut off from its text, since LibreOffice keeps no paragraph with the next across a section break.
    """
    sentinel = doc.element.body.get_or_add_sectPr()  # the last section's properties: from here on
    mark = doc.add_paragraph()
    fmt = mark.paragraph_format
    fmt.space_before, fmt.space_after, fmt.line_spacing = Pt(0), Pt(0), Pt(1)
    mark._p.set_sectPr(sentinel.clone())  # the section before keeps the page set-up as it was
    Section(sentinel, doc.part).start_type = WD_SECTION.CONTINUOUS
    cols = sentinel.find(qn("w:cols"))
    if cols is None:
        cols = OxmlElement("w:cols")
        sentinel.append(cols)
    cols.set(qn("w:num"), str(count))
    cols.set(qn("w:space"), str(_COLUMN_GAP_TWIPS))


def _compact(paragraph: Paragraph, before: float = 0) -> Paragraph:
    fmt = paragraph.paragraph_format
    fmt.space_before, fmt.space_after, fmt.line_spacing = Pt(before), Pt(_REFERENCE_AFTER_PT), 1.0
    for run in paragraph.runs:
        run.font.size = Pt(REFERENCE_PT)
    return paragraph


def add_reference_label(doc: DocumentObject, text: str, east_asian: str | None) -> Paragraph:
    """A section's label in the references appendix: its heading's text, bold, kept with its first entry."""
    paragraph = doc.add_paragraph()
    add_text(paragraph, text, east_asian)
    for run in paragraph.runs:
        run.bold = True
    return keep_with_next(_compact(paragraph, _REFERENCE_LABEL_BEFORE_PT))


def add_reference(doc: DocumentObject, text: str, east_asian: str | None) -> Paragraph:
    """One line of the references appendix, set small and tight."""
    paragraph = doc.add_paragraph()
    add_text(paragraph, text, east_asian)
    return _compact(paragraph)
