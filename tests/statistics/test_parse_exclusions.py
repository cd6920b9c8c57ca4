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
