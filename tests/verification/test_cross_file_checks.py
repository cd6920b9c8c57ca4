"""Checks across several inputs: ratios, shares, growth between periods and correlations spanning two views."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from verification_kit import citations, run_scripted, sales_csv

from insightloom.analysis_utils.calculations import build_record
from insightloom.intake import ingest
from insightloom.validation import validate_job


@pytest.fixture
def two_inputs(tmp_path: Path) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    """A job ingested from two CSVs: daily sales and a per-region target table."""
    sales = sales_csv(tmp_path / "inputs" / "sales.csv")
    targets = tmp_path / "inputs" / "region targets.csv"
    frame = pd.DataFrame({"region": ["North", "South", "East"], "target": [30_000, 25_000, 28_000]})
    frame.to_csv(targets, index=False)
    job = tmp_path / "job"
    profile = ingest([sales, targets], job)
    assert [t.view for t in profile.tables] == ["sales", "region_targets"]
    return job, pd.read_csv(sales, parse_dates=["date"]), pd.read_csv(targets)


def _write(job: Path, records: list[dict]) -> None:
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": records}
    (job / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")


def _calc(calc_id: str, value: float, check: str, unit: str | None = None) -> dict:
    return build_record(calc_id, value, calc_id, check, "sales.csv", ["revenue"], "high", check=check, unit=unit)


def test_checks_spanning_both_views_verify(two_inputs) -> None:
    job, sales, targets = two_inputs
    by_region = sales.groupby("region")["revenue"].sum()
    merged = by_region.rename("revenue").to_frame().join(targets.set_index("region"))
    target = targets.set_index("region")["target"]
    jan = sales.loc[sales["date"].dt.month == 1, "revenue"].sum()
    feb = sales.loc[sales["date"].dt.month == 2, "revenue"].sum()
    records = [
        _calc("revenue_vs_target", 100 * sales["revenue"].sum() / targets["target"].sum(),
              "SELECT 100.0 * (SELECT SUM(revenue) FROM sales) / (SELECT SUM(target) FROM region_targets)", "%"),
        _calc("north_attainment", 100 * merged.loc["North", "revenue"] / merged.loc["North", "target"],
              "SELECT 100.0 * SUM(s.revenue) / MAX(t.target) FROM data s JOIN region_targets t USING (region) "
              "WHERE region = 'North'", "%"),
        _calc("north_share_of_targets", 100 * target["North"] / target.sum(),
              "SELECT 100.0 * SUM(target) FILTER (WHERE region = 'North') / SUM(target) FROM region_targets", "%"),
        _calc("feb_vs_jan_growth", 100 * (feb - jan) / jan,
              "WITH m AS (SELECT month(date) AS m, SUM(revenue) AS v FROM sales GROUP BY 1) "
              "SELECT 100.0 * ((SELECT v FROM m WHERE m = 2) - (SELECT v FROM m WHERE m = 1)) / "
              "(SELECT v FROM m WHERE m = 1)", "%"),
        _calc("revenue_target_corr", float(np.corrcoef(merged["revenue"], merged["target"])[0, 1]),
              "SELECT corr(s.v, t.target) FROM (SELECT region, SUM(revenue) AS v FROM sales GROUP BY 1) s "
              "JOIN region_targets t USING (region)"),
    ]  # fmt: skip
    _write(job, records)
    summary = validate_job(job)
    assert summary.verified == [r["id"] for r in records] and not summary.needs_review


def test_a_wrong_cross_file_value_is_caught(two_inputs) -> None:
    job, sales, targets = two_inputs
    right = 100 * sales["revenue"].sum() / targets["target"].sum()
    check = "SELECT 100.0 * (SELECT SUM(revenue) FROM sales) / (SELECT SUM(target) FROM region_targets)"
    # A share tracked as a fraction is off by far more than the tolerance once shown in percent.
    _write(job, [_calc("as_fraction", right / 100, check, "%"), _calc("ok", right, check, "%")])
    summary = validate_job(job)
    assert summary.needs_review == ["as_fraction"] and summary.verified == ["ok"]


@pytest.mark.e2e
def test_an_offline_job_with_two_inputs_verifies_every_printed_number(monkeypatch, tmp_path) -> None:
    first = sales_csv(tmp_path / "inputs" / "sales.csv")
    second = sales_csv(tmp_path / "inputs" / "returns.csv", seed=11, rows=60)
    outcome, _ = run_scripted(monkeypatch, tmp_path / "job", [first, second])
    assert outcome.status == "completed", outcome.error
    entries = citations(tmp_path / "job").values()
    assert {e["source_file"] for e in entries} == {"sales.csv", "returns.csv"}
    assert all(e["verification_status"] == "verified" for e in entries if e["citation_id"])
    assert not [e for e in entries if e["verification_status"] == "needs_review"]
