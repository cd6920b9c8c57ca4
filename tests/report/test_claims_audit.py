"""Issue 20: the audit's finding E, "unsupported or contradicted claim", read from the final DOCX. A claim word
edited into the DOCX, a claim's printed words changed, a claim that is no longer verified and two printed claims that
contradict each block the audit (``insightloom audit`` exits 3); a rendered report with claims passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claim_fixtures import build_claims_job, printed
from docx import Document
from typer.testing import CliRunner

from insightloom.cli import app
from insightloom.config import Settings
from insightloom.errors import RenderRefused
from insightloom.report.audit import audit_report
from insightloom.report.render import render_report
from insightloom.report.repair import patch_report
from insightloom.workflow import AutoApprove, JobOptions, run_job
from small_sales import write_small_sales_csv

MARKDOWN = (
    "# Sales\n\n## Summary\nTotal revenue was {{calc:total_revenue}} across {{calc:order_count}} orders.\n\n"
    "Over the months the series shows {{claim:claim_trend_amount}}.\n\n"
    "## Regions\nBy region: {{claim:claim_driver_region}}.\n\n"
    "| Region | Share |\n|---|---|\n| North | {{calc:top_share}} |\n"
)


@pytest.fixture
def job(tmp_path: Path) -> Path:
    job = build_claims_job(tmp_path / "job")
    render_report(MARKDOWN, job)
    return job


def _edit(job: Path, change) -> None:
    docx = job / "final_report.docx"
    doc = Document(str(docx))
    change(doc)
    doc.save(str(docx))


def _paragraph(doc, needle: str):
    return next(p for p in doc.paragraphs if needle in p.text)


def _e(job: Path) -> list[dict]:
    return [f for f in audit_report(job).findings if f["type"] == "E"]


def test_a_rendered_report_with_claims_passes(job: Path, schema) -> None:
    result = audit_report(job)
    assert result.verdict == "pass", result.findings
    assert result.stats["type_e"] == 0 and result.stats["type_a"] == 0 and result.stats["type_b"] == 0
    schema("audit_findings", json.loads((job / "audit_findings.json").read_text(encoding="utf-8")))


def test_a_claim_word_inserted_into_a_paragraph_is_e(job: Path, schema) -> None:
    _edit(job, lambda doc: _paragraph(doc, "Total revenue").insert_paragraph_before("Revenue is falling sharply."))
    result = audit_report(job, retry_count=2, max_retries=2)
    data = json.loads((job / "audit_findings.json").read_text(encoding="utf-8"))
    schema("audit_findings", data)
    assert data["stats"]["type_e"] == 1 and data["verdict"] == "needs_review" and not result.passed
    (finding,) = [f for f in data["findings"] if f["type"] == "E"]
    assert finding["severity"] == "block" and finding["phrase"] == "is falling"
    assert "Summary" in finding["location"] and "Revenue is falling sharply." in finding["body_excerpt"]
    assert "{{claim:ID}}" in finding["suggested_fix"]
    assert "claim_trend_amount (trend: volatile)" in finding["suggested_fix"]
    assert "E=1" in result.to_text()


@pytest.mark.e2e
def test_a_claim_word_edited_into_a_finished_jobs_docx_makes_insightloom_audit_exit_3(tmp_path: Path) -> None:
    data = write_small_sales_csv(tmp_path / "sales.csv", rows=90, seed=3)
    settings = Settings(provider="offline").with_provider("offline")
    opts = JobOptions(inputs=[data], request="Analyze this sales data", settings=settings, job_dir=tmp_path / "job")
    outcome = run_job(opts, AutoApprove())
    assert outcome.status == "completed", outcome.error
    job = outcome.job_dir
    assert CliRunner().invoke(app, ["audit", str(job)]).exit_code == 0

    def insert(doc) -> None:
        body = next(p for p in doc.paragraphs if p.style.name == "Normal" and len(p.text) > 40)
        body.add_run(" Revenue is falling sharply.")

    _edit(job, insert)
    cli = CliRunner().invoke(app, ["audit", str(job)])
    assert cli.exit_code == 3, cli.stdout
    stats = json.loads((job / "audit_findings.json").read_text(encoding="utf-8"))["stats"]
    assert stats["type_e"] >= 1, stats


def test_a_claim_word_is_supported_in_the_sentence_of_a_claim_that_backs_it_only(job: Path) -> None:
    def prefix(text: str):
        def change(doc) -> None:
            first = _paragraph(doc, "series shows").runs[0]
            first.text = text + first.text

        return change

    _edit(job, prefix("There is no clear trend, and "))  # the cited trend claim is "volatile": it backs "no clear"
    assert _e(job) == []
    _edit(job, lambda doc: _paragraph(doc, "series shows").add_run(" Revenue is rising."))
    assert [f["phrase"] for f in _e(job)] == ["is rising"]  # a sentence of its own


def test_a_claim_word_beside_a_claim_that_says_otherwise_is_e(job: Path) -> None:
    def change(doc) -> None:
        first = _paragraph(doc, "series shows").runs[0]
        first.text = "Revenue is rising: " + first.text

    _edit(job, change)
    assert [f["phrase"] for f in _e(job)] == ["is rising"]  # the trend claim in the sentence says "volatile"
    refusal = pytest.raises(
        RenderRefused, render_report, "# S\n\n## T\nRevenue is rising: {{claim:claim_trend_amount}}.\n", job
    )
    assert "unsupported claim 'is rising'" in str(refusal.value)


def test_a_claim_word_in_a_table_cell_is_e(job: Path) -> None:
    _edit(job, lambda doc: doc.tables[0].rows[1].cells[0].paragraphs[0].add_run(" dominates"))
    (finding,) = _e(job)
    assert finding["phrase"] == "dominates" and finding["location"].startswith("table 1 row 2 col 1")


def test_a_claims_printed_words_edited_are_e(job: Path) -> None:
    def change(doc) -> None:
        paragraph = _paragraph(doc, "series shows")
        for run in paragraph.runs:
            run.text = run.text.replace("no clear trend", "a steep climb")

    _edit(job, change)
    (finding,) = _e(job)
    assert finding["problem"] == "text" and finding["cited_calculation_id"] == "claim_trend_amount"
    assert finding["marker"] == "[3]"


def test_a_claim_no_longer_verified_is_e(job: Path) -> None:
    path = job / "citations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    entry = next(c for c in data["citations"] if c["calculation_id"] == "claim_driver_region")
    entry["verification_status"] = "needs_review"
    path.write_text(json.dumps(data), encoding="utf-8")
    (finding,) = _e(job)
    assert finding["problem"] == "unverified" and "needs_review" in finding["suggested_fix"]
    patched = patch_report(MARKDOWN, (job / "audit_findings.json").read_text(encoding="utf-8"))
    assert "claim_driver_region" not in patched and "{{claim:claim_trend_amount}}" in patched


def test_two_printed_claims_that_contradict_are_e(job: Path) -> None:
    # The renderer refuses the pair, so the second claim is edited in after rendering, with its marker.
    path = job / "citations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    entry = next(c for c in data["citations"] if c["calculation_id"] == "claim_concentration_region")
    entry["citation_id"] = "[9]"
    path.write_text(json.dumps(data), encoding="utf-8")
    sentence = f"By group totals, {printed('claim_concentration_region')} [9]."
    _edit(job, lambda doc: _paragraph(doc, "By region").insert_paragraph_before(sentence))
    findings = _e(job)
    assert [f["problem"] for f in findings] == ["contradiction"], findings
    assert findings[0]["cited_calculation_id"] == "claim_driver_region"  # the later one in reading order
    assert "claim_concentration_region" in findings[0]["suggested_fix"]


def test_the_numbers_in_a_claims_sentence_are_cited(job: Path) -> None:
    # "83.2%", "61.3%" and "0.57" are printed by the claim: never A.
    assert audit_report(job).stats["type_a"] == 0
    _edit(job, lambda doc: _paragraph(doc, "series shows").add_run(" It swung by 83.2% once more."))
    assert [f["body_value"] for f in audit_report(job).findings if f["type"] == "A"] == ["83.2"]


def test_an_unfilled_claim_reference_in_the_docx_is_c(job: Path) -> None:
    _edit(job, lambda doc: _paragraph(doc, "By region").insert_paragraph_before("See {{claim:claim_trend_amount}}."))
    (finding,) = [f for f in audit_report(job).findings if f["type"] == "C"]
    assert (
        finding["marker"] == "{{claim:claim_trend_amount}}"
        and "{{claim:claim_trend_amount}}" in finding["suggested_fix"]
    )


def test_patch_report_drops_the_sentence_of_an_unsupported_phrase(job: Path) -> None:
    markdown = MARKDOWN.replace("orders.\n", "orders. Revenue is falling sharply.\n")
    _edit(job, lambda doc: _paragraph(doc, "Total revenue").add_run(" Revenue is falling sharply."))
    audit_report(job)
    patched = patch_report(markdown, (job / "audit_findings.json").read_text(encoding="utf-8"))
    assert "falling" not in patched and "{{calc:order_count}} orders." in patched


def test_a_claim_word_edited_in_as_a_data_label_run_is_e_unless_it_names_the_data(job: Path) -> None:
    """Label-style text (backticks in report.md) is skipped only when it names a column or category value."""
    from docx.enum.style import WD_STYLE_TYPE

    from insightloom.report.labels import LABEL_STYLE

    def add_label(text: str):
        def change(doc) -> None:
            if LABEL_STYLE not in [style.name for style in doc.styles]:
                doc.styles.add_style(LABEL_STYLE, WD_STYLE_TYPE.CHARACTER)
            paragraph = _paragraph(doc, "Total revenue")
            paragraph.add_run(" See ")
            paragraph.add_run(text, style=LABEL_STYLE)
            paragraph.add_run(".")

        return change

    _edit(job, add_label("Revenue is falling sharply"))
    assert [f["phrase"] for f in _e(job)] == ["is falling"]
    render_report(MARKDOWN, job)
    path = job / "cache" / "profile.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    profile["tables"][0].setdefault("columns", []).append({"name": "Falling Star", "role": "measure"})
    path.write_text(json.dumps(profile), encoding="utf-8")
    _edit(job, add_label("Falling Star"))
    assert _e(job) == []
