"""The final status re-checks the delivered files: a report changed after its audit, a verdict or a status a script
wrote, never decide that a job is completed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from docx import Document

from insightloom.fileio import file_digest
from insightloom.jobs import JobFolder
from insightloom.report.audit import audit_report
from insightloom.report.render import render_report
from insightloom.workflow.recheck import recheck_delivery
from insightloom.workflow.stages import _review_reasons

REPORT = "# Sales\n\n## Summary\n\nTotal revenue is {{calc:total_revenue}}.\n"


def audited_runtime(job: Path) -> SimpleNamespace:
    """A job whose report was rendered and audited (pass) by the host's own tools."""
    (job / "job.json").write_text(json.dumps({"id": "20250101T000000Z-000000000000"}), encoding="utf-8")
    render_report(REPORT, job)
    verdict = audit_report(job).verdict
    digest = file_digest(job / "final_report.docx", beneath=job)
    return SimpleNamespace(
        job=JobFolder.open(job), root=job.resolve(), evidence={"audited": 1}, audits=1, last_audit=(digest, verdict)
    )


def test_an_unchanged_audited_report_passes(job: Path) -> None:
    rt = audited_runtime(job)
    assert recheck_delivery(rt) == "pass" and _review_reasons(rt) == []


def test_a_report_edited_after_its_audit_is_audited_again_and_held(job: Path) -> None:
    rt = audited_runtime(job)
    doc = Document(str(job / "final_report.docx"))
    doc.paragraphs[1].insert_paragraph_before("Revenue grew 12.5% in 34 stores.")  # a script's edit after the pass
    doc.save(str(job / "final_report.docx"))
    assert _review_reasons(rt) == ["audit"]
    findings = json.loads((job / "audit_findings.json").read_text(encoding="utf-8"))
    assert findings["verdict"] == "needs_review" and findings["stats"]["type_a"] >= 2


def test_a_pass_verdict_a_script_wrote_does_not_count(job: Path) -> None:
    rt = audited_runtime(job)
    rt.evidence, rt.last_audit = {"audited": 0}, None  # the Auditor never ran in this job
    (job / "audit_findings.json").write_text(json.dumps({"verdict": "pass"}), encoding="utf-8")
    assert _review_reasons(rt) == ["unaudited"]


def test_a_status_a_script_forged_in_citations_json_is_recomputed(job: Path) -> None:
    rt = audited_runtime(job)
    path = job / "citations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for entry in data["citations"]:
        if entry["calculation_id"] == "total_revenue":
            entry["citation_id"] = "[1]"
        if entry["calculation_id"] == "tampered":
            entry["verification_status"], entry["citation_id"] = "verified", "[2]"  # a forged status, "cited"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "values" in _review_reasons(rt)  # re-validation found it needs review, and the report cites it
    statuses = {e["calculation_id"]: e["verification_status"] for e in json.loads(path.read_text())["citations"]}
    assert statuses["tampered"] == "needs_review"
