"""The finished report's pages as LibreOffice prints them: a short references appendix and a layout that holds.

For ``insightloom demo`` and the four shared datasets (their copies in ``tests/data``, so this never skips for want
of ``../shared``), the job's own PDF (LibreOffice, written beside the DOCX) is read page by page with poppler:

- the appendix, from its heading to the end, takes at most a quarter of the pages;
- no table has a row alone on a page, and a table that fits on a page is on one page;
- each figure's caption is on the page of its picture;
- no heading is the last thing on its page.

LibreOffice and poppler-utils are installed by ``.ci/run``: in CI their absence fails the test instead of skipping it.
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from docx import Document
from docx.table import Table
from docx.text.paragraph import Paragraph

from insightloom.report import docx_build as build
from insightloom.report.pdf import appendix_pages, docx_to_pdf, find_libreoffice, image_pages, page_texts
from insightloom.report.render import REFERENCES_HEADINGS
from repo_paths import DATA, child_env

pytestmark = pytest.mark.e2e
REQUEST = "Analyze this data and write a DOCX report"
INSTALL_HINT = "apt-get install libreoffice-writer-nogui fonts-noto-cjk poppler-utils"
#: A table this short always fits on a page, so it must not be split at all.
SHORT_TABLE_ROWS = 20
DATASETS = [
    "moon-market-en/moon-market-fresh-food-sales.csv",
    "moon-market-kr/moon-market-fresh-food-sales.csv",
    "yummy-food/yummy-food-market.csv",
    "training-assessment/training_assessment.xlsx",
]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _require_tools() -> None:
    found = {
        "soffice": find_libreoffice(),
        "pdftotext": shutil.which("pdftotext"),
        "pdfimages": shutil.which("pdfimages"),
    }
    missing = [name for name, path in found.items() if path is None]
    if not missing:
        return
    message = f"{', '.join(missing)} not installed: the page test needs them ({INSTALL_HINT})"
    if _in_ci():
        pytest.fail(f"{message}; .ci/run must install them.")
    pytest.skip(message)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = child_env("AWS_ACCESS", "AWS_SECRET", "INSIGHTLOOM_")
    return subprocess.run(
        [sys.executable, "-m", "insightloom", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _squash(text: str) -> str:
    """Text with no white space or hyphen: a PDF wraps lines where the DOCX has none, and pdftotext drops the hyphen
    of a word broken at a line's end ("promotion-ids" reads "promotionids")."""
    return re.sub(r"[\s\u00ad-]+", "", text)


class PdfText:
    """The PDF's pages as one squashed text, searched forward in reading order."""

    def __init__(self, pages: list[str]) -> None:
        self.text, self.starts, self.cursor = "", [], 0
        for page in pages:
            self.starts.append(len(self.text))
            self.text += _squash(page)

    def page(self, offset: int) -> int:
        """The 1-based page holding the character at ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def find(self, text: str) -> tuple[int, int] | None:
        """The first and last page of ``text``'s next occurrence after the last one found, or None."""
        needle = _squash(text)
        at = self.text.find(needle, self.cursor) if needle else -1
        if at < 0:
            return None
        self.cursor = at + len(needle)
        return self.page(at), self.page(self.cursor - 1)


@dataclass
class Placed:
    """One element of the DOCX body and the pages it is printed on (None: not found in the PDF text)."""

    kind: str  # "heading", "caption", "paragraph" or "table"
    text: str
    pages: tuple[int, int] | None
    rows: list[int | None] | None = None  # a table: the page of each row


def _style(paragraph: Paragraph) -> str:
    return paragraph.style.name if paragraph.style is not None else ""


def _row_key(cells: list[str]) -> str:
    # Only the first filled cell: pdftotext may read a table column by column, and first cells stay in order either way.
    return next((cell for cell in cells if _squash(cell)), "")


def place_body(docx: Path, pages: list[str]) -> list[Placed]:
    """The body's headings, captions, paragraphs and tables before the References heading, with their pages."""
    doc = Document(str(docx))
    pdf = PdfText(pages)
    placed: list[Placed] = []
    for child in doc.element.body.iterchildren():
        if child.tag.endswith("}tbl"):
            table = Table(child, doc)
            rows = []
            for row in table.rows:
                found = pdf.find(_row_key([cell.text for cell in row.cells]))
                rows.append(found[0] if found else None)
            pages_of = [p for p in rows if p is not None]
            span = (min(pages_of), max(pages_of)) if pages_of else None
            placed.append(Placed("table", table.rows[0].cells[0].text, span, rows))
        elif child.tag.endswith("}p"):
            paragraph = Paragraph(child, doc)
            style = _style(paragraph)
            if style.startswith("Heading") and paragraph.text.strip() in REFERENCES_HEADINGS.values():
                break
            kind = "heading" if style.startswith(("Heading", "Title")) else "caption" if style == "Caption" else ""
            if paragraph.text.strip():
                placed.append(Placed(kind or "paragraph", paragraph.text, pdf.find(paragraph.text)))
    return placed


