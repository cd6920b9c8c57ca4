"""The trend split by a category (``AnalysisSpec(kind="trend", split=...)``): every value of each leading group's
series and its first-vs-last change is tracked with a DuckDB check and verified by the Validator, the largest groups
are shown and the rest named as left out, and the section holds a table and a line chart."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tracker_job import calcs, checked, findings, make_job

from insightloom.analysis.catalog import AnalysisSpec
from insightloom.analysis_utils import flush_checks, read_results, run_standard, track_split_series
from insightloom.analysis_utils.standard import script_name
from insightloom.validation import validate_job

REGIONS = ["North", "South", "East", "West", "Central", "Islands", "Abroad"]  # largest total first
DAYS = pd.date_range("2024-01-01", "2024-03-31", freq="D")


def _frame(days: pd.DatetimeIndex = DAYS) -> pd.DataFrame:
    rows = []
    for i, day in enumerate(days):
        for rank, region in enumerate(REGIONS):
            if (i + rank) % 3 == 0 or rank < 2:  # the two largest every day, the others every third day
                rows.append({"Date": day, "Region": region, "Units": 10 * (len(REGIONS) - rank) + i % 7,
                             "Price": 1.5 + rank + (i % 5) / 10})  # fmt: skip
    return pd.DataFrame(rows)


COLUMNS = {
    "Date": {"role": "date", "aggregation": "none", "min": "2024-01-01", "max": "2024-03-31"},
    "Region": {"role": "category", "aggregation": "none"},
    "Units": {"role": "measure", "aggregation": "sum"},
    "Price": {"role": "measure", "aggregation": "mean", "semantic": "currency", "unit": "USD"},
}


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path, monkeypatch, _frame(), COLUMNS, time_axis={"kind": "date", "column": "Date"})


def _statuses(folder: Path) -> dict[str, str]:
    validate_job(folder)
    data = json.loads((folder / "citations.json").read_text(encoding="utf-8"))
    return {c["calculation_id"]: c["verification_status"] for c in data["citations"]}


def test_every_value_of_the_monthly_series_per_region_is_tracked_checked_and_verified(job: Path) -> None:
    spec = AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="month", split="Region")
    run_standard(spec.item_text())
    assert flush_checks() == checked(job) == len(calcs(job))  # every number carries a passing check
    assert set(_statuses(job).values()) == {"verified"}
    frame = _frame()
    expected = frame.groupby([frame["Date"].dt.to_period("M").dt.start_time, "Region"])["Units"].sum()
    tracked = calcs(job)
    for i, region in enumerate(REGIONS[:5], start=1):
        for month in ("2024_01", "2024_02", "2024_03"):
            key = pd.Timestamp(month.replace("_", "-") + "-01")
            assert tracked[f"units_per_month_by_region_{i}_{month}"]["value"] == expected[(key, region)]
        first, last = expected[(pd.Timestamp("2024-01-01"), region)], expected[(pd.Timestamp("2024-03-01"), region)]
        change = tracked[f"units_per_month_by_region_{i}_change"]
        assert change["value"] == pytest.approx(100 * (last - first) / first) and change["unit"] == "%"
    assert tracked["units_per_month_by_region_left_names"]["value"] == "Islands, Abroad"
    assert tracked["units_per_month_by_region_groups"]["value"] == 7
    (section,) = read_results(job / "all_results.txt")
    assert section.plan_item == spec.item_text() and section.charts == ["charts/trend_units_per_month_by_region.png"]
    lines = section.table.splitlines()
    assert lines[0] == "| Period | North | South | East | West | Central |"
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| 2024-01", "| 2024-02", "| 2024-03",
                                                             "| Change, first to last period"]  # fmt: skip
    assert "{{calc:units_per_month_by_region_3_2024_02}}" in lines[3]
    text = " ".join(findings(job))
    assert "are left out: {{calc:units_per_month_by_region_left_names}}" in text
    assert "the largest of the groups shown was {{calc:units_per_month_by_region_top}}" in text
    assert (job / "charts" / "trend_units_per_month_by_region.png").is_file()


def test_partial_first_and_last_months_are_left_out_of_the_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    days = pd.date_range("2024-01-25", "2024-04-05", freq="D")
    columns = {**COLUMNS, "Date": {**COLUMNS["Date"], "min": "2024-01-25", "max": "2024-04-05"}}
    folder = make_job(tmp_path, monkeypatch, _frame(days), columns, time_axis={"kind": "date", "column": "Date"})
    run_standard(AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="month", split="Region").item_text())
    assert flush_checks() == checked(folder)
    frame = _frame(days)
    north = frame[frame["Region"] == "North"].groupby(frame["Date"].dt.to_period("M").dt.start_time)["Units"].sum()
    change = calcs(folder)["units_per_month_by_region_1_change"]["value"]
    assert change == pytest.approx(100 * (north.iloc[2] - north.iloc[1]) / north.iloc[1])  # February to March
    (section,) = read_results(folder / "all_results.txt")
    assert section.table.splitlines()[-1].startswith("| Change, first to last complete period |")
    assert "The first and last periods are partial and were left out of the change." in section.findings


def test_an_average_leaves_a_period_without_rows_empty_and_row_counts_count(job: Path) -> None:
    frame = _frame()
    sparse = frame[~(frame["Region"].isin(["East", "North"]) & (frame["Date"].dt.month == 2))]
    sparse.to_parquet(job / "cache" / "sales.parquet", index=False)
    run_standard(AnalysisSpec("trend", None, "Price", "Date", agg="mean", period="month", split="Region").item_text())
    run_standard(AnalysisSpec("trend", None, None, "Date", agg="count", period="month", split="Region").item_text())
    assert flush_checks() == checked(job)
    assert set(_statuses(job).values()) == {"verified"}
    average, counts = read_results(job / "all_results.txt")
    east, february = _cell(average.table, "2024-02", "East"), _cell(counts.table, "2024-02", "North")
    assert east == "-"  # no row: no average, never a 0
    tracked = calcs(job)
    assert tracked[february.strip("{}").removeprefix("calc:")]["value"] == 0  # a count of no row is 0
    assert tracked["avg_price_per_month_by_region_1_2024_01"]["unit"] == "USD"


def _cell(table: str, period: str, group: str) -> str:
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.splitlines()]
    row = next(r for r in rows if r[0] == period)
    return row[rows[0].index(group)]


def test_a_long_daily_series_tables_the_compared_periods_and_charts_them_all(job: Path) -> None:
    series = track_split_series("units_by_day_by_region", None, "Units", "Date", "Region", "sum", period="day", top=3)
    assert len(series.periods) == len(DAYS) and series.tracked == [DAYS[0], DAYS[-1]]
    assert [g.label for g in series.groups] == ["North", "South", "East"] and series.left_out == 4
    assert list(series.frame().columns) == ["North", "South", "East"] and len(series.frame()) == len(DAYS)
    passed = flush_checks()
    run_standard(AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="day", split="Region").item_text())
    section = read_results(job / "all_results.txt")[-1]
    assert len(section.table.splitlines()) == 2 + 2 + 1  # header, rule, first and last day, change
    assert "The table lists the periods the change compares; the chart draws every period." in section.findings
    assert passed + flush_checks() == checked(job)


def test_a_year_column_and_korean_wording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({"연도": [2019, 2019, 2020, 2020, 2021, 2021, 2021], "지역": list("ABABABA"),
                          "매출액": [5, 3, 6, 2, 8, 1, 1]})  # fmt: skip
    columns = {"연도": {"role": "category", "aggregation": "none", "semantic": "year", "min": 2019, "max": 2021},
               "지역": {"role": "category", "aggregation": "none"},
               "매출액": {"role": "measure", "aggregation": "sum", "unit": "KRW"}}  # fmt: skip
    folder = make_job(tmp_path, monkeypatch, frame, columns, time_axis={"kind": "year", "column": "연도"})
    spec = AnalysisSpec("trend", None, "매출액", "연도", agg="sum", period="year", split="지역")
    run_standard(spec.item_text("ko"))
    assert flush_checks() == checked(folder)
    tracked = calcs(folder)
    assert tracked["maechulaek_per_year_by_jiyeok_1_2021"]["value"] == 9
    assert tracked["maechulaek_per_year_by_jiyeok_1_change"]["value"] == pytest.approx(80.0)
    (section,) = read_results(folder / "all_results.txt")
    assert section.title == "`지역`별 연도별 `매출액` 합계 추이"
    assert section.table.splitlines()[0] == "| 기간 | A | B |"


def test_the_script_name_tells_the_split_and_the_grain_from_the_plan_trend(job: Path) -> None:
    profile = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
    plain = AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="day")
    monthly = AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="month")
    split = AnalysisSpec("trend", None, "Units", "Date", agg="sum", period="month", split="Region")
    names = [script_name(s, profile) for s in (plain, monthly, split)]
    assert names[1:] == ["04_trend_date_month.py", "04_trend_date_month_by_region.py"]
    assert len(set(names)) == 3
