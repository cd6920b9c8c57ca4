"""Rows kept or left out in words: a two-syllable Korean value said bare ("서울만의"), a value excluded ("excluding
Seoul", "서울을 제외한") and an exclusion of something no column holds, which refuses instead of being dropped."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.statistics.parse import UNREAD, Refusal, parse_question
from insightloom.statistics.request import Filter, StatRequest

_CAT = {"dtype": "string", "role": "category", "distinct": 2}
PROFILE: dict[str, Any] = {"tables": [{"view": "shops", "rows": 100, "columns": [
    {"name": "region", **_CAT, "top_values": [{"value": "서울", "count": 50}, {"value": "부산", "count": 50}]},
    {"name": "sex", **_CAT, "top_values": [{"value": "Male", "count": 50}, {"value": "Female", "count": 50}]},
    {"name": "sales", "dtype": "int64", "role": "measure", "distinct": 90},
]}]}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("서울만의 sales 평균은?", Filter("region", "=", "서울")),
        ("서울 지역만 놓고 보면 sales 평균은?", Filter("region", "=", "서울")),
        ("부산에서의 sales 합계는?", Filter("region", "=", "부산")),
        ("서울을 제외한 sales 평균은?", Filter("region", "!=", "서울")),
        ("부산 빼고 sales 평균은?", Filter("region", "!=", "부산")),
        ("mean sales excluding 서울", Filter("region", "!=", "서울")),
        ("Mean sales except for the Female customers", Filter("sex", "!=", "Female")),
        ("Average sales of the Male customers", Filter("sex", "=", "Male")),
    ],
)
def test_a_value_kept_or_left_out_in_words_is_its_filter(question: str, wanted: Filter) -> None:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest) and found.filters == (wanted,), found


@pytest.mark.parametrize("question", ["mean sales, excluding returns", "mean sales for Female, excluding returns"])
def test_an_exclusion_no_column_holds_refuses_naming_it(question: str) -> None:
    found = parse_question(question, PROFILE)
    assert isinstance(found, Refusal) and found.kind == UNREAD and "excluding returns" in found.named[0], found


_CARS: dict[str, Any] = {"tables": [{"view": "cars", "rows": 100, "columns": [
    {"name": "mpg", "dtype": "float64", "role": "measure", "distinct": 90, "aggregation": "mean"},
    {"name": "Total", "dtype": "int64", "role": "measure", "distinct": 90, "aggregation": "sum"},
    {"name": "year", "dtype": "int64", "role": "category", "distinct": 12, "aggregation": "none", "semantic": "year"},
]}]}  # fmt: skip


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What is the average mpg per year?", "year"),
        ("How many cars have mpg above the mean?", "above the mean"),
        ("How many cars have above-average mpg?", "above-average"),
        ("mpg가 평균보다 높은 차는 몇 대?", "평균보다"),
        ("mpg 평균 (일본 차만)", "만"),
    ],
)
def test_a_breakdown_a_statistic_threshold_or_a_korean_only_is_never_dropped(question: str, named: str) -> None:
    found = parse_question(question, _CARS)
    assert isinstance(found, Refusal) and named in found.named[0], found


def test_a_unit_after_per_and_a_rounding_only_still_read() -> None:
    slope = parse_question("Fit a straight line of Total on year. What is the slope per year (3 decimals)?", _CARS)
    assert isinstance(slope, StatRequest) and slope.steps[0].op == "regression", slope
    rounded = parse_question("mpg 평균을 소수 둘째 자리까지만 구하시오", _CARS)
    assert isinstance(rounded, StatRequest) and rounded.decimals == 2, rounded
