"""Table semantics in the built profile: headline measures, rate pairs, time axis and calc id stems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest

from insightloom.analysis import choices
from insightloom.analysis.ids import column_stems, slug_map
from insightloom.contracts import load_schema
from insightloom.demo_data import generate_demo_csv
from insightloom.intake import DataProfile, ingest

RNG = np.random.default_rng(3)


def _profile(tmp_path: Path, frame: pd.DataFrame, name: str = "data.csv") -> dict[str, Any]:
    path = tmp_path / "in" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    table: dict[str, Any] = ingest([path], tmp_path / "job").to_dict()["tables"][0]
    return table


def _col(table: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in table["columns"] if c["name"] == name)


def _headline(table: dict[str, Any]) -> list[str]:
    return [h["column"] for h in table["headline_measures"]]


def test_diamonds_lead_with_price_not_the_xyz_dimensions(tmp_path: Path) -> None:
    n = 60
    frame = pd.DataFrame({
        "carat": RNG.uniform(0.2, 3, n).round(2), "cut": RNG.choice(["Ideal", "Good", "Fair"], n),
        "price": RNG.integers(300, 19000, n), "x": RNG.uniform(3, 9, n).round(2),
        "y": RNG.uniform(3, 60, n).round(2), "z": RNG.uniform(2, 30, n).round(2),
    })  # fmt: skip
    table = _profile(tmp_path, frame)
    assert _headline(table)[0] == "price"
    assert not {"x", "y", "z"} & set(_headline(table))
    assert _col(table, "price")["aggregation"] == "mean" and _col(table, "price")["unit"] is None  # no invented $
    assert "money" in table["headline_measures"][0]["reason"]


def test_bike_rentals_lead_with_the_total_of_casual_and_registered(tmp_path: Path) -> None:
    n = 80
    casual, registered = RNG.integers(0, 300, n), RNG.integers(0, 900, n)
    frame = pd.DataFrame({
        "season": RNG.integers(1, 5, n), "hr": RNG.integers(0, 24, n), "casual": casual, "registered": registered,
        "cnt": casual + registered,
    })  # fmt: skip
    table = _profile(tmp_path, frame)
    assert _headline(table)[0] == "cnt"
    assert "casual + registered" in table["headline_measures"][0]["reason"]
    assert {_col(table, c)["semantic"] for c in ("season", "hr")} == {"code"}
    assert {_col(table, c)["aggregation"] for c in ("season", "hr")} == {"none"}


def test_yelp_leads_with_stars_not_the_votes(tmp_path: Path) -> None:
    n = 60
    frame = pd.DataFrame({"stars": RNG.integers(1, 6, n), "cool": RNG.integers(0, 40, n),
                          "funny": RNG.integers(0, 30, n), "useful": RNG.integers(0, 50, n)})  # fmt: skip
    table = _profile(tmp_path, frame)
    assert _headline(table)[0] == "stars" and _col(table, "stars")["aggregation"] == "mean"


def test_titanic_leads_with_survival_and_never_the_passenger_id_or_class(tmp_path: Path) -> None:
    n = 90
    frame = pd.DataFrame({
        "PassengerId": range(1, n + 1), "Survived": RNG.integers(0, 2, n), "Pclass": RNG.integers(1, 4, n),
        "Fare": RNG.uniform(5, 500, n).round(2), "Age": RNG.integers(1, 80, n),
    })  # fmt: skip
    table = _profile(tmp_path, frame)
    ranked = _headline(table)
    assert ranked[0] == "Survived" and "Fare" in ranked
    assert "PassengerId" not in ranked and "Pclass" not in ranked
    assert _col(table, "Survived")["semantic"] == "binary_outcome" and _col(table, "Survived")["aggregation"] == "mean"
    assert _col(table, "PassengerId")["semantic"] == "index" and _col(table, "Pclass")["role"] == "category"
    assert _col(table, "Fare")["aggregation"] == "mean" and _col(table, "Age")["aggregation"] == "mean"


def test_time_axis_is_a_date_column_with_its_period(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Date": pd.date_range("2024-01-01", periods=40, freq="D").strftime("%Y-%m-%d"),
                          "Sales": RNG.integers(1, 100, 40)})  # fmt: skip
    assert _profile(tmp_path, frame)["time_axis"] == {"kind": "date", "column": "Date", "period": "day"}


def test_time_axis_is_an_integer_year_column(tmp_path: Path) -> None:
    frame = pd.DataFrame({"year": np.repeat(np.arange(1990, 2010), 3), "lifeExp": RNG.uniform(40, 80, 60).round(1)})
    table = _profile(tmp_path, frame)
    assert table["time_axis"] == {"kind": "year", "column": "year", "period": "year"}
    year = _col(table, "year")
    assert (year["role"], year["semantic"], year["aggregation"]) == ("category", "year", "none")
    assert _col(table, "lifeExp")["aggregation"] == "mean"


def test_time_axis_is_the_year_columns_of_a_wide_table(tmp_path: Path) -> None:
    frame = pd.DataFrame({"country": ["A", "B", "C"], "1970": [1.0, 2, 3], "1971": [2.0, 3, 4], "1972": [3.0, 4, 5]})
    axis = _profile(tmp_path, frame)["time_axis"]
    assert axis == {"kind": "wide_years", "column": None, "columns": ["1970", "1971", "1972"], "period": "year"}


def test_a_hire_date_is_a_cohort_date_and_never_the_time_axis(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Hire Date": pd.date_range("2015-01-01", periods=30, freq="MS").strftime("%Y-%m-%d"),
                          "Salary": RNG.integers(30000, 90000, 30)})  # fmt: skip
    table = _profile(tmp_path, frame)
    assert _col(table, "Hire Date")["semantic"] == "cohort_date"
    assert table["time_axis"] is None and choices.date_column(table) is None


def test_rate_pairs_recompute_ctr_from_clicks_and_impressions(tmp_path: Path) -> None:
    frame = pd.DataFrame({"impressions": RNG.integers(1000, 9000, 30), "clicks": RNG.integers(10, 900, 30),
                          "conversions": RNG.integers(0, 10, 30)})  # fmt: skip
    pairs = {p["key"]: p for p in _profile(tmp_path, frame)["rate_pairs"]}
    assert pairs["ctr"]["numerator"] == "clicks" and pairs["ctr"]["denominator"] == "impressions"
    assert pairs["ctr"]["scale"] == 100.0 and pairs["ctr"]["unit"] == "%" and pairs["ctr"]["label_ko"] == "클릭률(CTR)"
    assert "conversion_rate" in pairs


def test_calc_id_stems_equal_the_slug_map_of_the_shared_datasets(datasets: Path, tmp_path: Path) -> None:
    for csv in sorted(datasets.rglob("*.csv")) + sorted(datasets.rglob("*.xlsx")):
        profile = ingest([csv], tmp_path / csv.stem).to_dict()
        for table in profile["tables"]:
            names = [c["name"] for c in table["columns"]]
            assert {c["name"]: c["calc_id_stem"] for c in table["columns"]} == slug_map(names)
            assert column_stems(table) == slug_map(names)


def test_choices_read_the_profile_keys(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Rank": range(1, 31), "Revenue": RNG.integers(10, 999, 30), "Units": RNG.integers(1, 9, 30)})
    table = _profile(tmp_path, frame)
    table["headline_measures"] = [{"column": "Units", "reason": "edited"}, {"column": "Revenue", "reason": "x"}]
    assert choices.measures(table) == ["Units", "Revenue"]
    assert choices.measures(table, "show revenue") == ["Revenue", "Units"]  # a named column moves first
    assert _col(table, "Rank")["role"] == "identifier" and "Rank" not in choices.measures(table)


def test_an_older_profile_without_the_keys_gets_the_same_answers(tmp_path: Path) -> None:
    frame = pd.DataFrame({"year": np.repeat(np.arange(2000, 2010), 2), "Rank": range(1, 21),
                          "Price": RNG.integers(10, 99, 20), "Units": RNG.integers(1, 50, 20)})  # fmt: skip
    table = _profile(tmp_path, frame)
    old = {k: v for k, v in table.items() if k not in ("rate_pairs", "headline_measures", "time_axis")}
    strip = ("aggregation", "semantic", "calc_id_stem", "unit_scale", "positive_value")
    old["columns"] = [{k: v for k, v in c.items() if k not in strip} | {"role": "measure"} if c["name"] != "year"
                      else {k: v for k, v in c.items() if k not in strip} for c in table["columns"]]  # fmt: skip
    assert choices.measures(old) == choices.measures(table) == ["Price", "Units"]
    assert choices.time_axis(old) == choices.time_axis(table) == {"kind": "year", "column": "year", "period": "year"}
    assert not choices.is_additive(_col(old, "Price")) and choices.is_additive(_col(old, "Units"))


def test_prompt_carries_the_semantics_compactly(tmp_path: Path) -> None:
    frame = pd.DataFrame({"연도": np.repeat(np.arange(2001, 2011), 2), "매출(원)": RNG.integers(100, 999, 20)})
    path = tmp_path / "in" / "k.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    profile = ingest([path], tmp_path / "job")
    prompt = profile.to_prompt()
    assert '"aggregation":"none","semantic":"year"' in prompt and '"unit":"KRW"' in prompt
    assert '"calc_id_stem":"yeondo"' in prompt and '"time_axis":{"kind":"year"' in prompt
    assert '"headline_measures":[{"column":"매출(원)"' in prompt
    assert DataProfile.from_dict(profile.to_dict()).to_dict() == profile.to_dict()  # round trip keeps every key


@pytest.mark.parametrize("scale_name", ["salary_in_thousands_of_dollars"])
def test_unit_and_scale_come_from_the_name(tmp_path: Path, scale_name: str) -> None:
    table = _profile(tmp_path, pd.DataFrame({scale_name: RNG.integers(30, 300, 20), "team": ["a", "b"] * 10}))
    col = _col(table, scale_name)
    assert (col["unit"], col["unit_scale"], col["semantic"], col["aggregation"]) == ("USD", 1000, "currency", "mean")


def test_fresh_profiles_of_the_shared_datasets_and_the_demo_match_the_schema(datasets: Path, tmp_path: Path) -> None:
    schema = load_schema("profile")
    demo = generate_demo_csv(tmp_path / "demo.csv")
    inputs = sorted(datasets.rglob("*.csv")) + sorted(datasets.rglob("*.xlsx")) + [demo]
    assert len(inputs) == 5
    for index, path in enumerate(inputs):
        profile = ingest([path], tmp_path / f"job{index}").to_dict()
        jsonschema.validate(profile, schema)
        assert all("aggregation" in c for t in profile["tables"] for c in t["columns"])


def test_the_parts_of_a_summed_total_are_summed_too(tmp_path: Path) -> None:
    n = 40
    casual, registered = RNG.integers(0, 300, n), RNG.integers(0, 900, n)
    table = _profile(tmp_path, pd.DataFrame({"casual": casual, "registered": registered, "cnt": casual + registered,
                                             "temp": RNG.uniform(0, 1, n)}))  # fmt: skip
    assert [_col(table, c)["aggregation"] for c in ("cnt", "casual", "registered", "temp")] == ["sum"] * 3 + ["mean"]


def test_a_percent_file_is_a_yearly_trend_of_percentages(tmp_path: Path) -> None:
    frame = pd.DataFrame({"Year": range(1970, 1990), "Agriculture": RNG.uniform(4, 40, 20).round(2),
                          "Biology": RNG.uniform(29, 60, 20).round(2)})  # fmt: skip
    table = _profile(tmp_path, frame, "percent-bachelors-degrees-women-usa.csv")
    assert table["time_axis"] == {"kind": "year", "column": "Year", "period": "year"}
    for name in ("Agriculture", "Biology"):
        assert (_col(table, name)["semantic"], _col(table, name)["unit"], _col(table, name)["aggregation"]) == (
            "percent", "%", "mean")  # fmt: skip


def test_a_panel_averages_its_population_and_leads_with_life_expectancy(tmp_path: Path) -> None:
    n = 24
    frame = pd.DataFrame({"country": np.repeat(["A", "B", "C", "D"], 6), "year": np.tile(range(1952, 1982, 5), 4),
                          "lifeExp": RNG.uniform(30, 80, n).round(1),
                          "pop": RNG.integers(100_000, 10**9, n)})  # fmt: skip
    table = _profile(tmp_path, frame, "gapminder.csv")
    assert _col(table, "pop")["aggregation"] == "mean"
    assert _headline(table)[0] == "lifeExp"


def test_the_table_named_after_a_measure_leads_with_it(tmp_path: Path) -> None:
    n = 60
    frame = pd.DataFrame({"affairs": RNG.choice([0, 1, 2, 3, 7, 12], n), "age": RNG.integers(18, 60, n),
                          "rating": RNG.integers(1, 6, n)})  # fmt: skip
    table = _profile(tmp_path, frame, "Affairs.csv")
    assert table["headline_measures"][0] == {"column": "affairs", "reason": "the table is named after it"}
    assert _col(table, "affairs")["aggregation"] == "mean"


def test_the_shared_datasets_and_the_demo_keep_their_sums(datasets: Path, tmp_path: Path) -> None:
    summed = {"Amount", "Qty", "노출수", "클릭수", "전환수", "광고비용", "매출액", "Units", "Revenue"}
    demo = generate_demo_csv(tmp_path / "demo.csv")
    found: dict[str, str] = {}
    for index, path in enumerate([*sorted(datasets.rglob("*.csv")), demo]):
        for table in ingest([path], tmp_path / f"job{index}").to_dict()["tables"]:
            found |= {c["name"]: c["aggregation"] for c in table["columns"] if c["name"] in summed}
    assert found == dict.fromkeys(summed, "sum")


def test_in_a_frequency_table_the_frequency_leads_not_a_yes_no_column() -> None:
    from insightloom.intake.semantics import headline_measures

    survived = {"name": "Survived", "role": "category", "dtype": "string", "semantic": "binary_outcome",
                "positive_value": "Yes", "distinct": 2, "missing": 0}  # fmt: skip
    freq = {"name": "Freq", "role": "measure", "dtype": "int64", "aggregation": "sum", "distinct": 20, "missing": 0}
    assert [h["column"] for h in headline_measures([survived, freq], 32)] == ["Freq"]
    assert [h["column"] for h in headline_measures([survived], 32)] == ["Survived"]  # person rows: the rate leads
