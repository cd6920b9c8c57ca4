"""The host re-computes only what changed: a second validation of an unchanged job runs no check and no claim test,
while a changed record, a tampered verdict or changed data is re-computed and caught."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from claim_job import BREAKDOWN_SQL, make_job, sales_frame

from insightloom.analysis_utils import flush_checks, track_claim
from insightloom.analysis_utils.calculations import track_calculation
from insightloom.validation import claim_checks, validate_job
from insightloom.validation.memo import RecomputeMemo


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = make_job(tmp_path / "job", monkeypatch)
    monkeypatch.setattr("insightloom.validation.core.HOST_MEMO", RecomputeMemo())
    total = float(sales_frame()["Revenue"].sum())
    track_calculation("total_revenue", total, "Total Revenue", "SUM(Revenue)", "sales.csv", ["Revenue"], "high",
                      check="SELECT SUM(Revenue) FROM sales")  # fmt: skip
    track_claim("driver", "claim_driver_channel", "sales", BREAKDOWN_SQL, {"measure": "Revenue", "by": "Channel"},
                description="Channel as a driver of Revenue", columns=["Channel", "Revenue"])  # fmt: skip
    flush_checks()
    return folder


@pytest.fixture
def tests_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The claim tests SciPy actually runs."""
    ran: list[str] = []
    recompute = claim_checks.recompute

    def counting(name: str, rows: object, params: dict) -> object:
        ran.append(name)
        return recompute(name, rows, params)  # type: ignore[arg-type]

    monkeypatch.setattr(claim_checks, "recompute", counting)
    return ran


def _edit(job: Path, calc_id: str, **changes: object) -> None:
    path = job / "calculation_metadata.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for record in data["calculations"]:
        if record["id"] == calc_id:
            record.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_an_unchanged_job_is_validated_again_without_running_anything(job: Path, tests_run: list[str]) -> None:
    first = validate_job(job)
    assert first.ok and first.queries == 1 and tests_run == ["driver"]
    second = validate_job(job)
    assert second.ok and second.queries == 0 and tests_run == ["driver"]
    assert sorted(second.verified) == sorted(first.verified) == ["claim_driver_channel", "total_revenue"]


def test_a_tampered_record_is_caught_from_the_kept_result(job: Path, tests_run: list[str]) -> None:
    validate_job(job)
    _edit(job, "claim_driver_channel", value="weak")
    _edit(job, "total_revenue", value=1.0)
    summary = validate_job(job)
    assert sorted(summary.needs_review) == ["claim_driver_channel", "total_revenue"]
    assert tests_run == ["driver"]  # the verdict was kept; the record no longer matches it


def test_a_changed_check_or_changed_data_is_re_computed(job: Path, tests_run: list[str]) -> None:
    validate_job(job)
    _edit(job, "total_revenue", check="SELECT SUM(Revenue) + 0 FROM sales")
    assert validate_job(job).queries == 1
    frame = sales_frame()
    frame["Revenue"] *= 2
    frame.to_parquet(job / "cache" / "sales.parquet", index=False)
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")  # no recorded hash to compare
    summary = validate_job(job)
    assert summary.queries == 1 and tests_run == ["driver", "driver"]
    assert "total_revenue" in summary.needs_review


def test_the_memo_keeps_a_bounded_number_of_results() -> None:
    memo = RecomputeMemo(limit=2)
    for key in "abc":
        memo.put(key, pd.DataFrame())
    assert len(memo) == 2 and memo.get("a") is None and memo.get("c") is not None


def test_the_memo_stays_bounded_when_threads_share_it() -> None:
    from concurrent.futures import ThreadPoolExecutor

    memo = RecomputeMemo(limit=50)

    def churn(start: int) -> None:
        for key in range(start, start + 2000):
            memo.put(key, key)
            memo.get(key - 25)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(churn, range(0, 8000, 2000)))
    assert len(memo) == 50
