"""run_script_checks: the same checks as the Validator, run for one script, each failure with its cause and fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from validation_fixtures import calc, sales_frame, write_job

from insightloom.validation import run_script_checks, validate_job
from insightloom.validation.checks import CheckOutcome
from insightloom.validation.script_checks import explain


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return write_job(tmp_path / "job", sales_frame(), [])


def _record(value: object, check: str, unit: str | None = None) -> dict:
    return {"id": "x", "value": value, "check": check, "unit": unit}


@pytest.mark.parametrize(
    ("value", "result", "unit", "cause", "fix"),
    [
        (45.2, 0.452, "%", "percent vs fraction", "make the check return percent too"),
        (0.452, 45.2, "%", "percent vs fraction", "track the value in percent too"),
        (45.0, 45.23, None, "rounded", "track the unrounded value"),
        ("East", "east", None, "strings differ", "must match exactly"),
        (10, 12, "count", "computes something else", "denominator"),
        (0, None, None, "NULL semantics", "COUNT(col) skips NULLs"),
    ],
)
def test_mismatches_name_their_likely_cause(value, result, unit, cause, fix) -> None:
    failure = explain(_record(value, "SELECT 1", unit), CheckOutcome(value=result), ["data", "sales"])
    assert failure is not None and cause in failure.cause and fix in failure.fix
    assert failure.to_text().startswith(f"- x: tracked {value!r}, check returned {result!r}. Likely cause:")


def test_a_matching_value_is_no_failure() -> None:
    assert explain(_record(45.2, "SELECT 1", "%"), CheckOutcome(value=45.204), ["data"]) is None


def test_checks_run_over_the_job_views_with_the_validator_rule(job: Path) -> None:
    frame = sales_frame()
    records = [
        _record(int(frame["amount"].sum()), "SELECT SUM(amount) FROM data"),
        {**_record(1, "SELECT COUNT(*) FROM slaes"), "id": "typo"},
        {**_record(1, "SELECT SUM(amont) FROM sales"), "id": "column"},
        {**_record(1, "SELECT * FROM read_csv('data/sales.csv')"), "id": "file"},
    ]
    verified, failures = run_script_checks(job, records)
    assert verified == 1
    by_id = {f.calc_id: f for f in failures}
    assert "use one of the job's views: data, sales" in by_id["typo"].fix
    assert 'Did you mean "sales"' in by_id["typo"].error  # DuckDB's own suggestion is kept
    assert by_id["column"].cause == "unknown column name" and 'Candidate bindings: "amount"' in by_id["column"].error
    assert by_id["file"].cause == "the check reads a file"


def test_the_validator_keeps_duckdbs_suggestion_in_its_reason(tmp_path: Path) -> None:
    job = write_job(tmp_path / "job", sales_frame(), [calc("c", 1, "SELECT SUM(amont) FROM data")])
    summary = validate_job(job)
    assert summary.needs_review == ["c"] and "Candidate bindings" in summary.reasons["c"]
