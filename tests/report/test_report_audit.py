"""audit_report: findings A-D, what is not a defect, verdicts and the contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document
from report_fixtures import ENGLISH_MD

from insightloom.errors import BadInputError
from insightloom.report.audit import audit_report
from insightloom.report.numbers import find_numbers
from insightloom.report.render import render_report


def _edit_docx(docx: Path, old: str, new: str) -> None:
    """Replace text inside one run (runs holding drawings are left alone)."""
    doc = Document(str(docx))
    cells = [p for t in doc.tables for r in t.rows for c in r.cells for p in c.paragraphs]
    for paragraph in [*doc.paragraphs, *cells]:
        for run in paragraph.runs:
            if old in run.text:
                run.text = run.text.replace(old, new, 1)
                doc.save(str(docx))
                return
    raise AssertionError(f"{old!r} not found")


def _findings(job: Path) -> dict:
    return json.loads((job / "audit_findings.json").read_text(encoding="utf-8"))


def test_rendered_report_passes(job: Path, schema) -> None:
    render_report(ENGLISH_MD, job)
    result = audit_report(job)
    assert result.verdict == "pass" and result.passed
    assert result.stats == {"type_a": 0, "type_b": 0, "type_c": 0, "type_d": 2, "type_e": 0}
    assert {f["cited_calculation_id"] for f in result.findings} == {"tampered", "unchecked"}
    data = _findings(job)
    schema("audit_findings", data)
    assert data["verdict"] == "pass" and data["audit_metadata"]["audited_at"].endswith("Z")
    assert "Audit verdict: pass" in result.to_text()


def test_edited_cited_number_is_type_b(job: Path, schema) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    _edit_docx(docx, "16,420,045 KRW [1] across", "16,420,046 KRW [1] across")
    result = audit_report(job)
    b = [f for f in result.findings if f["type"] == "B"]
    assert len(b) == 1 and result.verdict == "retry"
    assert b[0]["marker"] == "[1]" and b[0]["severity"] == "block"
    assert b[0]["body_value"] == "16,420,046 KRW" and b[0]["cited_value"] == "16,420,045 KRW"
    assert b[0]["cited_calculation_id"] == "total_revenue"
    assert b[0]["location"] == "paragraph 3 (section 'Summary')"
    schema("audit_findings", _findings(job))


def test_edited_number_in_a_table_cell_is_type_b(job: Path) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    _edit_docx(docx, "10 [2]", "11 [2]")  # the first occurrence: the prose
    doc = Document(str(docx))
    doc.tables[0].rows[1].cells[1].paragraphs[0].runs[0].text = "12 [2]"
    doc.save(str(docx))
    locations = [f["location"] for f in audit_report(job).findings if f["type"] == "B"]
    assert "table 1 row 2 col 2 (section 'Breakdown')" in locations and len(locations) == 2


def test_prefix_digits_do_not_fake_a_match(job: Path) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    _edit_docx(docx, "16,420,045 KRW [1] across", "116,420,045 KRW [1] across")
    assert audit_report(job).stats["type_b"] == 1


def test_undefined_marker_is_type_c(job: Path) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    _edit_docx(docx, "orders in 2025.", "orders in 2025 [99].")
    result = audit_report(job)
    c = [f for f in result.findings if f["type"] == "C"]
    assert len(c) == 1 and c[0]["marker"] == "[99]" and c[0]["severity"] == "block"
    assert result.verdict == "retry"


def test_uncited_number_is_type_a_and_blocks(job: Path) -> None:
    # The renderer refuses typed numbers, so they can only reach the DOCX by an edit after rendering.
    markdown = ENGLISH_MD + "\n| K | V |\n|---|---|\n| Refunds | {{calc:order_count}} |\n"
    docx = render_report(markdown, job).docx_path
    _edit_docx(docx, "details from 2025-09-01.", "details from 2025-09-01. We also saw 12,345 returns.")
    doc = Document(str(docx))
    doc.tables[1].rows[1].cells[1].paragraphs[0].runs[0].text = "77"
    doc.save(str(docx))
    result = audit_report(job)
    a = [f for f in result.findings if f["type"] == "A"]
    assert [f["body_value"] for f in a] == ["12,345", "77"]
    assert a[0]["severity"] == "block" and "12,345 returns" in a[0]["body_excerpt"]
    assert a[1]["location"] == "table 2 row 2 col 2 (section 'Breakdown')"
    assert result.verdict == "retry"


def test_verdict_becomes_needs_review_after_max_retries(job: Path) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    _edit_docx(docx, "orders in 2025.", "orders in 2025 [99].")
    assert audit_report(job, retry_count=1).verdict == "retry"
    assert audit_report(job, retry_count=2).verdict == "needs_review"
    assert audit_report(job, retry_count=0, max_retries=0).verdict == "needs_review"
    assert _findings(job)["audit_metadata"]["retry_count"] == 0


def test_references_are_excluded_from_the_body(job: Path) -> None:
    render_report(ENGLISH_MD + "\nExtra {{calc:roas}}.\n", job)
    # Reference lines hold formulas and markers; none of them may count as body numbers or citations.
    result = audit_report(job)
    assert result.stats["type_a"] == 0 and result.stats["type_c"] == 0


def test_missing_docx_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="final_report.docx"):
        audit_report(tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "In 2025 sales grew, compared with 1999 and 2100.",
        "Orders on 2025-09-01, 5/1/25, 2025/09/01 and in May 2025, May 3, 2025 and 3 May 2025 at 10:30.",
        "The 1st, 2nd and 3rd weeks; customers in their 30s; 50대 고객; FRUITPROMO5; Q3 and H1.",
        "Figure 2 and Table 1 and Section 3 and 그림 2 show the Top 5 regions.",
        "1. First point",
        "2) Second point",
        "Revenue was 16,420,045 KRW [1] and the share 45.2% [3].",
        "Version codes like SKU_12 or v2.0.1 are labels.",
    ],
)
def test_not_defects(text: str) -> None:
    assert [t.text for t in find_numbers(text) if not t.cited] == []


@pytest.mark.parametrize(
    ("text", "uncited"),
    [
        ("Returns rose to 12,345 units.", ["12,345"]),
        ("The margin fell by -3.5 points to 45.2%.", ["-3.5", "45.2"]),
        ("In 2025 there were 836 orders.", ["836"]),
        ("Average basket 1,234.56 KRW [2] vs 999.", ["999"]),
    ],
)
def test_uncited_claims_are_found(text: str, uncited: list[str]) -> None:
    assert [t.text for t in find_numbers(text) if not t.cited] == uncited


def test_korean_report_passes_audit(tmp_path: Path) -> None:
    from report_fixtures import KOREAN_MD, build_job

    job = build_job(tmp_path / "job", korean=True)
    render_report(KOREAN_MD, job)
    result = audit_report(job)
    assert result.verdict == "pass"
    assert result.stats["type_a"] == 0 and result.stats["type_c"] == 0
