"""The abstention names what the data lack, never the question's own words."""

from __future__ import annotations

from insightloom.ask.missing import key_terms, missing_data
from insightloom.ask.prompt import ABSTAIN, NOT_HELD, abstention_sentence

PROFILE = {
    "tables": [
        {
            "view": "stocks",
            "file": "microsoft.csv",
            "columns": [
                {"name": "Date", "role": "date", "dtype": "datetime", "min": "2024-01-02", "max": "2024-12-31"},
                {"name": "Volume", "role": "measure", "description": "Shares traded that day"},
                {"name": "Region", "role": "category", "top_values": [{"value": "West", "count": 3}]},
                {"name": "Gender", "role": "category", "description": "성별 (F, M)"},
                {"name": "Damage2014", "role": "measure", "description": "Damage in 2014 dollars"},
            ],
        }
    ],
    "aliases": {"data": "stocks"},
}


def test_a_question_about_columns_the_data_hold_names_those_columns_not_its_words() -> None:
    question = "Calculate the mean and standard deviation of the Volume column, rounded to 2 decimals."
    missing = missing_data(question, PROFILE)
    assert missing.data_present and missing.columns == ("Volume",)
    sentence = abstention_sentence(question, profile=PROFILE)
    assert sentence == NOT_HELD["en"].format(columns="`Volume`")
    assert "calculate" not in sentence.lower() and "deviation" not in sentence.lower()


def test_a_column_the_data_lack_is_named_and_the_ones_it_has_are_not() -> None:
    sentence = abstention_sentence("What was the profit in the West region?", profile=PROFILE)
    assert sentence == ABSTAIN["en"].format(needed="profit")


def test_a_year_outside_the_data_is_named_with_the_dates_covered() -> None:
    sentence = abstention_sentence("What was the total Volume in 2019?", profile=PROFILE)
    assert sentence == ABSTAIN["en"].format(needed="2019 (the data cover 2024-01-02 to 2024-12-31)")
    inside = missing_data("What was the total Volume in 2024?", PROFILE)
    assert inside.periods == () and inside.data_present


def test_korean_particles_and_descriptions() -> None:
    assert key_terms("Profit은 얼마입니까?") == ["profit"]  # the particle goes, the question word too
    assert key_terms("성별 매출은?") == ["성별", "매출"]  # a one-syllable stem keeps its "particle": 성별 is a word
    missing = missing_data("성별 Volume 합계는?", PROFILE)  # 성별 is in Gender's description
    assert missing.data_present and set(missing.columns) == {"Volume", "Gender"}
    sentence = abstention_sentence("Profit은 얼마입니까?", profile=PROFILE)
    assert sentence == ABSTAIN["ko"].format(needed="profit")


def test_without_a_profile_the_key_words_are_named() -> None:
    assert abstention_sentence("What was the weather on Mars?") == ABSTAIN["en"].format(needed="weather, mars")


def test_a_year_inside_a_column_name_is_no_period() -> None:
    assert missing_data("What is the median damage in 2014 dollars?", PROFILE).periods == ()
    assert missing_data("2014년 달러 기준 피해액의 중앙값은?", PROFILE).periods == ()
    korean = abstention_sentence("2019년 Volume 합계는?", profile=PROFILE)
    assert korean.count("2019") == 1  # named once, as the period
