"""The Validator re-checks every number computed across a joined view: the join must be a foreign key of the profile,
the parent key must still be a key in DuckDB, and the check must read the parent through a JOIN."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from insightloom.analysis_utils import flush_checks, track_group_values
from insightloom.validation import validate_job
from insightloom.validation.jobfiles import parquet_manifest
from related_tables import CUSTOMERS, ORDERS, related_job


@pytest.fixture
def tracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    job = related_job(tmp_path, monkeypatch, orders=ORDERS, customers=CUSTOMERS)
    track_group_values("amount_by_segment", "orders+customers", "amount", "segment", "sum")
    flush_checks()
    return job


def _status(job: Path) -> dict[str, tuple[str, str]]:
    entries = json.loads((job / "citations.json").read_text(encoding="utf-8"))["citations"]
    return {e["calculation_id"]: (e["verification_status"], e.get("reason") or "") for e in entries}


def _edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_values_across_a_foreign_key_are_verified(tracked: Path) -> None:
    summary = validate_job(tracked)
    status = _status(tracked)
    assert status["amount_by_segment_1"][0] == "verified" and summary.ok


def test_a_check_that_does_not_join_the_parent_needs_review(tracked: Path) -> None:
    def plain(data: dict) -> None:
        calc = next(c for c in data["calculations"] if c["id"] == "amount_by_segment_1")
        calc["check"] = f'SELECT {calc["value"]} + 0 * COUNT(*) FROM "orders"'  # repeats the value, no join

    _edit(tracked / "calculation_metadata.json", plain)
    validate_job(tracked)
    status, reason = _status(tracked)["amount_by_segment_1"]
    assert status == "needs_review" and "does not read 'customers' through a JOIN" in reason


def test_a_join_the_profile_does_not_list_needs_review(tracked: Path) -> None:
    _edit(tracked / "cache" / "profile.json", lambda p: p["relationships"].update(foreign_keys=[]))
    validate_job(tracked)
    status, reason = _status(tracked)["amount_by_segment_1"]
    assert status == "needs_review" and "orders.customer_id -> customers.customer_id" in reason
    assert "no one-to-one or many-to-one foreign key" in reason


def test_a_parent_key_that_repeats_in_the_data_needs_review(tracked: Path) -> None:
    parquet = "cache/customers.parquet"
    pd.concat([CUSTOMERS, CUSTOMERS.tail(1)]).to_parquet(tracked / parquet, index=False)

    def remanifest(profile: dict) -> None:  # as if intake had written the repeated key
        table = next(t for t in profile["tables"] if t["view"] == "customers")
        table.update(parquet_manifest(tracked, parquet), rows=5)

    _edit(tracked / "cache" / "profile.json", remanifest)
    validate_job(tracked)
    status, reason = _status(tracked)["amount_by_segment_bottom_value"]
    assert status == "needs_review" and "the join to 'customers' on 'customer_id' no longer keeps each row" in reason
    assert "1 row(s) of 'customers' repeat a 'customer_id' value" in reason
