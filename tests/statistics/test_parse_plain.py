"""Questions asked the way a new user asks them, with no statistics word: a row count, a measure asked plainly, a
group named beside the extreme word, 총 as a total (issue 21's follow-up on moon-market, yummy-food, training)."""

from __future__ import annotations

from typing import Any

from insightloom.statistics.parse import parse_question
from insightloom.statistics.request import Filter, StatRequest, Step
from insightloom.statistics.wording import describe_request

PROFILE: dict[str, Any] = {"tables": [{"view": "trainee_sales", "file": "sales.csv", "rows": 840, "columns": [
    {"name": "Trainee ID", "dtype": "string", "role": "pii", "distinct": 840},
    {"name": "Trainee Department", "dtype": "string", "role": "category", "distinct": 3,
     "top_values": [{"value": "Support", "count": 300}, {"value": "Sales", "count": 540}]},
    {"name": "Gender", "dtype": "string", "role": "category", "distinct": 2,
     "top_values": [{"value": "F", "count": 440}, {"value": "M", "count": 400}]},
    {"name": "매체", "dtype": "string", "role": "category", "distinct": 4,
     "top_values": [{"value": "쿠빵", "count": 300}, {"value": "네이버", "count": 200}]},
    {"name": "Amount", "dtype": "int64", "role": "measure", "distinct": 700, "aggregation": "sum"},
    {"name": "광고비용", "dtype": "int64", "role": "measure", "distinct": 700, "aggregation": "sum"},
    {"name": "Score", "dtype": "float64", "role": "measure", "distinct": 90, "aggregation": "mean"},
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    found = parse_question(question, PROFILE)
    assert isinstance(found, StatRequest), found
    return found


def test_how_many_rows_and_how_many_of_the_tables_entity_count_the_rows() -> None:
    for question in ("How many rows are there?", "How many records does the table have?",
                     "How many trainees are there?", "데이터는 몇 행인가요?"):  # fmt: skip
        assert _request(question).steps == (Step("count", ()),), question
    filtered = _request("How many rows have Gender F?")
    assert filtered.steps == (Step("count", ()),) and filtered.filters == (Filter("Gender", "=", "F"),)
    assert describe_request(filtered) == "count of rows where `Gender` = 'F'"


def test_a_count_of_something_the_table_does_not_hold_or_with_an_unread_condition_is_no_row_count() -> None:
    assert parse_question("How many patients are there?", PROFILE) is None
    assert parse_question("How many trainees passed?", PROFILE) is None


def test_an_additive_measure_asked_plainly_is_its_total_and_another_measure_is_left_to_the_report() -> None:
    for question in ("Amount는 얼마?", "How much is Amount?", "What is the Amount?"):
        assert _request(question).steps == (Step("sum", ("Amount",)),), question
    for question in ("What is the Amount for Gender F?", "Gender가 F인 Amount는 얼마인가요?"):
        found = _request(question)
        assert found.steps == (Step("sum", ("Amount",)),) and found.filters == (Filter("Gender", "=", "F"),), question
    assert parse_question("What is the Score?", PROFILE) is None  # an average score is no total: not guessed


def test_total_written_as_chong_is_a_sum_unless_it_counts() -> None:
    assert _request("총 Amount는 얼마입니까?").steps == (Step("sum", ("Amount",)),)
    assert all(s.op != "sum" for s in _request("Gender가 F인 행은 총 몇 개?").steps)


def test_a_group_named_beside_the_extreme_word_asks_for_the_groups_name() -> None:
    for question, group, measure in (
        ("매체별 광고비용 합계가 가장 큰 매체는?", "매체", "광고비용"),
        ("Find the Trainee Department with the highest total Amount.", "Trainee Department", "Amount"),
    ):
        found = _request(question)
        step = found.steps[0]
        assert found.form == "name" and step.op == "group_max", question
        assert step.group == group and step.columns == (measure,) and step.param("agg") == "sum", question
    # the extreme word next to a measure names no group: the value is asked
    assert _request("What is the highest value of Amount?").form == "value"
