"""Filtered KPIs: the total or average of one measure over one category value and/or the table's last period, worded
as a catalog item that round-trips, run by ``run_standard``, and checked by DuckDB from the same tracker call."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tracker_job import calcs, make_job

from insightloom.analysis.catalog import AnalysisSpec, parse_item, parse_item_text
from insightloom.analysis_utils import AggregationRefused, flush_checks, run_standard, track_total
from insightloom.errors import BadInputError

# March 2024 is the last month; the week of Monday 2024-03-11 the last week (2024-03-10 is the Sunday before it).
FRAME = pd.DataFrame(
    {
        "Date": pd.to_datetime(
            [
                "2024-01-03",
                "2024-01-20",
                "2024-02-02",
                "2024-02-15",
                "2024-03-04",
                "2024-03-09",
                "2024-03-10",
                "2024-03-11",
                "2024-03-12",
            ]  # fmt: skip
        ),
        "Region": ["East", "West", "East", "West", "West", "West", "East", "West", None],
        "Store": [1, 2, 1, 2, 3, 3, 1, 2, 3],
        "Units": [3, 5, 2, 5, 4, 1, 7, 6, 2],
        "Price": [12.5, 13.25, 11.0, None, 14.75, 12.0, 10.0, 9.5, 11.0],
    }
)
COLUMNS = {
    "Date": {"role": "date", "aggregation": "none", "min": "2024-01-03", "max": "2024-03-12"},
    "Region": {"role": "category", "aggregation": "none", "top_values": [{"value": "West", "count": 5}]},
    "Store": {"role": "category", "aggregation": "none", "semantic": "code"},
    "Units": {"role": "measure", "aggregation": "sum"},
    "Price": {"role": "measure", "aggregation": "mean", "semantic": "currency", "unit": "USD"},
}
WEST_MARCH = "Compute the total of `Units` for `Region` = 'West' in the last month of `Date`"


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path, monkeypatch, FRAME, COLUMNS, time_axis={"kind": "date", "column": "Date"})


def profile(folder: Path) -> dict:
    return json.loads((folder / "cache" / "profile.json").read_text(encoding="utf-8"))


def rows(region: str | None = None, since: str | None = None) -> pd.DataFrame:
    """The frame's rows of a region from a date on, by plain comparison (no period logic of the product)."""
    keep = pd.Series(True, index=FRAME.index)
    if region is not None:
        keep &= FRAME["Region"] == region
    if since is not None:
        keep &= FRAME["Date"] >= pd.Timestamp(since)
    return FRAME.loc[keep]


# --- the wording -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize(
    "spec",
    [
        AnalysisSpec("kpi", None, "Units", "Date", agg="sum", where=(("Region", "West"),), last_period="month"),
        AnalysisSpec("kpi", None, "Price", "Date", agg="mean", where=(("Region", "West"),), last_period="week"),
        AnalysisSpec("kpi", "sales", "Units", agg="sum", where=(("Region", "O'Brien, \"Jr\" = 'x'"), ("Store", "2"))),
        AnalysisSpec("kpi", None, "매출 금액", "주문 일자", agg="mean", last_period="year"),
        AnalysisSpec("kpi", None, "Units", "Date", agg="sum", last_period="day"),
    ],
)
def test_every_filtered_kpi_round_trips_in_both_languages(spec: AnalysisSpec, language: str) -> None:
    text = spec.item_text(language)
    assert parse_item_text(text) == spec and parse_item_text(f"- [ ] {text}") == spec
    assert spec.filtered and spec.measures == ()


def test_existing_items_keep_their_wording_and_are_never_filtered() -> None:
    kpi = AnalysisSpec("kpi", None, measures=("Units", "Price"))
    assert kpi.item_text() == "Compute headline KPIs for `Units`, `Price`: totals or averages"
    assert parse_item_text(kpi.item_text()) == kpi and not kpi.filtered and kpi.where == ()
    breakdown = AnalysisSpec("breakdown", None, "Units", "Region", agg="sum")
    assert breakdown.columns() == ["Units", "Region"] and not breakdown.filtered


def test_the_filter_column_must_exist_and_may_be_analysed(job: Path) -> None:
    assert parse_item(WEST_MARCH, profile(job)) is not None
    assert parse_item(WEST_MARCH.replace("`Region`", "`Zone`"), profile(job)) is None


