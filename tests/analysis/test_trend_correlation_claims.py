"""The standard trend and correlation state their verdicts as tracked claims, never as free text.

A trend is judged over every period the change reads (a volatile series with Kendall p >= 0.05 is never "rising",
however far its last period is above its first); a correlation carries Spearman beside Pearson and says when a few
extreme points drive it. Each claim's ``test.sql`` returns, in DuckDB, exactly the inputs the verdict was computed
from, so the Validator re-computes the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tracker_job import claims, sql_rows
from tracker_job import findings as all_findings

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils import flush_checks
from insightloom.analysis_utils.standard.correlation import run_correlation
from insightloom.analysis_utils.standard.trend import run_trend
from insightloom.calc_refs import CALC_REF_RE, CLAIM_REF_RE
from insightloom.claims.phrases import find_claim_phrases
from insightloom.claims.wording import claim_text
from insightloom.intake import ingest


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    data = tmp_path / "table.csv"
    frame.to_csv(data, index=False)
    ingest([data], job)
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(job))
    return job


def _monthly(levels: list[float], start: str = "2024-01-01") -> pd.DataFrame:
    """Daily rows over whole months; each month's daily value is its level, so a month's total is level * days."""
    months = pd.date_range(start, periods=len(levels), freq="MS")
    days = pd.date_range(months[0], months[-1] + pd.offsets.MonthEnd(0), freq="D")
    level = dict(zip(months.strftime("%Y-%m"), levels, strict=True))
    return pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "sales": [level[d] for d in days.strftime("%Y-%m")]})


def _trend(job: Path) -> dict[str, Any]:
    run_trend(AnalysisSpec("trend", measure="sales", by="day", agg="sum", period="month"))
    flush_checks()
    (claim,) = [c for c in claims(job).values() if c["claim_kind"] == "trend"]
    return claim


def test_a_wildly_swinging_series_is_volatile_never_rising_though_its_last_month_is_far_above_its_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    levels = [10.0, 90.0, 15.0, 100.0, 12.0, 95.0, 13.0, 98.0, 11.0, 94.0, 16.0, 110.0]
    job = _job(tmp_path, monkeypatch, _monthly(levels))
    claim = _trend(job)
    assert claim["value"] == "volatile"
    assert claim["evidence"]["p_value"] >= 0.05 and claim["evidence"]["n"] == 12
    assert claim["check"] == "stat:trend" and claim["test"]["params"]["by"] == "day"
    text = claim_text(claim, "en")
    assert "rising" not in text and "no clear trend" in text
    findings = all_findings(job)
    change = next(f for f in findings if "sales_per_month_change" in f)
    assert "rose" in change and not CLAIM_REF_RE.search(change)  # the change stays a change: two points
    cited = [f for f in findings if claim["id"] in CLAIM_REF_RE.findall(f)]
    assert len(cited) == 1 and not find_claim_phrases(CLAIM_REF_RE.sub("", cited[0]))
    assert not [f for f in findings if "rising" in f or "trend is" in f]
    # the DuckDB inputs are the monthly totals in period order, the numbers the verdict was computed from
    frame = _monthly(levels)
    totals = frame.groupby(frame["day"].str[:7])["sales"].sum()
    assert [row[0] for row in sql_rows(job, claim["test"]["sql"])] == pytest.approx(list(totals))


def test_a_steadily_growing_series_is_rising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _monthly([10.0 + 3 * i for i in range(8)]))
    claim = _trend(job)
    assert claim["value"] == "rising"
    assert claim["evidence"]["tau"] == pytest.approx(1.0) and claim["evidence"]["slope"] > 0
    assert claim_text(claim, "en").startswith("rising")


def test_a_steadily_shrinking_series_is_falling_in_korean_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _monthly([100.0 - 7 * i for i in range(8)]))
    claim = _trend(job)
    assert claim["value"] == "falling"
    assert claim_text(claim, "ko").startswith("감소 추세")


def test_partial_months_left_out_of_the_change_are_left_out_of_the_trend_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jan 25 .. Jun 4: the first and last months are partial, so the change and the claim read Feb..May only
    days = pd.date_range("2024-01-25", "2024-06-04", freq="D")
    frame = pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "sales": np.arange(len(days)) % 7 + 10})
    job = _job(tmp_path, monkeypatch, frame)
    claim = _trend(job)
    assert claim["evidence"]["n"] == 4
    month = days.strftime("%Y-%m")
    complete = [float(frame["sales"][month == m].sum()) for m in ("2024-02", "2024-03", "2024-04", "2024-05")]
    assert [row[0] for row in sql_rows(job, claim["test"]["sql"])] == pytest.approx(complete)
    cited = next(f for f in all_findings(job) if CLAIM_REF_RE.search(f))
    assert "complete period" in cited


def test_a_change_compared_per_observed_day_makes_the_claim_read_every_period_per_observed_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jan 20 .. Mar 10: one complete month between two partial ones, so the change is per observed day
    days = pd.date_range("2024-01-20", "2024-03-10", freq="D")
    frame = pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "sales": np.arange(len(days)) % 5 + 20})
    job = _job(tmp_path, monkeypatch, frame)
    claim = _trend(job)
    month = days.strftime("%Y-%m")
    per_day = [float(frame["sales"][month == m].mean()) for m in ("2024-01", "2024-02", "2024-03")]
    assert [row[0] for row in sql_rows(job, claim["test"]["sql"])] == pytest.approx(per_day)
    assert claim["evidence"]["n"] == 3 and claim["value"] == "no_clear_trend"  # three points are no trend
    assert "per observed day" in next(f for f in all_findings(job) if CLAIM_REF_RE.search(f))


def test_a_single_period_has_no_trend_claim_to_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _monthly([10.0]))
    run_trend(AnalysisSpec("trend", measure="sales", by="day", agg="sum", period="month"))
    flush_checks()
    assert not claims(job) and not [f for f in all_findings(job) if CLAIM_REF_RE.search(f)]


def _pair(n: int, *, extremes: bool, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    units = rng.integers(1, 10, n).astype(float)
    revenue = rng.normal(50, 10, n) if extremes else 12 * units + rng.normal(0, 3, n)
    if extremes:  # three orders far out on one line make r large; the rest are noise
        units[:3], revenue[:3] = [200.0, 250.0, 300.0], [2000.0, 2500.0, 3000.0]
    return pd.DataFrame({"units": units, "revenue": revenue.round(2)})


def _correlation(job: Path) -> dict[str, Any]:
    run_correlation(AnalysisSpec("correlation", measures=("units", "revenue")))
    flush_checks()
    (claim,) = [c for c in claims(job).values() if c["claim_kind"] == "correlation"]
    return claim


def test_a_correlation_made_by_three_extreme_points_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _pair(200, extremes=True))
    claim = _correlation(job)
    assert claim["value"] == "driven_by_extremes"
    evidence = claim["evidence"]
    assert evidence["r"] > 0.9 and abs(evidence["r_without"]) < 0.3 and evidence["removed"] >= 3
    assert "extreme values" in claim_text(claim, "en")
    findings = all_findings(job)
    numeric = next(f for f in findings if "corr_units_revenue_r" in f)
    assert not CLAIM_REF_RE.search(numeric)
    for word in ("strong", "moderate", "weak", "negligible", "positive"):
        assert word not in numeric  # the verdict is the claim's, not a free-text word
    (cited,) = [f for f in findings if claim["id"] in CLAIM_REF_RE.findall(f)]
    assert not CALC_REF_RE.search(cited) and not find_claim_phrases(CLAIM_REF_RE.sub("", cited))
    rows = sql_rows(job, claim["test"]["sql"])
    assert len(rows) == evidence["n"] == 200
    assert {tuple(map(float, r)) for r in rows} == {
        tuple(map(float, r)) for r in _pair(200, extremes=True)[["units", "revenue"]].to_numpy()
    }


def test_a_clean_linear_relationship_is_strong_positive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, _pair(120, extremes=False))
    claim = _correlation(job)
    assert claim["value"] == "strong_positive"
    assert claim["test"]["params"]["x"] == "units" and claim["test"]["params"]["y"] == "revenue"


def test_sentinel_codes_in_both_columns_never_make_a_correlation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(11)
    x, y = rng.normal(50, 10, 1000), rng.normal(20, 5, 1000)
    x[:30], y[:30] = 99999, 99999  # 30 rows coded "unknown" in both: with them r is about 1
    job = _job(tmp_path, monkeypatch, pd.DataFrame({"spend": x, "visits": y}))
    run_correlation(AnalysisSpec("correlation", measures=("spend", "visits")))
    flush_checks()  # the SQL checks leave the codes out too, or they would not reproduce the values
    claim = claims(job)["claim_corr_spend_visits"]
    assert claim["evidence"]["n"] == 970 and abs(claim["evidence"]["r"]) < 0.2
    assert claim["value"] == "negligible"
