"""Plan items settled as not possible are listed in the report's Limitations on every render, quoted as labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from docx import Document

from insightloom.report.audit import audit_report
from insightloom.report.render import render_report

ITEM = "Forecast 2027 revenue for the top 5 regions with 3 models"
PLAN = f"""# Plan
## steps
### 1. Coder: Analysis
- [x] Total revenue
- [~] {ITEM} — not possible: the data covers only 10 days
### 2. Validator: Check
- [x] Re-check every number
"""
REPORT = "# Sales\n\n## Summary\n\nTotal revenue is {{calc:total_revenue}}.\n"


def body(job: Path) -> list[str]:
    return [p.text for p in Document(str(job / "final_report.docx")).paragraphs]


def test_not_possible_items_are_listed_with_their_reasons_and_pass_the_audit(job: Path) -> None:
    (job / "plan.md").write_text(PLAN, encoding="utf-8")
    render_report(REPORT, job)
    paragraphs = body(job)
    at = paragraphs.index("Limitations")
    assert paragraphs[at + 1] == f"{ITEM} — not possible: the data covers only 10 days"
    result = audit_report(job)
    assert result.verdict == "pass" and result.stats["type_a"] == 0  # the plan's words are labels, not claims
    render_report(REPORT, job)  # a re-render lists them once, from plan.md, not from the stored Markdown
    assert body(job).count("Limitations") == 1
    assert "Limitations" not in (job / "report.md").read_text(encoding="utf-8")


def test_the_reports_own_limitations_heading_gets_the_items(job: Path) -> None:
    (job / "plan.md").write_text(PLAN, encoding="utf-8")
    render_report(REPORT + "\n## Limitations\n\nThe data is a sample.\n", job)
    paragraphs = body(job)
    assert paragraphs.count("Limitations") == 1
    assert paragraphs[paragraphs.index("Limitations") + 1].startswith(ITEM)


def test_no_settled_items_means_no_limitations_section(job: Path) -> None:
    (job / "plan.md").write_text(
        PLAN.replace("- [~]", "- [x]").replace(" — not possible: the data covers only 10 days", "")
    )
    render_report(REPORT, job)
    assert "Limitations" not in body(job)


@pytest.mark.parametrize(
    ("item", "reason", "printed"),
    [
        (
            "Compare **Q3** revenue across 12 stores",
            "needs the **store** column, absent in 2 files",
            "Compare Q3 revenue across 12 stores — not possible: needs the store column, absent in 2 files",
        ),
        (
            "Growth of `tier` 5",
            "the check for {{calc:growth}} failed [3]",
            "Growth of tier 5 — not possible: the check for calc growth failed (3)",
        ),
    ],
)
def test_markup_in_an_item_or_reason_stays_one_label(job: Path, item: str, reason: str, printed: str) -> None:
    plan = PLAN.replace(f"{ITEM} — not possible: the data covers only 10 days", f"{item} — not possible: {reason}")
    (job / "plan.md").write_text(plan, encoding="utf-8")
    render_report(REPORT, job)  # no typed number, unknown reference or marker refused in the plan's words
    paragraphs = body(job)
    assert paragraphs[paragraphs.index("Limitations") + 1] == printed
    result = audit_report(job)
    assert result.verdict == "pass" and result.stats["type_a"] == result.stats["type_c"] == 0
