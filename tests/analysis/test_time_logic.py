"""Time logic as product code: the trend axis (date, integer year, wide year columns), partial first and last periods,
a weekend share only on daily data, and cohort dates never read as a trend."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd
import pytest

from insightloom.analysis import time_logic
from insightloom.analysis.time_logic import TimeAxis


def _table(columns: list[dict[str, Any]], **keys: Any) -> dict[str, Any]:
    return {"view": "t", "rows": 10, "columns": columns, **keys}


DATE = {"name": "Date", "role": "date", "dtype": "datetime", "distinct": 90, "min": "2024-01-01", "max": "2024-03-30"}
HIRED = {"name": "hire_date", "role": "date", "dtype": "datetime", "distinct": 40, "semantic": "cohort_date",
         "min": "1990-01-01", "max": "2020-01-01"}  # fmt: skip
YEAR = {"name": "Year", "role": "category", "dtype": "int64", "semantic": "year", "min": 1970, "max": 2011}


def test_the_axis_comes_from_the_profile_time_axis() -> None:
    table = _table([DATE, YEAR], time_axis={"kind": "year", "column": "Year", "period": "year"})
    assert time_logic.trend_axis(table) == TimeAxis("year", "Year", (), "year")
    table = _table([DATE], time_axis={"kind": "date", "column": "Date", "period": "week"})
    assert time_logic.trend_axis(table) == TimeAxis("date", "Date", (), "week")


def test_a_wide_table_reads_its_year_columns_in_year_order() -> None:
    cols = [{"name": n, "role": "measure", "dtype": "float64"} for n in ("country", "y1961", "y1960", "y1962")]
    table = _table(cols, time_axis={"kind": "wide_years", "column": None, "columns": ["y1961", "y1960", "y1962"],
                                    "period": "year"})  # fmt: skip
    axis = time_logic.trend_axis(table)
    assert axis == TimeAxis("wide_years", "y1960", ("y1960", "y1961", "y1962"), "year")
    assert time_logic.axis_for(table, "y1961") == axis


def test_without_the_key_the_first_date_that_is_no_cohort_date_is_the_axis() -> None:
    assert time_logic.trend_axis(_table([HIRED, DATE])) == TimeAxis("date", "Date", (), "week")  # 89 days: weeks
    assert time_logic.trend_axis(_table([HIRED])) is None
    assert time_logic.trend_axis(_table([DATE], time_axis=None)) is None  # the profile says: no time axis


def test_a_cohort_date_is_never_a_trend_axis() -> None:
    assert time_logic.trend_axis(_table([HIRED], time_axis={"kind": "date", "column": "hire_date"})) is None
    with pytest.raises(ValueError, match="cohort date.*Fix"):
        time_logic.axis_for(_table([HIRED]), "hire_date")


def test_a_trend_over_an_integer_year_column_is_a_year_axis() -> None:
    plain_year = {"name": "yr", "role": "measure", "dtype": "int64", "min": 1990, "max": 2020}
    assert time_logic.axis_for(_table([plain_year]), "yr") == TimeAxis("year", "yr", (), "year")
    with pytest.raises(ValueError, match="neither a date"):
        time_logic.axis_for(_table([{"name": "n", "role": "measure", "dtype": "int64", "min": 1, "max": 9}]), "n")


@pytest.mark.parametrize(("name", "year"), [("1960", 1960), ("y2001", 2001), ("2019년", 2019), ("X1999", 1999),
                                            ("population", None), ("12000", None), ("1700", None)])  # fmt: skip
def test_year_of_a_wide_column_name(name: str, year: int | None) -> None:
    assert time_logic.year_of(name) == year


def test_years_are_labelled_as_integers_never_as_grouped_decimals() -> None:
    axis = TimeAxis("year", "Year", (), "year")
    keys = time_logic.period_keys(pd.DataFrame({"Year": [1970.0, 1971.0, None, 1971.5]}), axis)
    assert keys.tolist()[:2] == [1970, 1971] and keys.isna().tolist()[2:] == [True, True]
    assert time_logic.period_label(keys.iloc[0], axis) == "1970"
    assert time_logic.period_label(pd.Timestamp("2025-03-01"), TimeAxis("date", "d", (), "month")) == "2025-03"


def test_a_wide_table_melts_to_year_and_value() -> None:
    wide = pd.DataFrame({"country": ["A", "B"], "1961": [2.0, None], "1960": [1.0, 3.0]})
    long = time_logic.melt_wide_years(wide, ["1960", "1961"])
    assert long.to_dict("list") == {"year": [1960, 1960, 1961], "value": [1.0, 3.0, 2.0]}


def _days(start: str, end: str, freq: str = "D") -> pd.Series:
    return pd.Series(pd.date_range(start, end, freq=freq))


def test_daily_data_from_the_29th_makes_a_partial_first_month() -> None:
    assert time_logic.partial_ends(_days("2024-01-29", "2024-06-30"), "month") == (True, False)
    assert time_logic.partial_ends(_days("2024-01-01", "2024-06-03"), "month") == (False, True)
    assert time_logic.partial_ends(_days("2024-01-31", "2024-03-03"), "day") == (False, False)


def test_weeks_from_a_wednesday_are_partial_and_monthly_rows_are_whole() -> None:
    assert time_logic.partial_ends(_days("2024-01-03", "2024-03-03"), "week") == (True, False)  # Wed .. Sun
    monthly = _days("2021-01-01", "2023-12-01", "MS")
    assert time_logic.partial_ends(monthly, "month") == (False, False)
    assert time_logic.partial_ends(monthly, "year") == (False, False)


def test_partial_ends_are_left_out_while_two_complete_periods_remain() -> None:
    dates = _days("2024-01-29", "2024-05-02")
    keys = [pd.Timestamp(f"2024-0{m}-01") for m in range(1, 6)]
    comparison = time_logic.compare_periods(keys, dates, "month")
    assert (comparison.first, comparison.last) == (keys[1], keys[3])
    assert comparison.excluded and comparison.partial_first and comparison.partial_last and not comparison.per_day


def test_too_few_complete_periods_compare_per_observed_day() -> None:
    dates = _days("2024-01-20", "2024-03-10")
    keys = [pd.Timestamp(f"2024-0{m}-01") for m in range(1, 4)]
    comparison = time_logic.compare_periods(keys, dates, "month")
    assert comparison.per_day and not comparison.excluded
    assert (comparison.first, comparison.last) == (keys[0], keys[-1])
    days = time_logic.observed_days(dates, time_logic.bucket(dates, "month"))
    assert days.tolist() == [12, 29, 10]


def test_complete_ends_and_year_axes_compare_the_first_and_last_periods() -> None:
    keys = [pd.Timestamp("2024-01-01"), pd.Timestamp("2024-02-01")]
    assert time_logic.compare_periods(keys, _days("2024-01-01", "2024-02-29"), "month") == time_logic.Comparison(
        keys[0], keys[1]
    )
    assert time_logic.compare_periods([1970, 1980, 1990], None, "year") == time_logic.Comparison(1970, 1990)


def test_a_weekend_share_only_on_daily_data() -> None:
    assert time_logic.weekend_share_allowed(_days("2024-01-01", "2024-03-31"))
    assert time_logic.weekend_share_allowed(pd.Series(pd.date_range("2024-01-01", periods=500, freq="3h")))
    assert not time_logic.weekend_share_allowed(_days("2021-01-01", "2023-12-01", "MS"), "month")
    assert not time_logic.weekend_share_allowed(_days("2000-01-01", "2020-01-01", "YS"), "year")
    assert not time_logic.weekend_share_allowed(_days("2024-01-01", "2024-01-04"))  # less than a week
    assert not time_logic.weekend_share_allowed(pd.Series([None, None], dtype="datetime64[ns]"))


def test_period_for_span_buckets() -> None:
    assert [time_logic.period_for_span(d) for d in (30, 100, 700, 2000, None)] == ["day", "week", "month", "year",
                                                                                   "month"]  # fmt: skip


def test_a_decimal_year_reads_as_the_month_it_starts_in_pandas_and_in_duckdb_alike() -> None:
    import duckdb

    values = pd.Series([1990.0, 1990 + 1 / 12, 1990.9166667, 1991.25, 1991 + 11.6 / 12, None, 2003 + 7 / 52,
                        float("inf")])  # fmt: skip
    dates = time_logic.decimal_year_dates(values)
    expected = ["1990-01-01", "1990-02-01", "1990-12-01", "1991-04-01", "1992-01-01", None, "2003-03-01", None]
    assert [None if pd.isna(d) else d.strftime("%Y-%m-%d") for d in dates] == expected
    connection = duckdb.connect()
    connection.register("frame", pd.DataFrame({"t": values}))
    sql = f"SELECT {time_logic.decimal_year_sql('CAST(t AS DOUBLE)')} FROM frame"
    rows = [r[0] for r in connection.execute(sql).fetchall()]
    assert [None if r is None else r.strftime("%Y-%m-%d") for r in rows] == expected


def test_a_profile_decimal_year_axis_is_a_date_axis_read_as_decimal_years() -> None:
    time = {"name": "time", "role": "category", "dtype": "float64", "semantic": "period", "distinct": 60,
            "min": 1990.0, "max": 1994.916667}  # fmt: skip
    table = _table([time], time_axis={"kind": "date", "column": "time", "period": "year", "encoding": "decimal_year"})
    axis = time_logic.trend_axis(table)
    assert axis == TimeAxis("date", "time", (), "year", encoding="decimal_year")
    assert time_logic.axis_for(_table([time]), "time") == TimeAxis("date", "time", (), "year", encoding="decimal_year")
    keys = time_logic.period_keys(pd.DataFrame({"time": [1990.0, 1990.5, 1991.0833]}), axis)
    assert [k.year for k in keys] == [1990, 1990, 1991]
    assert "make_date(" in time_logic.date_sql('"time"', axis)
    assert time_logic.axis_for(_table([{**time, "max": 1990.25}]), "time").period == "month"  # never days or weeks
    weekly = {**time, "samples": [2000 + k / 52 for k in range(5)]}  # a weekly series is no month grid
    assert time_logic.decimal_year_encoding(weekly) == time_logic.DECIMAL_YEAR_DAY


def test_a_weekly_or_daily_decimal_year_is_read_as_its_day_in_pandas_and_in_sql_alike() -> None:
    values = pd.Series([1981.0, 1981 + 1 / 365, 1984 + 365 / 366, 1990 + 7 / 52, float("nan")], name="time")
    dates = time_logic.decimal_year_dates(values, time_logic.DECIMAL_YEAR_DAY)
    assert [d.strftime("%Y-%m-%d") for d in dates.dropna()] == ["1981-01-01", "1981-01-02", "1984-12-31", "1990-02-19"]
    con = duckdb.connect()
    con.register("t", pd.DataFrame({"time": values}))
    sql = time_logic.decimal_year_sql("CAST(time AS DOUBLE)", time_logic.DECIMAL_YEAR_DAY)
    in_sql = con.execute(f"SELECT {sql} FROM t").df().iloc[:, 0]
    assert in_sql.iloc[:4].tolist() == dates.iloc[:4].tolist() and pd.isna(in_sql.iloc[4])
    weekly = {"name": "time", "role": "category", "dtype": "float64", "semantic": "period", "distinct": 695,
              "min": 1990.134615, "max": 2003.480769, "samples": [1990.134615, 1990.153846]}  # fmt: skip
    axis = time_logic.axis_for(_table([weekly]), "time")
    assert axis == TimeAxis("date", "time", (), "year", encoding=time_logic.DECIMAL_YEAR_DAY)
    short = {**weekly, "max": 1990.5}
    assert time_logic.axis_for(_table([short]), "time").period == "week"  # days are days: finer than a month


def test_whole_number_time_steps_are_an_index_axis_keyed_by_the_step() -> None:
    steps = {"name": "TIME", "role": "category", "dtype": "float64", "semantic": "time_step", "distinct": 25,
             "min": 1.0, "max": 25.0}  # fmt: skip
    table = _table([steps], time_axis={"kind": "index", "column": "TIME", "period": "step"})
    axis = time_logic.trend_axis(table)
    assert axis == TimeAxis("index", "TIME", (), "step")
    assert time_logic.axis_for(_table([steps]), "TIME") == axis
    keys = time_logic.period_keys(pd.DataFrame({"TIME": [1.0, 2.0, 2.5, None]}), axis)
    assert keys.tolist()[:2] == [1, 2] and keys.isna().tolist()[2:] == [True, True]
    assert time_logic.period_label(7, axis) == "7"
    with pytest.raises(ValueError, match="time step"):
        time_logic.axis_for(_table([{**steps, "semantic": None}]), "TIME")
