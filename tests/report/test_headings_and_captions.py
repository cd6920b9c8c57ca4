"""Issue 11 follow-up, item 2: the title, headings and figure captions are printed claims like any prose. A typed
number there is refused at render and flagged A in the DOCX; a heading's own numbering, years and dates are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document

from insightloom.errors import RenderRefused
from insightloom.report.audit import audit_report
from insightloom.report.render import render_report

BODY = "Revenue was {{calc:total_revenue}}.\n"


def _problems(job: Path, markdown: str) -> list[tuple[str, str, str]]:
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    return [(p["number"], p["section"], p["where"]) for p in info.value.problems]  # type: ignore[attr-defined]


def test_a_typed_number_in_the_title_or_a_heading_is_refused(job: Path) -> None:
    markdown = f"# Sales in 12 stores\n\n## Revenue grew 12.5% in 34 stores\n{BODY}"
    assert _problems(job, markdown) == [
        ("12", "Sales in 12 stores", "title"),
        ("12.5", "Revenue grew 12.5% in 34 stores", "heading"),
        ("34", "Revenue grew 12.5% in 34 stores", "heading"),
    ]


def test_section_numbering_years_and_dates_in_headings_pass(job: Path) -> None:
    markdown = (
        f"# Sales 2024\n\n## 1. Summary\n{BODY}\n## 2.1 Channels since 2024-09-01\n{BODY}\n"
        f"### 3) Top 5 regions in Q3\n{BODY}"
    )
    render_report(markdown, job)
    result = audit_report(job)
    assert result.stats["type_a"] == 0 and result.verdict == "pass"


def _caption(job: Path, caption: str) -> None:
    sidecar = {"title": "Revenue", "alt": "Bar chart", "caption": caption}
    (job / "charts" / "revenue.json").write_text(json.dumps(sidecar), encoding="utf-8")


CHART_MD = f"# Sales\n\n## Summary\n{BODY}\n![Revenue by region](charts/revenue.png)\n"


def test_a_number_in_a_charts_sidecar_caption_is_refused_naming_the_chart_and_fix(job: Path) -> None:
    _caption(job, "North leads with 61.3% of revenue in 34 stores")
    with pytest.raises(RenderRefused) as info:
        render_report(CHART_MD, job)
    problems = info.value.problems  # type: ignore[attr-defined]
    assert [(p["number"], p["where"]) for p in problems] == [
        ("61.3", "caption of charts/revenue.png"),
        ("34", "caption of charts/revenue.png"),
    ]
    text = str(info.value)
    assert "revenue.json caption" in text and "save_chart" in text and "leave ![...](charts/revenue.png) out" in text


def test_a_number_in_the_alt_text_that_becomes_the_caption_is_refused(job: Path) -> None:
    _caption(job, "")
    markdown = f"# Sales\n\n## Summary\n{BODY}\n![North took 61.3% of revenue](charts/revenue.png)\n"
    assert _problems(job, markdown) == [("61.3", "Summary", "alt text of charts/revenue.png")]


def _edit_paragraph(docx: Path, style: str, text: str) -> None:
    doc = Document(str(docx))
    paragraph = next(p for p in doc.paragraphs if p.style is not None and p.style.name == style)
    paragraph.runs[0].text = text
    for run in paragraph.runs[1:]:
        run.text = ""
    doc.save(str(docx))


@pytest.mark.parametrize(
    ("style", "text", "number"),
    [
        ("Caption", "Figure 1: North leads with 61.3% of revenue", "61.3"),
        ("Heading 1", "Revenue grew in 34 stores", "34"),
        ("Title", "Sales in 12 stores", "12"),
    ],
)
def test_the_audit_flags_a_number_in_a_caption_heading_or_title(job: Path, style: str, text: str, number: str) -> None:
    docx = render_report(CHART_MD, job).docx_path
    assert audit_report(job).verdict == "pass"
    _edit_paragraph(docx, style, text)
    result = audit_report(job)
    assert [f["body_value"] for f in result.findings if f["type"] == "A"] == [number]
    assert result.verdict == "retry"
