"""Questions read into catalog requests over a profile, or refused naming the operation or column they lack."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.statistics.parse import AMBIGUOUS, MISSING_COLUMN, UNEXPRESSED, UNSUPPORTED, Refusal, parse_question
from insightloom.statistics.request import StatRequest

PROFILE: dict[str, Any] = {"tables": [{"view": "cars", "columns": [
    {"name": "mpg", "dtype": "float64", "role": "measure", "distinct": 80},
    {"name": "weight", "dtype": "int64", "role": "measure", "distinct": 300},
    {"name": "cylinders", "dtype": "int64", "role": "measure", "distinct": 5},
    {"name": "origin", "dtype": "string", "role": "category",
     "top_values": [{"value": "usa", "count": 200}, {"value": "japan", "count": 80}, {"value": "europe", "count": 70}]},
    {"name": "Sales_2020", "dtype": "int64", "role": "measure"},
    {"name": "sales 2020", "dtype": "int64", "role": "measure"},
]}]}  # fmt: skip


def _request(question: str) -> dict[str, Any]:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found.to_json()


def test_mean_and_std_with_rounding() -> None:
    got = _request("Calculate the mean and standard deviation of the mpg column. Round to 2 decimal places.")
    assert [s["op"] for s in got["steps"]] == ["mean", "std"] and got["decimals"] == 2
    assert all(s["columns"] == ["mpg"] for s in got["steps"])


def test_method_parameters_are_read() -> None:
    z = _request("How many outliers does weight have by the Z-score method (|z| > 2.5)?")["steps"][0]
    assert z["op"] == "zscore_outliers" and z["params"]["threshold"] == 2.5
    iqr = _request("How many outliers does mpg have by the IQR method (3 × IQR)?")["steps"][0]
    assert iqr["op"] == "iqr_outliers" and iqr["params"]["k"] == 3.0
    normal = _request("Is mpg normally distributed (Shapiro-Wilk, α = 0.01)? Give the p-value to 4 decimals.")
    assert normal["form"] == "verdict" and normal["steps"][0]["params"]["alpha"] == 0.01
    assert "p_value" in normal["steps"][0]["show"]


def test_which_group_asks_for_the_name() -> None:
    got = _request("Which origin has the highest average mpg?")
    assert got["form"] == "name"
    assert got["steps"][0] == {"op": "group_max", "columns": ["mpg"], "group": "origin", "params": {"agg": "mean"},
                               "show": ["group", "value"]}  # fmt: skip


def test_filters_tests_and_korean() -> None:
    got = _request("What is the mean of mpg for rows where origin = 'japan'? Round to 3 decimals.")
    assert got["filters"] == [["origin", "=", "japan"]] and got["decimals"] == 3
    welch = _request("Is there a significant difference in mpg between usa and japan (Welch's t-test)?")
    step = welch["steps"][0]
    assert step["op"] == "ttest" and step["params"]["equal_var"] is False and sorted(step["params"]["levels"]) == [
        "japan", "usa"]  # fmt: skip
    assert "filters" not in welch
    ko = _request("mpg 열의 평균과 표준편차를 구하시오. 소수점 둘째 자리까지 반올림하시오.")
    assert [s["op"] for s in ko["steps"]] == ["mean", "std"] and ko["decimals"] == 2 and ko["language"] == "ko"
    anova = _request("Does mpg differ across cylinders (one-way ANOVA)?")["steps"][0]
    assert anova["op"] == "anova" and anova["group"] == "cylinders"


@pytest.mark.parametrize(
    ("question", "kind", "named"),
    [
        ("What is the geometric mean of mpg?", UNSUPPORTED, "geometric mean"),
        ("What is the mode of weight?", UNSUPPORTED, "mode"),
        ("What is the mean of the horsepower column?", MISSING_COLUMN, "horsepower"),
        ("What is the average temperature of the cars?", MISSING_COLUMN, "temperature"),
        ("What is the mean of sales 2020?", AMBIGUOUS, "Sales_2020"),
        ("What is the mean mpg in March?", UNEXPRESSED, "in March"),
    ],
)
def test_refusals_name_what_is_missing(question: str, kind: str, named: str) -> None:
    found = parse_question(question, PROFILE)
    assert isinstance(found, Refusal) and found.kind == kind, found
    assert named in found.reason


def test_a_question_without_a_statistic_is_left_to_retrieval() -> None:
    assert parse_question("Summarise the report for me", PROFILE) is None


def test_a_group_extreme_without_a_measure_or_a_count_word_is_left_to_the_report() -> None:
    assert parse_question("Which origin sells the most?", PROFILE) is None
    got = _request("Which origin has the highest number of rows?")
    assert got["steps"][0]["params"] == {"agg": "count"} and got["steps"][0]["columns"] == []
    assert _request("Which origin has the most cars?")["steps"][0]["params"] == {"agg": "count"}
    assert parse_question("Which origin has the most sales?", PROFILE) is None


def test_a_stored_rate_compared_across_groups_is_left_to_the_report() -> None:
    table = {
        **PROFILE["tables"][0],
        "rate_pairs": [{"key": "roas", "label": "ROAS", "numerator": "revenue", "denominator": "cost", "scale": 1.0}],
    }
    table["columns"] = [*table["columns"], {"name": "ROAS", "dtype": "float64", "role": "rate", "distinct": 200}]
    profile = {"tables": [table]}
    assert parse_question("Which origin has the highest ROAS?", profile) is None
    mean = parse_question("Which origin has the highest average ROAS?", profile)
    assert isinstance(mean, StatRequest) and mean.steps[0].param("agg") == "mean"  # asked for: the rows' mean
