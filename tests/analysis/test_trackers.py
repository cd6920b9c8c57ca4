"""Trackers: one spec gives the pandas value AND a DuckDB check that agrees; forbidden aggregations are refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tracker_job import calcs, checked, make_job

from insightloom.analysis_utils import (
    AggregationRefused,
    compact_number,
    flush_checks,
    generate_utils_module,
    qi,
    ql,
    ref,
    track_change,
    track_corr,
    track_group_values,
    track_mean,
    track_rate,
    track_share,
    track_stat,
    track_total,
)
from insightloom.analysis_utils.numbers_text import distinct_labels

FRAME = pd.DataFrame(
    {
        "Year": [2019, 2019, 2020, 2020, 2021, 2021],
        "Date": pd.to_datetime(["2024-01-03", "2024-01-20", "2024-02-02", "2024-02-15", "2024-03-01", "2024-03-09"]),
        "Region": ["East", "West", "East", "North", "West", None],
        "Price": [12.5, 13.25, 11.0, None, 14.75, 12.0],
        "Units": [3, 5, 2, 5, 4, 1],
        "Rank": [1, 2, 3, 4, 5, 6],
        "Survived": [1, 0, 1, 1, 0, 0],
        "Clicks": [10, 20, 5, 0, 15, 10],
        "Impressions": [100, 400, 50, 0, 300, 150],
        "Salary_in_thousands_of_dollars": [50.0, 60.0, 55.5, 70.0, 65.0, 58.0],
    }
)
COLUMNS = {
    "Year": {"role": "category", "aggregation": "none", "semantic": "year"},
    "Date": {"role": "date", "aggregation": "none"},
    "Region": {"role": "category", "aggregation": "none"},
    "Price": {"role": "measure", "aggregation": "mean", "semantic": "currency", "unit": "USD"},
    "Units": {"role": "measure", "aggregation": "sum"},
    "Rank": {"role": "identifier", "aggregation": "none", "semantic": "rank"},
    "Survived": {"role": "measure", "aggregation": "mean", "semantic": "binary_outcome"},
    "Clicks": {"role": "measure", "aggregation": "sum"},
    "Impressions": {"role": "measure", "aggregation": "sum"},
    "Salary_in_thousands_of_dollars": {"role": "measure", "aggregation": "sum", "unit": "USD", "unit_scale": 1000},
}


@pytest.fixture
def job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_job(tmp_path, monkeypatch, FRAME, COLUMNS)


def test_sql_helpers_quote_and_reference() -> None:
    assert qi('a "b"') == '"a ""b"""' and qi("매출 금액") == '"매출 금액"'
    assert ql("O'Neil") == "'O''Neil'" and ql(3) == "3" and ql(2.5) == "2.5" and ql(True) == "TRUE"
    assert ref("revenue_total") == "{{calc:revenue_total}}"
    source = generate_utils_module()
    for name in ("qi", "ql", "ref", "compact_number", "track_total", "track_group_values", "run_standard"):
        assert f"    {name},\n" in source


def test_compact_number_and_ticks_that_never_repeat() -> None:
    assert (
        compact_number(3_400_000_000) == "3.4B" and compact_number(12_500) == "12.5K" and compact_number(0.85) == "0.85"
    )
    ticks = [2010.0, 2011.0, 2012.0, 2013.0, 2014.0]
    assert {compact_number(t) for t in ticks} == {"2.01K"}  # what three significant digits give: five "2.01K"
    assert distinct_labels(ticks) == ["2.01K", "2.011K", "2.012K", "2.013K", "2.014K"]


def test_total_and_mean_compute_the_value_and_a_check_that_agrees(job: Path) -> None:
    assert track_total("data", "Units", "units_total") == "{{calc:units_total}}"
    track_total("data", "Units", "units_east", where={"Region": "East"})
    track_mean("data", "Price", "price_mean")
    assert flush_checks() == 3
    got = calcs(job)
    assert got["units_total"]["value"] == 20 and got["units_total"]["unit"] == "count"  # printed without decimals
    assert got["units_east"]["value"] == 5 and "\"Region\" = 'East'" in got["units_east"]["check"]
    assert got["price_mean"]["value"] == pytest.approx(12.7)  # the missing price is skipped, like skipna
    assert got["price_mean"]["unit"] == "USD" and got["price_mean"]["decimals"] == 2  # small money keeps its cents
    assert got["units_total"]["source_file"] == "sales.csv"


def test_unit_scale_turns_thousands_into_dollars_in_value_and_check(job: Path) -> None:
    track_total("data", "Salary_in_thousands_of_dollars", "salary_total")
    assert flush_checks() == 1
    salary = calcs(job)["salary_total"]
    assert salary["value"] == pytest.approx(358_500) and salary["unit"] == "USD"


