"""render_report: markers, references, charts, tables, refusal, Korean fonts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docx import Document
from docx.oxml.ns import qn
from docx.shared import Inches
from report_fixtures import ENGLISH_MD, KOREAN_MD, build_job

from insightloom.errors import RenderRefused
from insightloom.fonts import find_cjk_font
from insightloom.report import pdf
from insightloom.report.render import docx_to_pdf, render_report


def _texts(docx: Path) -> list[str]:
    return [p.text for p in Document(str(docx)).paragraphs]


def test_render_fills_values_and_markers(job: Path, schema) -> None:
    result = render_report(ENGLISH_MD, job)
    assert result.markers == {"total_revenue": "[1]", "order_count": "[2]", "top_share": "[3]", "roas": "[4]"}
    texts = _texts(result.docx_path)
    assert texts[0] == "Sales Report"
    body = "\n".join(texts)
    assert "Total revenue was 16,420,045 KRW [1] across 10 [2] orders in 2025." in body
    assert "North took 50.0% [3] of revenue; ROAS was 0.51 [4]." in body
    assert "Revenue again: 16,420,045 KRW [1]." in body  # same calc reuses its marker
    assert "{{" not in body
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    schema("citations", citations)
    ids = {c["calculation_id"]: c["citation_id"] for c in citations["citations"]}
    assert ids == {
        "total_revenue": "[1]",
        "order_count": "[2]",
        "top_share": "[3]",
        "roas": "[4]",
        "tampered": None,
        "unchecked": None,
    }
    assert citations["metadata"]["cited_calculations"] == 4
    assert (job / "report.md").read_text(encoding="utf-8") == ENGLISH_MD


def test_references_section_lists_markers_in_order(job: Path) -> None:
    texts = _texts(render_report(ENGLISH_MD, job).docx_path)
    at = texts.index("References")
    assert texts[at + 1] == "Summary"  # the appendix groups its entries by the section they first appear in
    refs = texts[at + 2 :]
    assert refs[0] == "[1] Total revenue \u2014 SQL: SELECT SUM(amount) FROM data"
    assert [r.split(" ", 1)[0] for r in refs] == ["[1]", "[2]", "[3]", "[4]"]


def test_chart_is_embedded_with_alt_text_and_caption(job: Path) -> None:
    result = render_report(ENGLISH_MD, job)
    doc = Document(str(result.docx_path))
    assert result.charts == ["charts/revenue.png"] and not result.warnings
    shape = doc.inline_shapes[0]
    assert shape.width == Inches(6.0)
    assert shape._inline.docPr.get("descr") == "Revenue by region bar chart"
    caption = next(p for p in doc.paragraphs if p.text.startswith("Figure 1:"))
    assert caption.text == "Figure 1: Revenue by region"
    assert all(run.italic for run in caption.runs)


def test_table_has_header_row_and_cited_cells(job: Path) -> None:
    result = render_report(ENGLISH_MD, job)
    table = Document(str(result.docx_path)).tables[0]
    assert result.tables == 1
    assert [c.text for c in table.rows[0].cells] == ["Metric", "Value"]
    assert table.rows[0].cells[0].paragraphs[0].runs[0].bold
    assert table.rows[2].cells[1].text == "16,420,045 KRW [1]"
    assert table.rows[2].cells[0].text == "Revenue"  # **bold** markup rendered, not printed


def test_unverified_reference_refuses_and_names_everything(job: Path) -> None:
    (job / "final_report.docx").unlink(missing_ok=True)
    markdown = "# R\n\n## Findings\nTotal {{calc:tampered}} and {{calc:nope}}.\n\n## Other\nCount {{calc:unchecked}}.\n"
    with pytest.raises(RenderRefused) as info:
        render_report(markdown, job)
    err = info.value
    assert {(p["calc_id"], p["status"], p["section"]) for p in err.problems} == {
        ("tampered", "needs_review", "Findings"),
        ("nope", "unknown", "Findings"),
        ("unchecked", "unverified", "Other"),
    }
    text = str(err)
    assert "tampered" in text and "needs_review" in text and "nope" in text and "'Findings'" in text
    assert "Total {{calc:tampered}}" in text  # the paragraph excerpt
    assert not (job / "final_report.docx").exists()
    assert (job / "report.md").read_text(encoding="utf-8") == markdown
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    assert citations["metadata"]["cited_calculations"] == 0


def test_unknown_reference_is_refused(job: Path) -> None:
    with pytest.raises(RenderRefused, match="nope"):
        render_report("# R\n\nValue {{calc:nope}}.\n", job)


def test_korean_report_gets_korean_heading_and_east_asian_font(tmp_path: Path) -> None:
    job = build_job(tmp_path / "job", korean=True)
    result = render_report(KOREAN_MD, job)
    doc = Document(str(result.docx_path))
    texts = [p.text for p in doc.paragraphs]
    assert "참고 문헌" in texts and "References" not in texts
    font = find_cjk_font()
    family = font.family if font else "Malgun Gothic"
    body = next(p for p in doc.paragraphs if p.text.startswith("총 매출은"))
    assert body.text == "총 매출은 16,420,045 KRW [1]이며 주문은 10 [2]건입니다."
    for run in body.runs:
        assert run._element.rPr.rFonts.get(qn("w:eastAsia")) == family


def test_status_note_is_shown_under_the_title(job: Path) -> None:
    texts = _texts(render_report(ENGLISH_MD, job, title="Custom", status_note="Some values need review.").docx_path)
    assert texts[0] == "Custom"
    assert texts[1] == "Note: Some values need review."


def test_missing_chart_is_a_warning_not_a_failure(job: Path) -> None:
    result = render_report("# R\n\n![x](charts/none.png)\n\n![y](../../etc/passwd)\n", job)
    assert result.charts == [] and len(result.warnings) == 2


def test_pdf_is_none_without_libreoffice(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docx = render_report(ENGLISH_MD, job).docx_path
    monkeypatch.setattr(pdf.shutil, "which", lambda name: None)
    assert docx_to_pdf(docx) is None


def test_rerender_renumbers_and_clears_stale_markers(job: Path) -> None:
    render_report(ENGLISH_MD, job)
    result = render_report("# R\n\nROAS {{calc:roas}}.\n", job)
    assert result.markers == {"roas": "[1]"}
    citations = json.loads((job / "citations.json").read_text(encoding="utf-8"))
    assert {c["calculation_id"]: c["citation_id"] for c in citations["citations"] if c["citation_id"]} == {
        "roas": "[1]"
    }
    assert citations["metadata"]["cited_calculations"] == 1


def test_render_before_validation_refuses(tmp_path: Path) -> None:
    with pytest.raises(RenderRefused, match="run validation first") as info:
        render_report("# R\n\nTotal {{calc:total_revenue}}.\n", tmp_path)
    assert info.value.problems[0]["calc_id"] == "total_revenue"


def test_korean_report_captions_figures_in_korean(tmp_path: Path) -> None:
    job = build_job(tmp_path / "job", korean=True)
    result = render_report(KOREAN_MD + "\n![매출 막대 차트](charts/revenue.png)\n", job)
    texts = [p.text for p in Document(str(result.docx_path)).paragraphs]
    assert "그림 1: Revenue by region" in texts and not any(t.startswith("Figure") for t in texts)


STAND_IN_SOFFICE = """#!/bin/sh
# Stands in for LibreOffice where it is not installed: records its arguments, writes a PDF like --convert-to would.
printf '%s\\n' "$@" > "$(dirname "$0")/args.txt"
while [ "$#" -gt 1 ]; do
  if [ "$1" = "--outdir" ]; then outdir="$2"; fi
  shift
done
name=$(basename "$1" .docx)
printf '%%PDF-1.7 stand-in' > "$outdir/$name.pdf"
"""


def test_pdf_export_converts_with_a_private_profile(job: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Real LibreOffice where it is installed; elsewhere a stand-in soffice, so the wrapper is tested everywhere.
    real = pdf.find_libreoffice()
    if real is None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "soffice").write_text(STAND_IN_SOFFICE, encoding="utf-8")
        (bin_dir / "soffice").chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    result = docx_to_pdf(render_report(ENGLISH_MD, job).docx_path)
    assert result is not None and result == job / "final_report.pdf" and result.read_bytes()[:5] == b"%PDF-"
    if real is None:
        args = (tmp_path / "bin" / "args.txt").read_text(encoding="utf-8").splitlines()
        assert "--headless" in args and args[args.index("--convert-to") + 1] == "pdf"
        assert any(a.startswith("-env:UserInstallation=file://") for a in args)  # never the shared default profile
