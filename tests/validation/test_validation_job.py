"""validate_job on a small fixture: statuses, reasons, citations.json, re-runs and LLM verification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from validation_fixtures import calc, sales_frame, write_job

from insightloom.errors import ValidationError
from insightloom.validation import record_llm_verification, validate_job, values_match


def _citations(job: Path) -> dict:
    return json.loads((job / "citations.json").read_text(encoding="utf-8"))


def test_statuses_follow_checks(sales_job: Path) -> None:
    summary = validate_job(sales_job)
    assert set(summary.verified) == {
        "total_revenue",
        "order_count",
        "north_share",
        "avg_order",
        "top_region",
        "first_day",
    }
    assert set(summary.needs_review) == {"tampered_total", "bad_check", "many_rows", "two_columns", "no_rows"}
    assert summary.unverified == ["unchecked_medium", "unchecked_low"]
    assert summary.total == 13 and not summary.ok
    assert "13 calculations: 6 verified, 5 needs_review, 2 unverified" in summary.to_text()


def test_reasons_name_the_problem(sales_job: Path) -> None:
    summary = validate_job(sales_job)
    assert "no_such_column" in summary.reasons["bad_check"]
    assert "more than one row" in summary.reasons["many_rows"]
    assert "2 columns" in summary.reasons["two_columns"]
    assert "no rows" in summary.reasons["no_rows"]
    assert "differs" in summary.reasons["tampered_total"]
    report = (sales_job / "validation_report.txt").read_text(encoding="utf-8")
    assert "bad_check" in report and "no_such_column" in report and "NEEDS REVIEW" in report


def test_citations_json_lists_every_calculation(sales_job: Path, schema) -> None:
    before = (sales_job / "calculation_metadata.json").read_bytes()
    validate_job(sales_job)
    data = _citations(sales_job)
    schema("citations", data)
    assert (sales_job / "calculation_metadata.json").read_bytes() == before  # never modified
    meta = data["metadata"]
    assert meta["total_calculations"] == 13 and meta["cited_calculations"] == 0
    assert meta["generated_at"].endswith("Z")
    by_id = {c["calculation_id"]: c for c in data["citations"]}
    assert len(by_id) == 13 and all(c["citation_id"] is None for c in data["citations"])
    assert by_id["tampered_total"]["value"] == by_id["total_revenue"]["value"] + 5  # value unchanged
    assert by_id["tampered_total"]["check_value"] == by_id["total_revenue"]["value"]
    assert by_id["first_day"]["verification_status"] == "verified"


def test_rerun_keeps_assigned_citation_ids(sales_job: Path) -> None:
    validate_job(sales_job)
    data = _citations(sales_job)
    for entry in data["citations"]:
        if entry["calculation_id"] == "total_revenue":
            entry["citation_id"] = "[1]"
    data["metadata"]["cited_calculations"] = 1
    (sales_job / "citations.json").write_text(json.dumps(data), encoding="utf-8")
    validate_job(sales_job)
    again = _citations(sales_job)
    ids = {c["calculation_id"]: c["citation_id"] for c in again["citations"]}
    assert ids["total_revenue"] == "[1]" and again["metadata"]["cited_calculations"] == 1
    assert sum(1 for v in ids.values() if v) == 1


def test_llm_verification_is_recorded_and_survives_rerun(sales_job: Path) -> None:
    validate_job(sales_job)
    summary = record_llm_verification(sales_job, {"unchecked_medium": "42.004", "unchecked_low": {"value": 8}})
    assert "unchecked_medium" in summary.verified
    assert "unchecked_low" in summary.needs_review
    again = validate_job(sales_job)
    assert "unchecked_medium" in again.verified and "unchecked_low" in again.needs_review
    entry = next(c for c in _citations(sales_job)["citations"] if c["calculation_id"] == "unchecked_medium")
    assert entry["verification_method"] == "llm"


def test_llm_verification_cannot_override_a_check(sales_job: Path) -> None:
    validate_job(sales_job)
    summary = record_llm_verification(sales_job, {"tampered_total": 999, "nope": 1})
    assert "tampered_total" in summary.needs_review


def test_missing_metadata_names_file_and_fix(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        validate_job(tmp_path)
    assert "calculation_metadata.json" in info.value.message and info.value.fix


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    job = write_job(tmp_path / "job", sales_frame(), [calc("x", 1), calc("x", 2)])
    with pytest.raises(ValidationError, match="'x' appears twice"):
        validate_job(job)


def test_checks_cannot_read_other_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n5\n", encoding="utf-8")
    check = f"SELECT SUM(a) FROM read_csv('{secret}')"
    job = write_job(tmp_path / "job", sales_frame(), [calc("sneaky", 5, check), calc("multi", 1, "SELECT 1; SELECT 2")])
    summary = validate_job(job)
    assert summary.needs_review == ["sneaky", "multi"]
    assert "single SQL query" in summary.reasons["multi"]


@pytest.mark.parametrize(
    ("tracked", "recomputed", "match"),
    [
        (45.2, 45.209, True),
        (45.2, 45.215, False),
        (16431923, 16431923.004, True),
        (836, "836", True),
        ("1,234", 1234.004, True),
        ("Seoul", "Seoul", True),
        ("Seoul", "seoul", False),
        ("2025-01-01", "2025-01-01 00:00:00", True),
        (1, None, False),
        (float("nan"), float("nan"), False),
        (1120458747030225.8, 1120458747030225.9, True),  # summation order on a 10^15 total: the same value
        (1120458747030225.8, 1120458747040225.8, False),
    ],
)
def test_comparison_rule(tracked: object, recomputed: object, match: bool) -> None:
    assert values_match(tracked, recomputed).match is match


def test_a_check_that_reads_no_table_verifies_nothing(tmp_path: Path) -> None:
    job = write_job(
        tmp_path / "job", sales_frame(), [calc("constant", 12.5, "SELECT 12.5"), calc("same", 3, "SELECT 3")]
    )
    summary = validate_job(job)
    assert summary.needs_review == ["constant", "same"] and not summary.verified
    assert "reads no table" in summary.reasons["constant"] and "FROM <view>" in summary.reasons["constant"]
