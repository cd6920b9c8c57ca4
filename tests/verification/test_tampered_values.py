"""A tracked value changed after the fact: the Validator marks it needs_review and it never reaches the DOCX.

The report does not cite it, so it is listed in validation_report.txt without blocking the job (issue 11).
"""

from __future__ import annotations

import json

import pytest
from verification_kit import citations, docx_text, read, run_scripted

from insightloom.models.offline.conversation import Conversation, Reply
from insightloom.report.formatting import format_value

pytestmark = pytest.mark.e2e


def test_a_tampered_value_needs_review_and_is_never_printed(monkeypatch, tmp_path, small_csv) -> None:
    job = tmp_path / "job"
    tampered: dict = {}

    def tamper_then_validate(conv: Conversation) -> Reply:
        # Someone edits calculation_metadata.json between the Coder and the Validator.
        path = job / "calculation_metadata.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        calc = next(c for c in data["calculations"] if c["id"] == "revenue_total")
        calc["value"] += 12_345
        tampered.update(calc)
        path.write_text(json.dumps(data), encoding="utf-8")
        return Reply.call("validate_calculations")

    outcome, _ = run_scripted(monkeypatch, job, [small_csv], "validator", [tamper_then_validate])
    entry = citations(job)["revenue_total"]
    assert entry["verification_status"] == "needs_review" and entry["citation_id"] is None
    assert entry["value"] == tampered["value"]  # the Validator never "fixes" a value
    assert "differs from re-computed" in entry["reason"]
    text = docx_text(job)
    assert format_value(tampered["value"], tampered["unit"], tampered["decimals"]) not in text
    assert "{{calc:revenue_total}}" not in (job / "report.md").read_text(encoding="utf-8")
    assert read(job, "audit_findings.json")["verdict"] == "pass"
    # The report is clean and does not cite the number that failed re-computation: it is listed, not blocking.
    assert outcome.status == "completed" and outcome.exit_code == 0
    assert read(job, "job.json")["status"] == "completed"
    assert "validation_report.txt" not in text.splitlines()[1]  # no needs_review note stamped under the title
    report = (job / "validation_report.txt").read_text(encoding="utf-8")
    assert "NEEDS REVIEW (cannot be cited): 1" in report and "revenue_total" in report
