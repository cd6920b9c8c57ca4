"""One test per wording the parser reads (or refuses, naming what it could not read) since issue 21's second set."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from insightloom.statistics.operations import evaluate
from insightloom.statistics.parse import MISSING_COLUMN, UNREAD, UNSUPPORTED, Refusal, parse_question
from insightloom.statistics.request import Filter, StatRequest, Step

_CODED = {"dtype": "int64", "role": "measure", "distinct": 2, "min": 0, "max": 1}
PROFILE: dict[str, Any] = {"tables": [{"view": "births", "rows": 200, "columns": [
    {"name": "bwt", "dtype": "int64", "role": "measure", "distinct": 150},
    {"name": "lwt", "dtype": "int64", "role": "measure", "distinct": 90},
    {"name": "age", "dtype": "int64", "role": "measure", "distinct": 30},
    {"name": "smoke", **_CODED},
    {"name": "low", **_CODED},
    {"name": "price", "dtype": "float64", "role": "measure", "distinct": 180},
    {"name": "sqft", "dtype": "float64", "role": "measure", "distinct": 170},
    {"name": "R", "dtype": "int64", "role": "measure", "distinct": 60},
    {"name": "HomeGoals", "dtype": "int64", "role": "measure", "distinct": 9},
    {"name": "grade", "dtype": "int64", "role": "measure", "distinct": 3, "min": 1, "max": 3},
    {"name": "sex", "dtype": "string", "role": "category", "distinct": 2,
     "top_values": [{"value": "M", "count": 110}, {"value": "F", "count": 90}]},
    {"name": "race", "dtype": "string", "role": "category", "distinct": 3,
     "top_values": [{"value": "white", "count": 96}, {"value": "black", "count": 26}, {"value": "other", "count": 67}]},
    {"name": "deny", "dtype": "string", "role": "category", "distinct": 2,
     "top_values": [{"value": "no", "count": 180}, {"value": "yes", "count": 20}]},
    {"name": "team", "dtype": "string", "role": "category", "distinct": 20,
     "top_values": [{"value": "ATL", "count": 10}, {"value": "BOS", "count": 10}]},
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found


def _refusal(question: str, kind: str) -> Refusal:
    found = parse_question(question, PROFILE)
    assert isinstance(found, Refusal) and found.kind == kind, found
    return found


def test_t_by_its_symbol_is_the_statistic() -> None:
    step = _request("Welch t-test of bwt, sex M minus F. Report t and p to 4 decimals.").steps[0]
    assert "statistic" in step.show and step.param("levels") == ("M", "F")


def test_a_level_named_f_is_no_f_statistic() -> None:
    step = _request("Welch t-test of bwt between sex = M and sex = F: report the p-value.").steps[0]
    assert "statistic" not in step.show


def test_f_of_an_anova_is_the_statistic() -> None:
    step = _request("Run a one-way ANOVA of bwt across race. Report F to 3 decimals.").steps[0]
    assert step.op == "anova" and "statistic" in step.show


def test_chi_square_symbol_and_degrees_of_freedom() -> None:
    got = _request("Chi-square test of independence between sex and race: report χ², p and the degrees of freedom.")
    assert {"statistic", "dof"} <= set(got.steps[0].show)


def test_whole_number_parts_print_no_decimals() -> None:
    got = _request("Chi-square test between sex and race: the statistic and the degrees of freedom, 2 decimals.")
    assert got.decimals_for("dof", "chi2") == 0 and got.decimals_for("statistic", "chi2") == 2
    assert got.decimals_for("value", "count") == 0 and got.decimals_for("value", "share") == 2


def test_whether_asks_a_verdict() -> None:
    assert _request("ANOVA of bwt by race: state whether it is significant at 0.05.").form == "verdict"


def test_korean_gayo_asks_a_verdict() -> None:
    assert _request("race에 따른 bwt의 일원분산분석 p-값은? 유의수준 5%에서 유의한가요?").form == "verdict"


def test_korean_hanji_asks_a_verdict() -> None:
    assert _request("sex에 따른 bwt의 차이를 t-검정으로 확인하고, α = 0.05에서 유의한지 답하세요.").form == "verdict"


def test_a_bare_significant_question_asks_a_verdict() -> None:
    got = _request("Chi-square test of sex and race. Report the p-value (4 decimals). Significant at 0.05?")
    assert got.form == "verdict" and got.steps[0].param("alpha") == 0.05


def test_and_is_the_slope_significant() -> None:
    got = _request("Regress price on sqft. What is the slope (4 decimals), and is the slope significant?")
    assert got.form == "verdict" and "significant" in got.steps[0].show


def test_the_significance_sentence_decides_the_verdict() -> None:
    step = _request("Is race independent of sex? Run a chi-square test. Is it significant at α = 0.05?").steps[0]
    assert step.param("invert") is None


def test_a_positive_correlation_verdict() -> None:
    got = _request("bwt와 lwt의 스피어만 상관계수를 소수점 셋째 자리까지 구하세요. 양의 상관인가요?")
    assert got.form == "verdict" and "positive" in got.steps[0].show


def test_a_ttest_of_a_zero_one_coded_group_in_the_order_asked() -> None:
    step = _request("Welch's t-test on bwt, smoke = 1 minus smoke = 0: t and p to 4 decimals.").steps[0]
    assert step.op == "ttest" and step.group == "smoke" and step.param("levels") == ("1", "0")


def test_a_numeric_level_order_in_parentheses() -> None:
    step = _request(
        "smoke(1 vs 0)에 따라 bwt가 다른지 Welch t-검정으로 비교하세요 (1 − 0). t 통계량을 보고하세요."
    ).steps[0]
    assert step.param("levels") == ("1", "0")


def test_chi_square_of_two_zero_one_columns() -> None:
    step = _request("Perform a chi-square test of independence between smoke and low. Report the p-value.").steps[0]
    assert step.op == "chi2" and {step.columns[0], step.group} == {"smoke", "low"}


def test_count_and_share_share_their_condition() -> None:
    got = _request(
        "How many babies were born with low birth weight (low == 1), and what percentage is that (2 decimals)?"
    )
    assert [s.op for s in got.steps] == ["count", "share"] and not got.filters
    assert all(s.param("where") == (("low", "=", 1.0),) for s in got.steps)


def test_a_count_with_its_condition_counts_those_rows() -> None:
    data = pd.DataFrame({"low": [1, 0, 1, 1]})
    assert evaluate(Step("count", (), params=(("where", (("low", "=", 1.0),)),)), data)["value"] == 3


def test_y_equals_a_plus_b_x_and_respectively() -> None:
    got = _request("Fit price = a + b·sqft by least squares. Give the slope b and R² to 2 and 4 decimals respectively.")
    assert got.steps[0].columns == ("sqft", "price")
    assert got.decimals_for("slope") == 2 and got.decimals_for("r_squared") == 4


def test_regression_role_words() -> None:
    got = _request("Fit a linear regression with price as the outcome and sqft as the predictor. Report the slope.")
    assert got.steps[0].columns == ("sqft", "price")


def test_a_quartile_restated_in_parentheses() -> None:
    got = _request("price의 중앙값과 제1사분위수(25%)를 소수점 둘째 자리까지 구하세요.")
    assert [s.op for s in got.steps] == ["median", "quantile"] and got.steps[1].param("q") == 0.25


def test_an_unread_number_refuses_naming_it() -> None:
    refusal = _refusal("Among players with at least 300 at-bats, what is the mean bwt?", UNREAD)
    assert "at least 300 at-bats" in refusal.reason


def test_an_unread_number_without_any_column_refuses() -> None:
    assert "Category 5" in _refusal("How many of these were Category 5 on the scale?", UNREAD).reason


def test_a_yes_no_comparison_of_a_statistic_refuses() -> None:
    _refusal("Is the mean bwt above the median bwt?", UNREAD)


def test_which_noun_that_no_column_names_refuses() -> None:
    assert "class type" in _refusal("Which class type has the highest average bwt?", MISSING_COLUMN).reason


def test_a_group_extreme_of_no_column_refuses() -> None:
    assert "seat" in _refusal("Which race has the largest average seat count?", MISSING_COLUMN).reason


def test_a_korean_particle_between_column_and_value() -> None:
    got = _request("표본 중 수컷(`sex`가 M)의 비율은 몇 퍼센트인가요? 소수점 둘째 자리까지.")
    assert got.steps[0].op == "share" and got.steps[0].param("where") == (("sex", "=", "M"),)


def test_a_korean_term_glossed_in_english_that_no_column_names() -> None:
    refusal = _refusal("임신 주수(gestational age)의 평균은 몇 주인가요?", MISSING_COLUMN)
    assert "gestational age" in refusal.reason and "임신 주수" in refusal.reason


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Fit a Poisson regression of bwt on age and report the incidence rate ratio.", "Poisson"),
        ("Fit a Cox proportional hazards model of bwt on smoke and report the hazard ratio.", "Cox"),
        ("Estimate the Kaplan-Meier median survival by smoke.", "Kaplan-Meier"),
    ],
)
def test_unsupported_models_are_named(question: str, named: str) -> None:
    assert named in _refusal(question, UNSUPPORTED).reason


def test_a_past_tense_of_a_column_left_unread_refuses() -> None:
    assert "smoked" in _refusal("How many low-weight births (low = 1) smoked?", UNREAD).reason


def test_a_past_tense_of_a_yes_no_column_is_its_yes() -> None:
    got = _request("How many smokers (smoke = 1) were denied?")
    assert set(got.filters) == {Filter("smoke", "=", 1.0), Filter("deny", "=", "yes")}
    assert Filter("deny", "=", "no") in _request("How many smokers (smoke = 1) were not denied?").filters


def test_a_singular_count_names_a_plural_column() -> None:
    table = {**PROFILE["tables"][0]}
    table["columns"] = [*table["columns"], {"name": "seats", "dtype": "int64", "role": "measure", "distinct": 40}]
    got = parse_question("Which race has the largest average seat count?", {"tables": [table]})
    assert isinstance(got, StatRequest) and got.steps[0].columns == ("seats",)


def test_abs_r_is_no_column_r() -> None:
    got = _request("What is the Pearson correlation between bwt and lwt? Is it strong (|r| ≥ 0.7)?")
    assert got.steps[0].columns == ("bwt", "lwt") and got.steps[0].param("strong_r") == 0.7


def test_a_statistic_of_a_missing_column_per_group_refuses() -> None:
    assert "player salary" in _refusal("What is the average player salary for each team?", MISSING_COLUMN).reason


def test_camel_case_names_read_as_words() -> None:
    assert _request("What is the mean of home goals? 2 decimals.").steps[0].columns == ("HomeGoals",)


def test_ddof_zero_is_read() -> None:
    assert _request("What is the population standard deviation (ddof = 0) of bwt?").steps[0].param("ddof") == 0


def test_no_value_recorded_is_missing() -> None:
    assert _request("How many births have no `age` recorded?").steps[0].op == "missing"


def test_predicting_in_a_regression_is_its_roles() -> None:
    got = _request("Fit a simple linear regression predicting price from sqft. Report the slope (3 decimals).")
    assert got.steps[0].columns == ("sqft", "price")


def test_alpha_at_the_level() -> None:
    step = _request("Chi-square test of sex and race. Is the association significant at the 1% level?").steps[0]
    assert step.param("alpha") == 0.01


def test_a_correlation_of_three_columns_refuses() -> None:
    _refusal("What is the Pearson correlation of bwt, lwt and age?", UNREAD)


def test_a_correlation_sign_part() -> None:
    data = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [4.0, 3.0, 2.5, 1.0]})
    got = evaluate(Step("pearson", ("x", "y")), data)
    assert got["negative"] == "yes" and got["positive"] == "no"


def test_filters_stay_filters() -> None:
    got = _request("What is the mean bwt for rows where race = 'white'?")
    assert got.filters == (Filter("race", "=", "white"),)