@pytest.mark.parametrize(
    ("column", "verdict", "fix"),
    [
        ("Year", "is a year (aggregation: none)", "use it as a time axis"),
        ("Price", "(aggregation: mean)", "use track_mean"),
        ("Survived", "is a 0/1 outcome (aggregation: mean)", "report the share of 1s with track_rate(view, 'Survived'"),
        ("Rank", "is a rank (aggregation: none)", "its numbers are labels"),
    ],
)
def test_a_forbidden_total_is_refused_naming_the_column_and_the_fix(
    job: Path, column: str, verdict: str, fix: str
) -> None:
    with pytest.raises(AggregationRefused) as info:
        track_total("data", column, "bad_total")
    message = str(info.value)
    assert f"Column '{column}' of view 'sales'" in message and verdict in message
    assert "a total of it means nothing" in message and f"Fix: {fix}" in message
    assert isinstance(info.value, ValueError)
    assert "bad_total" not in calcs(job)  # nothing was tracked


def test_an_average_of_a_label_is_refused(job: Path) -> None:
    with pytest.raises(AggregationRefused, match="Column 'Rank' .* an average of it means nothing"):
        track_mean("data", "Rank", "rank_mean")
    with pytest.raises(AggregationRefused, match="Column 'Year'"):
        track_group_values("by_year", "data", "Year", "Region", "sum")
    with pytest.raises(AggregationRefused, match="Column 'Price'.*a total of it"):
        track_share("data", "Price", "price_share", where={"Region": "East"})


def test_an_older_profile_without_semantics_falls_back_to_the_name_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"Amount": [1.5, 2.5], "avg_price": [3.0, 5.0], "Region": ["a", "b"]})
    make_job(tmp_path, monkeypatch, frame, {"Amount": {"role": "measure"}, "avg_price": {"role": "measure"},
                                            "Region": {"role": "category"}})  # fmt: skip
    track_total("data", "Amount", "amount_total")
    with pytest.raises(AggregationRefused, match="Column 'avg_price'"):
        track_total("data", "avg_price", "price_total")
    with pytest.raises(AggregationRefused, match="Column 'Region'"):
        track_total("data", "Region", "region_total")
    assert flush_checks() == 1 and calcs(tmp_path)["amount_total"]["value"] == 4.0


def test_share_rate_change_corr_and_stats_agree_with_their_checks(job: Path) -> None:
    track_share("data", "Units", "east_share", where={"Region": "East"})
    track_share("data", None, "east_rows", where={"Region": "East"})
    track_rate("data", "Clicks", "Impressions", "ctr")
    track_rate("data", "Clicks", "Impressions", "ctr_west", where={"Region": "West"})
    track_rate("data", "Survived", None, "survival_rate")
    track_change("data", "Units", "Year", 2019, 2021, "units_change")
    track_change("data", None, "Date", pd.Timestamp("2024-01-01"), pd.Timestamp("2024-03-01"), "rows_change",
                 agg="count", period="month")  # fmt: skip
    track_change("data", "Price", "Date", pd.Timestamp("2024-01-01"), pd.Timestamp("2024-03-01"), "price_change",
                 agg="mean", period="month")  # fmt: skip
    track_corr("data", "Clicks", "Impressions", "corr")
    track_stat("data", "Price", "price_median", "median")
    track_stat("data", "Price", "price_p90", "quantile", q=0.9)
    track_stat("data", "Price", "price_min", "min")
    track_stat("data", "Price", "price_std", "std")
    assert flush_checks() == checked(job) == 12
    got = {k: c["value"] for k, c in calcs(job).items()}
    assert got["east_share"] == pytest.approx(25.0) and got["east_rows"] == pytest.approx(100 / 3)
    assert got["ctr"] == pytest.approx(60 / 1000 * 100) and got["ctr_west"] == pytest.approx(35 / 700 * 100)
    assert got["survival_rate"] == pytest.approx(50.0)
    assert got["units_change"] == pytest.approx((5 - 8) / 8 * 100)
    assert got["rows_change"] == 0.0 and got["price_change"] == pytest.approx((13.375 - 12.875) / 12.875 * 100)
    assert got["price_median"] == 12.5 and got["price_min"] == 11.0
    std = calcs(job)["price_std"]
    assert std["check"] is None and std["recipe"] == {"op": "std", "view": "sales", "column": "Price"}


def test_undefined_numbers_are_refused_before_tracking(job: Path) -> None:
    with pytest.raises(ValueError, match="denominator is 0"):
        track_rate("data", "Clicks", "Impressions", "ctr_north", where={"Region": "North"})
    with pytest.raises(ValueError, match="0 or missing"):
        track_change("data", "Units", "Year", 2018, 2021, "units_change")
    assert calcs(job) == {}


