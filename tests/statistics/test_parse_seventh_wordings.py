"""Wordings from the seventh blind set's wrong answers (issue 21): a filter said as an adjective, a restriction no
filter reads, a column that names the rows' unit, a casual Korean yes/no and a superlative of any adjective. The
table is made up, so no test knows a benchmark answer."""

from __future__ import annotations

from typing import Any

import pytest

from insightloom.ask.answer import FIGURE_ASKED_RE
from insightloom.statistics.parse import MISSING_COLUMN, UNREAD, Refusal, parse_question
from insightloom.statistics.request import Filter, StatRequest

_CAT = {"dtype": "string", "role": "category"}
PROFILE: dict[str, Any] = {"tables": [{"view": "towns", "rows": 120, "columns": [
    {"name": "town", "dtype": "string", "role": "text", "distinct": 120},
    {"name": "location", **_CAT, "distinct": 2,
     "top_values": [{"value": "North", "count": 70}, {"value": "South", "count": 50}]},
    {"name": "region", **_CAT, "distinct": 2,
     "top_values": [{"value": "Asia", "count": 60}, {"value": "Europe", "count": 60}]},
    {"name": "Contour", **_CAT, "distinct": 3,
     "top_values": [{"value": "Slope", "count": 40}, {"value": "Top", "count": 40}, {"value": "Mean", "count": 40}]},
    {"name": "mortality", "dtype": "int64", "role": "measure", "distinct": 110},
    {"name": "hardness", "dtype": "int64", "role": "measure", "distinct": 90},
    {"name": "day", "dtype": "int64", "role": "measure", "distinct": 92},
    {"name": "age", "dtype": "int64", "role": "measure", "distinct": 50},
    {"name": "it", "dtype": "float64", "role": "measure", "distinct": 100},
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        ("mortality std dev, northern towns only, 2 decimals", Filter("location", "=", "North")),
        ("Mean hardness of the southern towns?", Filter("location", "=", "South")),
        ("What is the median mortality of Asian towns?", Filter("region", "=", "Asia")),
        ("Average hardness for European towns, 1 decimal", Filter("region", "=", "Europe")),
    ],
)
def test_a_category_value_said_as_an_adjective_is_its_filter(question: str, wanted: Filter) -> None:
    assert _request(question).filters == (wanted,)


def test_a_restriction_no_filter_reads_is_refused_naming_it() -> None:
    found = parse_question("mortality std dev, coastal towns only, 2 decimals", PROFILE)
    assert isinstance(found, Refusal) and found.kind == UNREAD, found
    assert "only" in found.named[0] and "coastal" in found.reason
    assert _request("mean hardness, only 2 decimals").decimals == 2  # "only" of the rounding restricts no rows


def test_a_column_naming_the_rows_unit_is_no_measure() -> None:
    found = parse_question("max accidents on a single day?", PROFILE)
    assert isinstance(found, Refusal) and found.kind == MISSING_COLUMN and found.named == ("accidents",), found
    assert _request("max day?").steps[0].columns == ("day",)


def test_a_casual_korean_yes_no_asks_a_verdict_and_an_amount_does_not() -> None:
    got = _request("나이(age)와 it 사이의 피어슨 상관계수를 소수 셋째 자리로 구해줘. 양의 상관이야?")
    assert got.form == "verdict" and "positive" in got.steps[0].show
    assert _request("age와 it의 피어슨 상관계수는 뭐야?").form == "value"


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Which town has the hardest water?", True),
        ("Which month was the wettest?", True),
        ("Which player is the best?", True),
        ("What is the interest column?", False),
        ("Which test does the west column hold?", False),
    ],
)
def test_any_superlative_asks_for_a_figure(question: str, asks: bool) -> None:
    assert bool(FIGURE_ASKED_RE.search(question)) is asks


def test_an_operation_word_said_bare_is_no_category_value() -> None:
    regression = _request("regress mortality on hardness: slope, intercept (both 3 dp)")
    assert regression.filters == () and regression.steps[0].op == "regression"
    assert _request("Median mortality where Contour = Slope?").filters == (Filter("Contour", "=", "Slope"),)
    assert _request("What is the mean hardness?").filters == ()
