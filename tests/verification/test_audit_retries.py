"""Whole offline jobs with a scripted Reporter: raw numbers, unknown ids, a repaired draft and one that never is."""

from __future__ import annotations

import pytest
from docx import Document
from verification_kit import (
    citations,
    docx_text,
    done,
    draft_with_b_defect,
    first_verified,
    invocations,
    read,
    run_scripted,
)

from insightloom.models.offline.conversation import Conversation, Reply

pytestmark = pytest.mark.e2e


def test_first_draft_with_a_b_defect_is_repaired_by_one_retry(monkeypatch, tmp_path, small_csv) -> None:
    job = tmp_path / "job"
    outcome, _ = run_scripted(monkeypatch, job, [small_csv], "reporter", [draft_with_b_defect(job), done])
    assert outcome.status == "completed", outcome.error
    assert invocations(job, "reporter") == 2 and invocations(job, "auditor") == 2
    audit = read(job, "audit_findings.json")
    assert audit["verdict"] == "pass" and audit["audit_metadata"]["retry_count"] == 1
    assert audit["stats"]["type_b"] == 0 and audit["stats"]["type_c"] == 0
    rows = first_verified(job, marked=True)
    text = docx_text(job)
    assert f"the rows are {rows['value']:,} [1]" in text and "the rows are [1]" not in text
    # Only the flagged passage changed; every other line of the draft is as the scripted Reporter wrote it.
    patched = (job / "report.md").read_text(encoding="utf-8").splitlines()
    assert "Counted again, the rows are {{calc:" + rows["calculation_id"] + "}}. This sentence stays." in patched
    first = "The data has {{calc:" + rows["calculation_id"] + "}} rows."
    assert patched[:6] == ["# Sales report", "", "## Summary", "", first, ""]
    assert patched[-1] == "Every figure is cited."
    assert read(job, "job.json")["status"] == "completed"


def test_a_report_that_keeps_failing_ends_needs_review_after_exactly_two_retries(
    monkeypatch, tmp_path, small_csv
) -> None:
    job = tmp_path / "job"
    script = [draft_with_b_defect(job), done] * 3  # the first draft and both retries repeat the defect
    outcome, _ = run_scripted(monkeypatch, job, [small_csv], "reporter", script)
    assert outcome.status == "needs_review" and outcome.exit_code == 3
    assert invocations(job, "reporter") == 3 and invocations(job, "auditor") == 3  # a draft + exactly two retries
    audit = read(job, "audit_findings.json")
    assert audit["verdict"] == "needs_review" and audit["audit_metadata"]["retry_count"] == 2
    status = read(job, "job.json")
    assert status["status"] == "needs_review" and status["stage"] == "done"
    assert "audit" in status["review_reason"]
    events = [line for line in (job / "events.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert '"kind": "needs_review"' in events[-1]
    front = docx_text(job).splitlines()[:3]
    assert (
        front[1].startswith("Note: Needs review:") and "audit" in front[1]
    )  # the front matter says so, under the title


def test_a_raw_number_typed_by_the_reporter_is_refused_and_never_printed(monkeypatch, tmp_path, small_csv) -> None:
    job = tmp_path / "job"

    def raw(conv: Conversation) -> Reply:
        calc = first_verified(job)["calculation_id"]
        markdown = f"# Report\n\n## Summary\n\nThere are {{{{calc:{calc}}}}} rows and 12,345 returns.\n"
        return Reply.call("render_report", markdown=markdown)

    outcome, model = run_scripted(monkeypatch, job, [small_csv], "reporter", [raw])
    assert outcome.status == "completed", outcome.error
    refusal = model.seen[1].last()
    assert refusal.name == "render_report" and refusal.status == "error"
    assert "typed number '12,345' in section 'Summary'" in refusal.result and "render_section" in refusal.result
    audit = read(job, "audit_findings.json")
    assert audit["verdict"] == "pass" and audit["stats"]["type_a"] == 0
    assert "12,345" not in docx_text(job)


def test_an_uncited_number_in_the_docx_blocks_and_one_retry_repairs_it(monkeypatch, tmp_path, small_csv) -> None:
    job = tmp_path / "job"

    def draft(conv: Conversation) -> Reply:
        calc = first_verified(job)["calculation_id"]
        markdown = f"# Report\n\n## Summary\n\nThere are {{{{calc:{calc}}}}} rows.\n"
        return Reply.call("render_report", markdown=markdown)

    def edit_then_done(conv: Conversation) -> Reply:
        doc = Document(str(job / "final_report.docx"))  # a typed number can only get in after the render
        doc.paragraphs[2].insert_paragraph_before("We also counted 12,345 returns.")
        doc.save(str(job / "final_report.docx"))
        return done(conv)

    outcome, _ = run_scripted(monkeypatch, job, [small_csv], "reporter", [draft, edit_then_done])
    assert outcome.status == "completed", outcome.error
    assert invocations(job, "reporter") == 2 and invocations(job, "auditor") == 2  # A blocked the first audit
    audit = read(job, "audit_findings.json")
    assert audit["verdict"] == "pass" and audit["audit_metadata"]["retry_count"] == 1
    assert audit["stats"]["type_a"] == 0 and "12,345" not in docx_text(job)


def test_an_unknown_calculation_id_fails_the_render_and_the_reporter_fixes_it(monkeypatch, tmp_path, small_csv) -> None:
    bad = Reply.call("render_report", markdown="# Report\n\n## Summary\n\nRevenue was {{calc:no_such_calc}}.\n")
    outcome, model = run_scripted(monkeypatch, tmp_path / "job", [small_csv], "reporter", [bad])
    assert outcome.status == "completed", outcome.error
    refusal = model.seen[1].last()
    assert refusal.name == "render_report" and refusal.status == "error"
    assert "{{calc:no_such_calc}}" in refusal.result and "is not a tracked calculation" in refusal.result
    assert "Rewrite" in refusal.result and "section 'Summary'" in refusal.result
    assert "no_such_calc" not in (tmp_path / "job" / "report.md").read_text(encoding="utf-8")
    assert read(tmp_path / "job", "audit_findings.json")["verdict"] == "pass"
    assert all(c["citation_id"] is None or c["verification_status"] == "verified"
               for c in citations(tmp_path / "job").values())  # fmt: skip