def _groups_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, values: list[float]) -> Path:
    frame = pd.DataFrame({"Team": list("ABCD")[: len(values)], "Score": values})
    return make_job(tmp_path, monkeypatch, frame, {"Team": {"role": "category", "aggregation": "none"},
                                                   "Score": {"role": "measure", "aggregation": "sum"}})  # fmt: skip


def test_groups_are_ordered_with_checks_and_ties_named_as_ties(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _groups_job(tmp_path, monkeypatch, [5.0, 9.0, 9.0, 1.0])
    groups = track_group_values("score_by_team", "data", "Score", "Team", "sum")
    assert flush_checks() == checked(job)
    assert [r.label for r in groups.rows] == ["B", "C", "A", "D"]
    assert groups.top_tied == 2 and groups.bottom_tied == 1 and not groups.all_tied
    got = calcs(job)
    assert got["score_by_team_top"]["value"] == "B, C"  # both named, never "the largest is B"
    assert got["score_by_team_bottom"]["value"] == "D" and got["score_by_team_bottom_value"]["value"] == 1.0
    assert got["score_by_team_share_1"]["value"] == pytest.approx(37.5)
    assert got["score_by_team_groups"]["recipe"]["op"] == "count_groups"


def test_when_every_group_ties_no_top_or_bottom_is_claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _groups_job(tmp_path, monkeypatch, [4.0, 4.0, 4.0])
    groups = track_group_values("score_by_team", "data", "Score", "Team", "sum")
    assert groups.all_tied and groups.top_ref is None and groups.bottom_ref is None
    assert flush_checks() == checked(job)
    assert not {"score_by_team_top", "score_by_team_bottom"} & set(calcs(job))


def test_group_rates_of_a_binary_outcome(job: Path) -> None:
    groups = track_group_values("survived_rate_by_region", "data", "Survived", "Region", "rate")
    assert flush_checks() == checked(job)
    assert groups.unit == "%" and [(r.label, r.value) for r in groups.rows] == [
        ("East", 100.0), ("North", 100.0), ("West", 0.0)
    ]  # fmt: skip
    assert calcs(job)["survived_rate_by_region_top"]["value"] == "East, North"
    assert all(r.share_ref is None for r in groups.rows)  # a share of a rate means nothing


def test_a_text_outcome_is_a_rate_of_its_positive_value_overall_and_per_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame({"survived": ["yes", "no", "yes", None, "no", "no"], "sex": ["f", "f", "m", "m", "m", "f"]})
    columns = {
        "survived": {"role": "category", "aggregation": "mean", "semantic": "binary_outcome", "positive_value": "yes"},
        "sex": {"role": "category", "aggregation": "none"},
    }
    job = make_job(tmp_path, monkeypatch, frame, columns)
    track_rate("data", "survived", None, "survived_rate")
    groups = track_group_values("survived_rate_by_sex", "data", "survived", "sex", agg="rate", shares=False)
    assert flush_checks() >= 4  # every check reproduces its value in DuckDB
    got = calcs(job)
    assert got["survived_rate"]["value"] == pytest.approx(40.0)  # 2 of the 5 present values
    assert got["survived_rate"]["unit"] == "%" and "= 'yes'" in got["survived_rate"]["check"]
    assert [(row.label, row.value) for row in groups.rows] == [("f", pytest.approx(100 / 3)), ("m", 50.0)][::-1]


def test_a_numpy_float_group_key_is_a_plain_sql_literal() -> None:
    """np.float64 subclasses float, and NumPy 2 reprs it as np.float64(5.0), which DuckDB reads as a function."""
    import numpy as np

    from insightloom.analysis_utils.sql import ql

    assert ql(np.float64(5.0)) == "5.0" and ql(np.int64(3)) == "3"


def test_a_boolean_outcome_check_counts_what_pandas_counts() -> None:
    """A BOOLEAN column (a database's, an XLSX's TRUE/FALSE): pandas reads its yes value as "True", DuckDB as
    "true"; the check and the pandas value must still agree."""
    import duckdb

    from insightloom.analysis_utils.trackers import outcome_sql, outcome_values

    con = duckdb.connect()
    con.register("flags", pd.DataFrame({"paid": pd.array([True, False, True, None, True], dtype="boolean")}))
    con.register("texts", pd.DataFrame({"paid": ["True", "False", "True", None]}))  # a CSV's text: exact, as before
    flags = con.execute("SELECT paid FROM flags").df()["paid"]
    assert outcome_values(flags, "True").mean() == 0.75
    assert con.execute(f"SELECT AVG({outcome_sql('paid', 'True')}) FROM flags").fetchone() == (0.75,)
    assert con.execute(f"SELECT AVG({outcome_sql('paid', 'True')}) FROM texts").fetchone() == (2 / 3,)