def layout_problems(placed: list[Placed], pictures: list[int]) -> list[str]:
    """Every layout rule the printed body breaks, one line each."""
    problems = []
    tables = [p for p in placed if p.kind == "table"]
    for n, table in enumerate(tables, 1):
        rows = table.rows or []
        if None in rows:
            problems.append(f"table {n} ({table.text!r}): row {rows.index(None) + 1} not found in the PDF text")
            continue
        per_page = Counter(rows)
        if len(per_page) > 1 and 1 in per_page.values():
            problems.append(f"table {n} ({table.text!r}): a row stands alone on a page (rows per page {per_page})")
        if len(per_page) > 1 and len(rows) <= SHORT_TABLE_ROWS:
            problems.append(f"table {n} ({table.text!r}): {len(rows)} rows split over pages {sorted(per_page)}")
    captions = [p for p in placed if p.kind == "caption"]
    if len(captions) != len(pictures):
        problems.append(f"{len(captions)} captions but {len(pictures)} pictures in the PDF")
    for caption, picture in zip(captions, pictures, strict=False):
        if caption.pages is None or caption.pages[0] != picture:
            problems.append(f"caption {caption.text[:60]!r} on page {caption.pages}, its figure on page {picture}")
    for heading, after in zip(placed, placed[1:], strict=False):
        if heading.kind != "heading" or heading.pages is None or after.pages is None:
            continue
        if after.pages[0] != heading.pages[1]:
            problems.append(f"heading {heading.text[:60]!r} ends page {heading.pages[1]}; its text starts the next")
    problems += [
        f"heading {p.text[:60]!r} not found in the PDF text" for p in placed if p.kind == "heading" and not p.pages
    ]
    return problems


def _check_pages(job_dir: Path, done: subprocess.CompletedProcess[str]) -> None:
    docx, pdf = job_dir / "final_report.docx", job_dir / "final_report.pdf"
    assert docx.is_file() and pdf.is_file(), done.stderr[-3000:]
    pages = page_texts(pdf)
    appendix = max(appendix_pages(pages, heading) for heading in REFERENCES_HEADINGS.values())
    assert appendix >= 1, f"no references heading ({REFERENCES_HEADINGS}) in the PDF"
    assert appendix * 4 <= len(pages), f"the appendix takes {appendix} of {len(pages)} pages (at most a quarter)"
    problems = layout_problems(place_body(docx, pages), image_pages(pdf))
    assert not problems, problems


@pytest.mark.parametrize("data", DATASETS)
def test_shared_dataset_report_pages(data: str, tmp_path: Path) -> None:
    _require_tools()
    job_dir = tmp_path / "job"
    done = _cli("run", str(DATA / data), "-r", REQUEST, "--provider", "offline", "--yes", "--job-dir", str(job_dir),
                cwd=tmp_path)  # fmt: skip
    _check_pages(job_dir, done)


def test_demo_report_pages(tmp_path: Path) -> None:
    _require_tools()
    job_dir = tmp_path / "demo"
    _check_pages(job_dir, _cli("demo", "--job-dir", str(job_dir), cwd=tmp_path))


def _pages_of_a_table(folder: Path, *, kept: bool) -> list[str]:
    """The layout problems of a page nearly full of text followed by a table, built raw or by ``docx_build``."""
    rows = [["Region", "Total"], *[[f"Region {i}", f"{i * 1000} USD"] for i in range(1, 13)]]
    doc = Document()
    for i in range(25):
        doc.add_paragraph(f"Filler paragraph {i} that takes one line of the page.")
    if kept:
        build.add_table(doc, rows, None)
    else:
        table = doc.add_table(rows=len(rows), cols=2)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                table.cell(r, c).text = text
    folder.mkdir()
    doc.save(str(folder / "final_report.docx"))
    pdf = docx_to_pdf(folder / "final_report.docx")
    assert pdf is not None
    return layout_problems(place_body(folder / "final_report.docx", page_texts(pdf)), image_pages(pdf))


def test_the_page_check_sees_a_split_table_and_the_builder_keeps_it_whole(tmp_path: Path) -> None:
    _require_tools()
    raw = _pages_of_a_table(tmp_path / "raw", kept=False)
    assert any("split over pages" in problem for problem in raw), raw
    assert _pages_of_a_table(tmp_path / "kept", kept=True) == []
