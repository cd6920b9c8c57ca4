"""Wordings from the ninth blind set's misses (issue 21), on a made-up table so no test knows a benchmark answer:
a category value of several words that holds its column's name ("very happy" of `happy`), two groups named in the
order asked, a one-level filter beside a chi-square test's two variables, a share restating a filter ("30%" for
`vote_share > 0.3`), and a word of a name's gloss before "level"."""

from __future__ import annotations

from typing import Any

from made_up import category as _category
from made_up import parsed

from insightloom.statistics.parse import parse_question
from insightloom.statistics.request import Filter, StatRequest

PROFILE: dict[str, Any] = {"tables": [{"view": "poll", "rows": 300, "columns": [
    _category("mood", "quite mood", "low mood", "good"),
    _category("site", "On site", "Not on site"),
    _category("arm", "A", "B", "C"),
    {"name": "wave", "dtype": "int64", "role": "category", "distinct": 2,
     "top_values": [{"value": 2, "count": 150}, {"value": 1, "count": 150}]},
    {"name": "outcome", "dtype": "int64", "role": "category", "distinct": 2,
     "top_values": [{"value": 0, "count": 160}, {"value": 1, "count": 140}]},
    {"name": "pay", "dtype": "float64", "role": "measure", "distinct": 290},
    {"name": "vote_share", "dtype": "float64", "role": "rate", "distinct": 280},
    {"name": "oleate", "dtype": "float64", "role": "measure", "distinct": 250},
    {"name": "year", "dtype": "int64", "role": "category", "distinct": 3},
]}]}  # fmt: skip


def _request(question: str) -> StatRequest:
    return parsed(question, PROFILE)


def test_a_value_of_several_words_holding_its_column_name_is_the_value() -> None:
    found = _request("How many people in the 2020 survey (year = 2020) were in a low mood (mood = low mood)?")
    assert set(found.filters) == {Filter("year", "=", 2020.0), Filter("mood", "=", "low mood")}
    share = _request("What share of people are in a low mood (mood = low mood)? Percent, 2 dp.")
    assert share.steps[0].op == "share" and share.steps[0].param("where") == (("mood", "=", "low mood"),)


def test_two_groups_are_compared_in_the_order_named() -> None:
    found = _request("Welch t-test of pay between site = On site and site = Not on site: t to 3 dp, significant?")
    assert found.steps[0].op == "ttest" and found.steps[0].param("levels") == ("On site", "Not on site")


def test_a_one_level_filter_beside_a_chi_square_test_filters_the_rows() -> None:
    found = _request("For the second wave (wave = 2), test whether arm and outcome are independent with a chi-square "
                     "test: statistic to 3 dp, and significant at 0.05?")  # fmt: skip
    step = found.steps[0]
    assert step.op == "chi2" and {step.columns[0], step.group} == {"arm", "outcome"}
    assert found.filters == (Filter("wave", "=", 2.0),)


def test_a_share_in_percent_restating_a_filter_is_read() -> None:
    found = _request("In how many rows did the party get more than 30% of the vote (vote_share > 0.3)?")
    assert found.steps[0].op == "count" and found.filters == (Filter("vote_share", ">", 0.3),)
    other = "In how many rows did the party get more than 40% of the vote (vote_share > 0.3)?"
    refused = parse_question(other, PROFILE)
    assert not isinstance(refused, StatRequest)  # 40% is another bound: still unread


def test_a_word_of_the_gloss_before_level_keeps_the_comparison() -> None:
    found = _request("How many samples have an oleate acid level above 0.5?")
    assert found.filters == (Filter("oleate", ">", 0.5),)


def test_a_category_named_in_the_plural_after_across_groups_the_test() -> None:
    found = _request("One-way ANOVA of pay across the survey arms: F statistic to 2 dp. Significant at 5%?")
    assert found.steps[0].op == "anova" and found.steps[0].group == "arm"


def test_a_name_ending_in_ss_takes_es_in_the_plural() -> None:
    profile = {"tables": [{"view": "t", "rows": 50, "columns": [
        _category("class", "x", "y"), {"name": "score", "dtype": "float64", "role": "measure", "distinct": 50},
    ]}]}  # fmt: skip
    found = parse_question("ANOVA of score across the classes: F to 2 dp, significant at 5%?", profile)
    assert isinstance(found, StatRequest) and found.steps[0].group == "class"


def test_a_value_of_several_words_said_bare_filters_nothing() -> None:
    """ "the highest share of low mood people (mean of pay)": said bare, the value may only describe the measure."""
    found = parse_question("Which arm has the highest proportion of low mood people (mean of pay)?", PROFILE)
    assert not (isinstance(found, StatRequest) and any(f.column == "mood" for f in found.filters)), found
