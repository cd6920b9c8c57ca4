"""Issue 11, item 1: a number typed as digits is refused at render time, and an uncited number left in a finished
DOCX blocks the audit. Labels (table header row and first column, backtick text, the data's names and category
values, quoted labels, a cited text value) are neither refused nor flagged: a render that passed never yields A."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document

from insightloom.errors import RenderRefused
from insightloom.report.audit import audit_report
from insightloom.report.render import render_report
from insightloom.validation import validate_job

CLEAN = """# Sales

## Summary
Revenue was {{calc:total_revenue}} over {{calc:order_count}} orders.
"""


def _typed_problems(err: RenderRefused) -> list[tuple[str, str, str]]:
    return [(p["number"], p["section"], p["where"]) for p in err.problems if p["kind"] == "typed_number"]  # type: ignore[attr-defined]


def test_typed_numbers_in_prose_and_table_cells_are_refused(job: Path) -> None:
    markdown = (
        "# Sales\n\n## Summary\nRevenue grew 12.5% to {{calc:total_revenue}} over 34 orders.\n\n"
        "## Breakdown\n| Region | Orders |\n|---|---|\n| North | 77 |\n| South | {{calc:order_count}} |\n"
    )
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    assert _typed_problems(info.value) == [
        ("12.5", "Summary", "paragraph 1"),
        ("34", "Summary", "paragraph 1"),
        ("77", "Breakdown", "table 1 row 2 col 2"),
    ]
    text = str(info.value)
    assert "typed number '12.5' in section 'Summary', paragraph 1" in text
    assert "{{calc:<id>}}" in text and "Revenue grew 12.5%" in text  # the fix and the passage, as written
    assert not (job / "final_report.docx").exists()


def _add_profile_labels(job: Path) -> None:
    """A ZIP code and a plan name as category values, and a column whose name holds digits."""
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    profile["tables"][0]["columns"] = [
        {"name": "zip", "role": "category", "top_values": [{"value": 10001, "count": 6}], "samples": [10001]},
        {"name": "plan", "role": "category", "top_values": [{"value": "Plan 500", "count": 4}], "samples": []},
        {"name": "Sales 2Q", "role": "measure", "samples": [1, 2]},
        {"name": "amount", "role": "measure", "samples": [1, 2]},
    ]
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")


LABELLED = """# Sales

## Summary
ZIP 10001 leads with {{calc:total_revenue}}; the tier "Gold 7" and Plan 500 follow, see `SKU 1042` and Sales 2Q.

| Store 12 | Orders 2025 |
|---|---|
| 10001 | {{calc:order_count}} |
| 3 | {{calc:roas}} |
"""


def test_labels_render_and_pass_the_audit_with_no_a(job: Path) -> None:
    _add_profile_labels(job)
    render_report(LABELLED, job)
    result = audit_report(job)
    assert result.stats["type_a"] == 0, [f["body_value"] for f in result.findings if f["type"] == "A"]
    assert result.verdict == "pass"


@pytest.mark.parametrize(
    ("file", "title"),
    [
        ("t100k.csv", "T100K Analysis Report"),
        ("t1m.csv", "T1M Analysis Report"),
        ("sales_2024.xlsx", "Sales 2024 Analysis Report"),
    ],
)
def test_a_title_naming_the_data_file_is_no_typed_number(job: Path, file: str, title: str) -> None:
    """A report titled after its input ("T100K" for t100k.csv) names the data: refusing it left a job that the
    Reporter's repair could not finish, since the title came from the file's name."""
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    profile["tables"][0] |= {"file": file, "view": Path(file).stem}
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    render_report(CLEAN.replace("# Sales", f"# {title}"), job)
    with pytest.raises(RenderRefused) as info:
        render_report(CLEAN.replace("# Sales", f"# {title} of 34 stores"), job)
    assert [number for number, _, _ in _typed_problems(info.value)] == ["34"]


def test_the_same_numbers_outside_labels_are_refused(job: Path) -> None:
    _add_profile_labels(job)
    markdown = '# Sales\n\n## Summary\nWe sold 1042 units in 12 stores, "12.5%" more.\n'
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    assert [number for number, _, _ in _typed_problems(info.value)] == ["1042", "12", "12.5"]


def test_a_cited_text_value_holding_digits_is_not_a(job: Path) -> None:
    meta = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))
    meta["calculations"].append(
        {
            "id": "top_plan",
            "value": "Plan 5 Premium Gold Members Club",
            "description": "Top plan",
            "formula": "mode",
            "source_file": "sales.csv",
            "source_columns": ["region"],
            "importance": "high",
            "check": "SELECT 'Plan 5 Premium Gold Members Club' FROM data LIMIT 1",
        }
    )
    (job / "calculation_metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    validate_job(job)
    render_report("# Sales\n\n## Summary\nThe top plan is {{calc:top_plan}}.\n", job)
    result = audit_report(job)
    assert result.stats["type_a"] == 0 and result.verdict == "pass"


def _insert_paragraph(docx: Path, text: str) -> None:
    doc = Document(str(docx))
    doc.paragraphs[2].insert_paragraph_before(text)
    doc.save(str(docx))


def test_an_uncited_number_in_the_finished_docx_blocks_with_a_fix(job: Path, schema) -> None:
    docx = render_report(CLEAN, job).docx_path
    _insert_paragraph(docx, "We also saw 12,345 returns.")
    result = audit_report(job)
    a = [f for f in result.findings if f["type"] == "A"]
    assert [(f["body_value"], f["severity"]) for f in a] == [("12,345", "block")]
    assert result.verdict == "retry" and not result.passed
    assert audit_report(job, retry_count=2).verdict == "needs_review"
    fix = a[0]["suggested_fix"]
    assert "'12,345'" in fix and "section 'Summary'" in fix and "{{calc:<id>}}" in fix and "render_section" in fix
    schema("audit_findings", json.loads((job / "audit_findings.json").read_text(encoding="utf-8")))


def test_a_typed_number_in_a_table_body_cell_of_the_docx_blocks(job: Path) -> None:
    docx = render_report(CLEAN + "\n| Metric | Value |\n|---|---|\n| 2024 | {{calc:order_count}} |\n", job).docx_path
    doc = Document(str(docx))
    doc.tables[0].rows[1].cells[1].paragraphs[0].runs[0].text = "77"
    doc.save(str(docx))
    result = audit_report(job)
    a = [f for f in result.findings if f["type"] == "A"]
    assert [(f["body_value"], f["location"]) for f in a] == [("77", "table 1 row 2 col 2 (section 'Summary')")]
    assert result.verdict == "retry"


@pytest.mark.parametrize("typed", ["`12.5%`", "`34건`", "`1,234`", "`$1,200`"])
def test_a_number_in_backticks_is_still_a_typed_number(job: Path, typed: str) -> None:
    with pytest.raises(RenderRefused) as info:
        render_report(f"# T\n\n## Sales\n\nRevenue grew {typed} this year.\n", job)
    assert typed.strip("`").lstrip("$") in str(info.value)


def test_names_in_backticks_stay_labels(job: Path) -> None:
    render_report("# T\n\n## Sales\n\nThe `region` column, the `2023` cohort and the `Q3` plan.\n", job)
    assert audit_report(job).stats["type_a"] == 0
