"""The audit on a real finished job's DOCX: an edited cited number (B), an inserted [99] (C), an uncited 12,345 (A);
each blocks."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from docx import Document
from verification_kit import citations, run_scripted, sales_csv

from insightloom.report.audit import audit_report
from insightloom.report.render import render_report

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as monkeypatch:
        outcome, _ = run_scripted(monkeypatch, root / "job", [sales_csv(root / "sales.csv")])
    assert outcome.status == "completed", outcome.error
    return root / "job"


@pytest.fixture
def job(finished: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "job"
    shutil.copytree(finished, copy)
    return copy


def _first_cited_run(doc) -> tuple[object, re.Match[str]]:
    """The first body run holding "<value> [N]" (paragraphs, then table cells)."""
    cells = [p for t in doc.tables for r in t.rows for c in r.cells for p in c.paragraphs]
    for paragraph in [*doc.paragraphs, *cells]:
        for run in paragraph.runs:
            match = re.search(r"(\d[\d,.]*)(%| [A-Z]{3})? (\[\d+\])", run.text)
            if match:
                return run, match
    raise AssertionError("no cited number in the report")


def _insert(text: str):
    """An edit adding a body paragraph after the title and note (the References section is not body)."""
    return lambda doc: doc.paragraphs[2].insert_paragraph_before(text)


def _edit(job: Path, change) -> None:
    docx = job / "final_report.docx"
    doc = Document(str(docx))
    change(doc)
    doc.save(str(docx))


def test_editing_a_cited_number_is_type_b(job: Path) -> None:
    def bump(doc) -> None:
        run, match = _first_cited_run(doc)
        run.text = run.text[: match.start(1)] + "9" + run.text[match.start(1) :]

    _edit(job, bump)
    result = audit_report(job)
    b = [f for f in result.findings if f["type"] == "B"]
    assert len(b) == 1 and b[0]["severity"] == "block" and result.verdict == "retry"
    cited = citations(job)[b[0]["cited_calculation_id"]]
    assert b[0]["marker"] == cited["citation_id"] and b[0]["body_value"].startswith("9")


def test_inserting_an_undefined_marker_is_type_c(job: Path) -> None:
    _edit(job, _insert("A claim that cites nothing [99]."))
    result = audit_report(job)
    c = [f for f in result.findings if f["type"] == "C"]
    assert [f["marker"] for f in c] == ["[99]"] and result.verdict == "retry"


def test_an_uncited_number_is_type_a(job: Path) -> None:
    _edit(job, _insert("We also counted 12,345 returns."))
    result = audit_report(job)
    a = [f for f in result.findings if f["type"] == "A"]
    assert [f["body_value"] for f in a] == ["12,345"] and a[0]["severity"] == "block"
    assert result.verdict == "retry"  # an uncited number blocks, like a wrong or undefined marker
    assert "12,345 returns" in a[0]["body_excerpt"] and "{{calc:<id>}}" in a[0]["suggested_fix"]


def test_rendering_report_md_again_restores_the_document(job: Path) -> None:
    _edit(job, _insert("A claim that cites nothing [99]."))
    assert audit_report(job).verdict == "retry"
    render_report((job / "report.md").read_text(encoding="utf-8"), job)
    result = audit_report(job)
    assert result.verdict == "pass" and result.stats["type_a"] == 0
