"""Wordings from the eighth blind set's misses (issue 21): a value that is also a column's name, a measure named by
a verb ("weigh", "aged"), a group column of a few numbers after "which", a number with its scale word, a threshold
said as a cut-off, a yes/no after a dash, the χ² statistic by name, the Korean "넘는" and "몇 %", Korean columns
named before their operation, and model families the catalog lacks. The table is made up, so no test knows a
benchmark answer."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.statistics.parse import UNSUPPORTED, Refusal, parse_question
from insightloom.statistics.request import Filter, StatRequest

_CAT = {"dtype": "string", "role": "category"}


def _category(name: str, **counts: int) -> dict[str, Any]:
    top = [{"value": value, "count": count} for value, count in counts.items()]
    return {"name": name, **_CAT, "distinct": len(top), "top_values": top}


PROFILE: dict[str, Any] = {"tables": [{"view": "mice", "rows": 400, "columns": [
    _category("cause", inbed=300, alive=100),
    {"name": "inbed", "dtype": "int64", "role": "measure", "distinct": 2},
    _category("diet", hf=200, chow=200),
    _category("sex", female=210, male=190),
    {"name": "gen", "dtype": "int64", "role": "measure", "distinct": 5},
    {"name": "body_weight", "dtype": "float64", "role": "measure", "distinct": 390},
    {"name": "percent_fat", "dtype": "float64", "role": "rate", "distinct": 380},
    {"name": "bone_density", "dtype": "float64", "role": "measure", "distinct": 370},
    {"name": "age", "dtype": "int64", "role": "measure", "distinct": 60},
    {"name": "passengers", "dtype": "float64", "role": "measure", "distinct": 400},
    _category("treatment", yes=200, no=200),
    _category("outcome", a=200, b=100, c=100),
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found


def test_a_value_that_is_also_a_column_name_filters_after_its_column() -> None:
    found = _request("Standard deviation of age for those who died in bed (cause = inbed), 2 decimals.")
    assert found.filters == (Filter("cause", "=", "inbed"),)
    assert found.steps[0].columns == ("age",)
    assert _request("Mean inbed").steps[0].columns == ("inbed",)  # said alone, it is still the column


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("Count the mice on the high-fat diet (diet = hf) that weigh more than 50 g.", Filter("body_weight", ">", 50)),
        ("How many are female and aged 50 or over?", Filter("age", ">=", 50)),
        ("What percentage are aged 18 or younger? 1 decimal.", Filter("age", "<=", 18)),
    ],
)
def test_a_verb_names_its_measure_and_compares_it(question: str, wanted: Filter) -> None:
    found = _request(question)
    assert wanted in found.filters or wanted in tuple(Filter(*f) for f in found.steps[0].param("where") or ()), found


def test_a_few_level_number_column_after_which_is_the_group() -> None:
    step = _request("Which generation (gen) has the heaviest mice on average?").steps[0]
    assert (step.op, step.group, step.columns, step.param("agg")) == ("group_max", "gen", ("body_weight",), "mean")


@pytest.mark.parametrize(("words", "value"), [("10 million", 1e7), ("2.5 billion", 2.5e9), ("40 thousand", 4e4)])
def test_a_number_with_its_scale_word_is_one_number(words: str, value: float) -> None:
    assert _request(f"How many rows have more than {words} passengers?").filters == (Filter("passengers", ">", value),)
    assert _request("How many rows have more than 10 passengers?").filters == (Filter("passengers", ">", 10),)


@pytest.mark.parametrize(
    ("question", "show", "threshold"),
    [
        ("Pearson r between body_weight and percent_fat (3 dp). Is it strong at the 0.7 cutoff?", "strong", 0.7),
        ("Spearman correlation between age and body_weight to 3 decimals; is |rho| at least 0.5?", "strong", 0.5),
        ("Pearson correlation between age and body_weight to 3 decimals — is the relationship positive?",
         "positive", None),
    ],
)  # fmt: skip
def test_a_yes_no_on_a_correlation_is_asked(question: str, show: str, threshold: float | None) -> None:
    found = _request(question)
    assert found.form == "verdict" and show in found.steps[0].show, found
    assert found.steps[0].param("strong_r") == threshold


def test_the_chi_square_statistic_named_with_its_rounding_is_shown() -> None:
    asked = "Chi-square test of independence between treatment and outcome: chi-square (2 dp), degrees of freedom?"
    assert {"statistic", "dof"} <= set(_request(asked).steps[0].show)
    assert (
        "statistic" not in _request("Chi-square test of independence between treatment and outcome: dof?").steps[0].show
    )


def test_korean_exceeds_and_what_percent_is_a_share() -> None:
    step = _request("body_weight 값이 50을 넘는 쥐는 몇 %인가요? 소수점 둘째 자리까지.").steps[0]
    assert step.op == "share" and step.param("where") == (("body_weight", ">", 50.0),)


def test_korean_columns_named_before_their_operation_each_get_it() -> None:
    steps = _request("bone_density와 percent_fat의 결측치 개수를 각각 알려주세요.").steps
    assert [(s.op, s.columns) for s in steps] == [("missing", ("bone_density",)), ("missing", ("percent_fat",))]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Fit a GEE logistic model of body_weight on age with an exchangeable correlation structure.", "GEE"),
        ("Estimate mean age with a double-bounded interval model by maximum likelihood.", "maximum likelihood"),
        ("태도 문항들로 응답자를 k-평균 군집분석(k=3)해서 각 군집의 크기를 알려줘.", "k-평균"),
        ("diet를 예측하는 랜덤 포레스트 모델을 학습시키고 테스트 AUC를 알려주세요.", "랜덤 포레스트"),
    ],
)
def test_a_model_family_the_catalog_lacks_is_refused_naming_it(question: str, named: str) -> None:
    found = parse_question(question, PROFILE)
    assert isinstance(found, Refusal) and found.kind == UNSUPPORTED, found
    assert named in found.named


def test_a_period_word_before_a_measure_of_a_table_with_no_time_axis_is_its_unit() -> None:
    found = _request("Average annual passengers per row, rounded to the nearest whole number.")
    assert (found.steps[0].op, found.steps[0].columns, found.decimals) == ("mean", ("passengers",), 0)
    dated = {"tables": [{**PROFILE["tables"][0], "time_axis": {"column": "date", "grain": "day"}}]}
    refused = parse_question("Average annual passengers per row?", dated)
    assert isinstance(refused, Refusal) and "annual" in refused.reason, refused
    assert isinstance(parse_question("Monthly average passengers?", PROFILE), Refusal)  # a grain of the mean


@pytest.mark.parametrize(
    ("question", "param", "value"),
    [
        ("body_weight의 IQR 기준(1.5배) 이상치는 몇 개?", "k", 1.5),
        ("How many IQR outliers (2.0 rule) does body_weight have?", "k", 2.0),
        ("body_weight의 3사분위수(75% 분위수)는? 소수 둘째 자리.", "q", 0.75),
    ],
)
def test_a_parameter_restated_in_a_parenthesis_is_read(question: str, param: str, value: float) -> None:
    assert _request(question).steps[0].param(param) == value


def test_a_korean_level_said_before_significance_is_the_alpha() -> None:
    step = _request("outcome별 body_weight에 대한 일원분산분석 F값(소수 셋째 자리)과 1% 유의 여부는?").steps[0]
    assert (step.op, step.param("alpha")) == ("anova", 0.01)
