"""Wordings from the fourth blind set's failures (issue 21), each read into the request it asks, or refused naming
what is missing; the table is made up, so no test knows a benchmark answer."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.ask.missing import unknown_phrases
from insightloom.ask.stat_answer import refusal_reason
from insightloom.statistics.parse import MISSING_COLUMN, UNREAD, UNSUPPORTED, Refusal, parse_question
from insightloom.statistics.request import Filter, StatRequest, Step

_CAT = {"dtype": "string", "role": "category"}
PROFILE: dict[str, Any] = {"tables": [{"view": "survey", "rows": 500, "columns": [
    {"name": "Year", "dtype": "int64", "role": "measure", "distinct": 80},
    {"name": "mag", "dtype": "float64", "role": "measure", "distinct": 40},
    {"name": "temp", "dtype": "int64", "role": "measure", "distinct": 200},
    {"name": "age", "dtype": "int64", "role": "measure", "distinct": 60},
    {"name": "checks", "dtype": "int64", "role": "measure", "distinct": 7},
    {"name": "rating", "dtype": "int64", "role": "measure", "distinct": 5},
    {"name": "gender", "dtype": "int64", "role": "measure", "distinct": 2, "min": 1, "max": 2},
    {"name": "prestige", "dtype": "float64", "role": "measure", "distinct": 90},
    {"name": "Subject", "dtype": "int64", "role": "measure", "distinct": 12},
    {"name": "star", "dtype": "string", "role": "text", "distinct": 500},
    {"name": "sex", **_CAT, "distinct": 2, "top_values": [{"value": "M", "count": 300}, {"value": "F", "count": 200}]},
    {"name": "released", **_CAT, "distinct": 2,
     "top_values": [{"value": "Yes", "count": 400}, {"value": "No", "count": 100}]},
    {"name": "married", **_CAT, "distinct": 2,
     "top_values": [{"value": "Yes", "count": 250}, {"value": "No", "count": 250}]},
    {"name": "item", **_CAT, "distinct": 60},
    {"name": "type", **_CAT, "distinct": 7},
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("How many rows have a mag of 5.5 or higher?", Filter("mag", ">=", 5.5)),
        ("How many people scored at least 15 for rating?", Filter("rating", ">=", 15.0)),
        ("How many people gave a rating of 5?", Filter("rating", "=", 5.0)),
        ("How many rows have zero checks?", Filter("checks", "=", 0.0)),
        ("How many stars have a negative mag?", Filter("mag", "<", 0.0)),
        ("How many records are older than 65?", Filter("age", ">", 65.0)),
        ("`age`(나이)가 30세 이상인 사람은 몇 명인가요?", Filter("age", ">=", 30.0)),
        ("`checks`(조회 건수)가 0이면서 released가 Yes인 사람은 몇 명?", Filter("checks", "=", 0.0)),
        ("`temp`가 60도를 넘는 행은 몇 개?", Filter("temp", ">", 60.0)),
        ("1700년 이후(1700년 포함) 연도의 mag 평균은?", Filter("Year", ">=", 1700.0)),
        ("What is the mean mag since 1650?", Filter("Year", ">=", 1650.0)),
    ],
)
def test_a_comparison_written_every_way_is_a_filter(question: str, wanted: Filter) -> None:
    found = _request(question)
    conditions = [*found.filters, *(Filter(*c) for s in found.steps for c in s.param("where") or ())]
    assert wanted in conditions, found


def test_a_number_with_a_unit_or_a_korean_counter_is_never_left_unread() -> None:
    found = parse_question("`mag`가 300km 근처인 행의 age 평균은?", PROFILE)
    assert isinstance(found, Refusal) and found.kind == UNREAD and "300" in found.named


def test_superlatives_and_plurals_read_as_extremes_distinct_counts_and_a_measure() -> None:
    assert [s.op for s in _request("What are the highest and lowest prestige scores?").steps] == ["max", "min"]
    both = _request("How many distinct subjects are there, and how many distinct ratings?")
    assert both.steps == (Step("distinct", ("Subject",)), Step("distinct", ("rating",)))
    hottest = _request("Which star is the hottest?")
    assert hottest.form == "name" and hottest.steps[0].columns == ("temp",) and hottest.steps[0].group == "star"


def test_a_gloss_a_level_in_parentheses_and_side_by_side_names_pick_the_group() -> None:
    assert _request("Which item type has the highest median age?").steps[0].group == "type"
    assert _request("One-way ANOVA of age across item kinds (type): F to 2 decimals.").steps[0].group == "type"
    welch = _request("Welch t-test of age, males (M) versus females (F): t to 3 decimals and p to 4 decimals.")
    assert welch.steps[0].group == "sex" and dict(welch.part_decimals) == {"statistic": 3, "p_value": 4}
    coded = _request("Compare age between gender 1 and gender 2 with a t-test that does not assume equal variances.")
    assert coded.steps[0].param("levels") == ("1", "2") and coded.steps[0].param("equal_var") is False


def test_a_value_read_beside_its_column_is_no_other_columns_filter() -> None:
    found = _request("Welch t-test of age (released = Yes vs released = No): is it significant?")
    assert found.filters == () and found.steps[0].param("levels") == ("Yes", "No")


def test_an_abbreviated_column_spelled_out_is_read_on_a_second_reading() -> None:
    assert _request("What is the median temperature? 3 decimals.").steps == (Step("median", ("temp",)),)
    assert _request("How many rows have a magnitude of 5 or more?").filters == (Filter("mag", ">=", 5.0),)


def test_which_with_no_group_column_refuses_rather_than_answering_a_value() -> None:
    found = parse_question("Which party's voters give the highest average rating?", PROFILE)
    assert isinstance(found, Refusal) and found.kind == MISSING_COLUMN and found.named == ("party's voters",)


def test_methods_are_named_whole_and_korean_reasons_are_korean() -> None:
    for question, term in (("Run hierarchical clustering on age and mag.", "hierarchical clustering"),
                           ("Estimate the elimination half-life from a model.", "elimination half-life"),
                           ("Compute the area under the curve (AUC) of temp.", "AUC")):  # fmt: skip
        found = parse_question(question, PROFILE)
        assert isinstance(found, Refusal) and found.kind == UNSUPPORTED and term in found.named, found
    korean = parse_question("age의 기하평균은?", PROFILE)
    assert isinstance(korean, Refusal) and korean.named == ("기하평균",)
    assert refusal_reason(korean, "ko") == "통계 카탈로그에 '기하평균' 연산이 없습니다"
    assert refusal_reason(korean, "en") == korean.reason


def test_an_abstention_names_adjacent_unknown_words_as_one_phrase() -> None:
    phrases = unknown_phrases("Train a naive Bayes classifier and report its accuracy", {"age"})
    assert "naive bayes classifier" in phrases and "accuracy" in phrases
    assert unknown_phrases("Fit a Gutenberg-Richter law", set()) == ["gutenberg-richter law"]


CLINIC: dict[str, Any] = {"tables": [{"view": "clinic", "rows": 300, "columns": [
    {"name": "Prewt", "dtype": "float64", "role": "measure", "distinct": 250},
    {"name": "Postwt", "dtype": "float64", "role": "measure", "distinct": 250},
    {"name": "latitude", "dtype": "float64", "role": "measure", "distinct": 40},
    {"name": "income", "dtype": "int64", "role": "measure", "distinct": 280},
    {"name": "supp", **_CAT, "distinct": 2,
     "top_values": [{"value": "OJ", "count": 150}, {"value": "VC", "count": 150}]},
    {"name": "vote", **_CAT, "distinct": 3,
     "top_values": [{"value": "Y", "count": 100}, {"value": "N", "count": 100}, {"value": "U", "count": 100}]},
    {"name": "smoke", **_CAT, "distinct": 2,
     "top_values": [{"value": "Yes", "count": 80}, {"value": "No", "count": 220}]},
    {"name": "marital", **_CAT, "distinct": 4},
    {"name": "location", **_CAT, "distinct": 6},
]}]}  # fmt: skip


def _clinic(question: str) -> StatRequest:
    found = parse_question(question, CLINIC)
    assert isinstance(found, StatRequest), found
    return found


def test_values_written_short_or_after_a_gloss_are_filters() -> None:
    assert _clinic("mean Prewt for OJ? 2 dp").filters == (Filter("supp", "=", "OJ"),)
    assert _clinic("투표 의향(vote)이 Y인 응답자는 몇 명인가요?").filters == (Filter("vote", "=", "Y"),)
    assert _clinic("For rows with latitudes above 20 degrees, what is the median Prewt?").filters == (
        Filter("latitude", ">", 20.0),
    )


def test_korean_regression_roles_follow_the_object_particle() -> None:
    for question in (
        "Postwt를 Prewt로 회귀하면 기울기는?",
        "치료 후 체중(Postwt)을 치료 전 체중(Prewt)으로 설명하는 회귀의 기울기는?",
    ):
        assert _clinic(question).steps[0].columns == ("Prewt", "Postwt"), question  # (x, y)


def test_every_part_of_a_question_with_a_verdict_is_asked() -> None:
    found = _clinic("Give the sample variance of Prewt to 3 decimals and tell me whether it is normal (Shapiro-Wilk).")
    assert [s.op for s in found.steps] == ["var", "normality"] and found.form == "verdict"
    parts = _clinic("Regress Postwt on Prewt. Report the slope to 4 decimals and the intercept to 3.")
    assert dict(parts.part_decimals) == {"slope": 4, "intercept": 3}


def test_a_single_rows_extreme_and_a_one_level_filter_beside_a_grouping() -> None:
    leaf = _clinic("Prewt가 가장 낮은 환자 하나는 어느 지역(location)에 있나요?").steps[0]
    assert leaf.op == "group_min" and leaf.param("agg") == "min"
    among = _clinic("Among smokers only, does Prewt differ by marital? One-way ANOVA at alpha = 0.01.")
    assert among.steps[0].group == "marital" and among.filters == (Filter("smoke", "=", "Yes"),)


def test_korean_levels_rounding_units_and_thresholds() -> None:
    korean = _clinic(
        "supp OJ와 VC의 Prewt를 Welch t-검정으로 비교한 p-값(소수점 셋째 자리)과 5% 수준에서 유의한지 알려 주세요."
    )
    assert korean.steps[0].param("alpha") == 0.05 and korean.form == "verdict"
    assert _clinic("Mean income, rounded to the nearest peso?").decimals == 0
    z = _clinic("Flagging values whose z-score exceeds 2.5 in absolute value, how many Prewt outliers are there?")
    assert z.steps[0].param("threshold") == 2.5


def test_an_operation_glossed_in_english_is_no_missing_column_and_more_methods_are_named() -> None:
    assert _clinic("income의 모표준편차(population standard deviation)는? 소수점 셋째 자리").steps[0].param("ddof") == 0
    lda = ("Use linear discriminant analysis to classify each location.", "linear discriminant analysis")
    iv = ("Estimate it with instrumental variables (two-stage least squares).", "instrumental variables")
    for question, term in (lda, iv):
        found = parse_question(question, CLINIC)
        assert isinstance(found, Refusal) and found.kind == UNSUPPORTED and term in found.named, found


def test_a_share_of_a_yes_no_column_named_bare_counts_where_it_holds() -> None:
    share = _clinic("What percentage of rows smoke? 2 decimals.").steps[0]
    assert share.op == "share" and share.param("where") == (("smoke", "=", "Yes"),)
    assert _clinic("smoke 열의 결측값은 몇 개인가요?").steps == (Step("missing", ("smoke",)),)


def test_sixth_set_wordings_never_crash_and_read_the_symbols_and_the_significance_asked() -> None:
    quartiles = _clinic("Prewt의 사분위수 범위를 보기 위해 1사분위수(25%)와 3사분위수(75%)를 구해 주세요.")
    assert [s.op for s in quartiles.steps] == ["quantile", "quantile"]
    alone = parse_question("What is the interquartile range of Prewt?", CLINIC)
    assert isinstance(alone, Refusal) and alone.kind == UNSUPPORTED and alone.named == ("interquartile range",)
    at_least = _clinic("For rows with latitude at least 7, what is the mean Prewt?")
    assert at_least.form == "value" and at_least.steps == (Step("mean", ("Prewt",)),)
    formula = _clinic("Fitting Postwt = a + b·Prewt by least squares, what are b (3 dp) and R² (3 dp)?")
    assert {"slope", "r_squared"} <= set(formula.steps[0].show)
    korean = _clinic("Prewt와 Postwt의 피어슨 상관계수는 얼마이며(소수 셋째 자리), 유의수준 5%에서 유의한가요?")
    assert korean.form == "verdict" and "significant" in korean.steps[0].show
    assert _clinic("What is the average Prewt across all 300 rows? 2 decimals.").steps == (Step("mean", ("Prewt",)),)
    assert _clinic("How many rows have a latitude of 55 degrees or more?").filters == (Filter("latitude", ">=", 55.0),)
