"""Only needs_review calculations the report cites block the job; uncited ones are listed (issue 11 item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from validation_fixtures import calc, sales_frame, write_job

from insightloom.fileio import file_digest
from insightloom.jobs import JobFolder
from insightloom.validation import blocking_reviews, validate_job
from insightloom.workflow.stages import _review_reasons


@pytest.fixture
def review_job(tmp_path: Path) -> Path:
    """Validated: ``good`` verifies; ``bad_a`` and ``bad_b`` are needs_review; no report yet."""
    frame = sales_frame()
    total = int(frame["amount"].sum())
    calcs = [
        calc("good", total, "SELECT SUM(amount) FROM data"),
        calc("bad_a", total + 1, "SELECT SUM(amount) FROM data"),
        calc("bad_b", 1, "SELECT COUNT(*) FROM nowhere"),
    ]
    job = write_job(tmp_path / "job", frame, calcs)
    validate_job(job)
    return job


def _cite(job: Path, *ids: str, docx: bool = True) -> None:
    """What the renderer leaves: citation ids on the printed calculations, and the DOCX."""
    path = job / "citations.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for number, entry in enumerate(e for e in data["citations"] if e["calculation_id"] in ids):
        entry["citation_id"] = f"[{number + 1}]"
    path.write_text(json.dumps(data), encoding="utf-8")
    if docx:
        (job / "final_report.docx").write_bytes(b"placeholder")


def test_before_a_report_every_needs_review_blocks(review_job: Path) -> None:
    assert blocking_reviews(review_job) == (["bad_a", "bad_b"], [])


def test_after_the_report_only_cited_needs_review_blocks(review_job: Path) -> None:
    _cite(review_job, "good")
    assert blocking_reviews(review_job) == ([], ["bad_a", "bad_b"])
    _cite(review_job, "good", "bad_b")
    assert blocking_reviews(review_job) == (["bad_b"], ["bad_a"])


def test_a_citation_id_alone_means_a_report_exists(review_job: Path) -> None:
    _cite(review_job, "good", docx=False)
    assert blocking_reviews(review_job) == ([], ["bad_a", "bad_b"])


def test_no_citations_file_means_nothing_blocks(tmp_path: Path) -> None:
    assert blocking_reviews(tmp_path) == ([], [])


def _runtime(job: Path) -> SimpleNamespace:
    # The audit passed on exactly this report (the host remembers its digest and verdict); citations.json decides.
    (job / "job.json").write_text(json.dumps({"id": "20250101T000000Z-000000000000"}), encoding="utf-8")
    digest = file_digest(job / "final_report.docx", beneath=job)
    return SimpleNamespace(
        job=JobFolder.open(job), root=job.resolve(), evidence={"audited": 1}, audits=1, last_audit=(digest, "pass")
    )


def test_an_uncited_needs_review_does_not_hold_the_job(review_job: Path) -> None:
    _cite(review_job, "good")
    assert _review_reasons(_runtime(review_job)) == []


def test_a_cited_needs_review_holds_the_job(review_job: Path) -> None:
    _cite(review_job, "good", "bad_a")
    assert _review_reasons(_runtime(review_job)) == ["values"]