# --- running it --------------------------------------------------------------------------------------------------


def test_west_in_the_last_month_matches_pandas_and_its_duckdb_check(job: Path) -> None:
    run_standard(WEST_MARCH)
    calc = calcs(job)["units_total_region_west_last_month"]
    assert calc["value"] == rows("West", "2024-03-01")["Units"].sum() == 11
    assert calc["source_columns"] == ["Units", "Region", "Date"]
    assert flush_checks() == 1  # DuckDB re-computed the same number from the check
    results = (job / "all_results.txt").read_text(encoding="utf-8")
    assert "{{calc:units_total_region_west_last_month}}" in results and "`Region` = 'West'" in results


def test_the_last_week_starts_on_monday_and_is_the_whole_tables(job: Path) -> None:
    run_standard("Compute the total of `Units` in the last week of `Date`")
    run_standard("Compute the total of `Units` for `Region` = 'East' in the last week of `Date`")
    found = calcs(job)
    assert found["units_total_last_week"]["value"] == rows(since="2024-03-11")["Units"].sum() == 8
    # East sold nothing in the table's last week (its last sale, on the Sunday, is in the week before): 0, not 7.
    assert found["units_total_region_east_last_week"]["value"] == 0
    assert flush_checks() == 2


def test_an_average_a_coded_category_and_the_korean_wording(job: Path) -> None:
    run_standard("`Store` = '3', `Date` 기준 마지막 달 행의 `Price` 평균 계산")
    calc = calcs(job)["price_mean_store_c3_last_month"]
    march = rows(since="2024-03-01")
    assert calc["value"] == pytest.approx(march.loc[march["Store"] == 3, "Price"].mean())
    assert flush_checks() == 1
    assert "`Price` 평균은(는) {{calc:price_mean_store_c3_last_month}}입니다." in (job / "all_results.txt").read_text(
        encoding="utf-8"
    )


def test_two_columns_filter_together(job: Path) -> None:
    run_standard("Compute the total of `Units` for `Region` = 'West' and `Store` = '3'")
    calc = calcs(job)["units_total_region_west_store_c3"]
    west = rows("West")
    assert calc["value"] == west.loc[west["Store"] == 3, "Units"].sum() == 5
    assert flush_checks() == 1
    assert parse_item_text("Compute the total of `Units` for `Region` = 'West' and `Region` = 'East'") is None


def test_a_total_of_a_mean_only_measure_is_refused(job: Path) -> None:
    with pytest.raises(AggregationRefused, match="'Price'"):
        run_standard("Compute the total of `Price` for `Region` = 'West' in the last month of `Date`")
    assert calcs(job) == {}


def test_a_value_no_row_holds_is_refused_rather_than_totalled_to_zero(job: Path) -> None:
    with pytest.raises(BadInputError, match="'Nowhere'"):
        run_standard("Compute the total of `Units` for `Region` = 'Nowhere'")
    assert calcs(job) == {}


@pytest.mark.filterwarnings("ignore:Could not infer format")  # the Region column parsed as dates, on purpose
def test_track_total_without_a_period_keeps_its_check(job: Path) -> None:
    track_total("data", "Units", "west_units", where={"Region": "West"})
    assert calcs(job)["west_units"]["check"] == (
        'SELECT COALESCE(SUM(CASE WHEN "Region" = \'West\' THEN CAST("Units" AS DOUBLE) END), 0) FROM "sales"'
    )
    with pytest.raises(ValueError, match="period 'quarter'"):
        track_total("data", "Units", "units_q", last=("Date", "quarter"))
    with pytest.raises(ValueError, match="holds no date"):
        track_total("data", "Units", "units_r", last=("Region", "month"))


def test_a_filtered_kpi_has_its_own_script_beside_the_headline_kpis() -> None:
    from insightloom.analysis.catalog import parse_item_text
    from insightloom.analysis_utils.standard import script_name

    profile = {
        "tables": [
            {
                "file": "sales.csv",
                "view": "data",
                "columns": [
                    {"name": n, "kind": k}
                    for n, k in (("Revenue", "numeric"), ("Region", "categorical"), ("Date", "datetime"))
                ],
            }
        ]
    }
    filtered = parse_item_text("Compute the total of `Revenue` for `Region` = 'West' in the last month of `Date`")
    assert filtered is not None and filtered.filtered
    assert script_name(filtered, profile) != "02_kpis.py"
