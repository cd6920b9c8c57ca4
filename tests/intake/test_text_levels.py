"""Numbers with a few word levels (a score margin ``+3``, ``-2``, ``TIE``) are a measure with named exceptions, and
digit groups split by a tab or a space (``22\\t363``, ``22 363``) are one number when the whole column is written so."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from intake_helpers import ingest_one, write_xlsx

from insightloom.contracts import load_schema
from insightloom.intake import DataProfile
from insightloom.intake.coerce import coerce_column

MARGINS = ["+3", "-2", "TIE", "+10", "0", "-7", "+1", "TIE", "+4", "-5", "+2", "-1"]


def _text(values: list[str]) -> pd.Series:
    return pd.Series(values, dtype="str")


@pytest.mark.parametrize("distinct", [False, True])
def test_a_signed_margin_with_a_tie_level_is_a_number_column(distinct: bool) -> None:
    result = coerce_column(_text(MARGINS), "margin", distinct=distinct)
    assert pd.api.types.is_integer_dtype(result.series)
    assert result.series.tolist()[:5] == [3, -2, pd.NA, 10, 0]
    assert result.text_levels == [("TIE", 2)] and result.numeric_text is None
    assert result.notice is not None and "'TIE' (2 cells)" in result.notice


def test_levels_are_counted_most_first_and_decimals_stay_floats() -> None:
    values = ["+1.5", "EVEN", "-0.25", "n.s.", "EVEN", "2.75", "-3.5", "+4.0", "1.25", "0.5", "-2", "6.5", "7.5"]
    values += ["8", "9.5", "-1", "3", "4", "5", "6"]  # 17 numbers, 3 levels: 85% numbers
    result = coerce_column(_text(values), "spread")
    assert result.series.dtype == "float64" and result.series.isna().sum() == 3
    assert result.text_levels == [("EVEN", 2), ("n.s.", 1)]


@pytest.mark.parametrize(
    "values",
    [
        [str(v) for v in range(1, 40)] + ["red", "blue", "green", "grey"] * 2,  # four distinct words: not a few levels
        [str(v) for v in range(1, 40)] + ["12 (est.)", "<0.5"],  # digits in the odd values: broken numbers
        [str(v) for v in range(1, 40)] + ["about 3"],  # a word with a number in it
    ],
)
def test_numbers_with_other_junk_stay_text_and_are_reported(values: list[str]) -> None:
    result = coerce_column(_text(values), "gdp")
    assert pd.api.types.is_string_dtype(result.series) and not result.text_levels
    assert result.numeric_text is not None


def test_identifier_code_and_label_columns_keep_todays_reading() -> None:
    bags = coerce_column(_text(["1 and 2", "3", "4", "5", "6", "7", "8", "9", "10"] * 4), "bags")
    grades = coerce_column(_text(["3", "4", "DNF", "5", "6", "3", "4", "5", "6", "7"]), "place")  # a label
    sections = coerce_column(_text(["A", "01", "01.1", "01.11", "02", "02.1", "B", "05.10", "05.20", "06.1"]), "nace")
    words = coerce_column(_text(["north", "south", "TIE", "12"]), "side")
    for result in (bags, grades, sections, words):
        assert pd.api.types.is_string_dtype(result.series)
        assert result.numeric_text is None and not result.text_levels


def test_intake_profiles_the_margin_as_a_measure_with_its_level(tmp_path: Path) -> None:
    rows = "".join(f"team{i},{margin}\n" for i, margin in enumerate(MARGINS * 3))
    path = tmp_path / "scores.csv"
    path.write_text("team,margin\n" + rows, encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    col = table.column("margin")
    assert col.dtype == "int64" and col.role == "measure" and col.missing == 6
    assert col.text_levels == [{"value": "TIE", "count": 6}]
    assert table.text_numeric_columns == []
    assert len(table.notices) == 1 and table.notices[0].startswith("margin: ") and "'TIE'" in table.notices[0]
    assert frame["margin"].isna().sum() == 6 and frame["margin"].max() == 10
    profile = DataProfile.load(tmp_path / "job" / "cache" / "profile.json")
    document = profile.to_dict()
    jsonschema.validate(document, load_schema("profile"))
    assert document["tables"][0]["columns"][1]["text_levels"] == [{"value": "TIE", "count": 6}]
    prompt = profile.to_prompt()
    assert '"text_levels":[{"value":"TIE","count":6}]' in prompt and '"notices":["margin: ' in prompt


def test_an_xlsx_margin_of_numbers_and_a_word_is_a_measure(tmp_path: Path) -> None:
    rows: list[list[object]] = [["game", "margin"]]
    rows += [[f"g{i}", "TIE" if i % 7 == 3 else (i % 9) - 4] for i in range(30)]
    table, frame = ingest_one(write_xlsx(tmp_path / "games.xlsx", rows), tmp_path / "job")
    assert table.column("margin").dtype == "int64" and table.column("margin").text_levels == [
        {"value": "TIE", "count": 4}
    ]
    assert frame["margin"].isna().sum() == 4 and table.text_numeric_columns == []


@pytest.mark.parametrize("sep", ["\t", " ", "\u00a0", "\u202f"])
@pytest.mark.parametrize("distinct", [False, True])
def test_digit_groups_split_by_tabs_or_spaces_are_one_number(sep: str, distinct: bool) -> None:
    values = [f"22{sep}363", f"1{sep}204{sep}500", "845", "12", f"-3{sep}000", "1500"]
    result = coerce_column(_text(values), "count", distinct=distinct)
    assert result.series.dtype == "int64"
    assert result.series.tolist() == [22363, 1204500, 845, 12, -3000, 1500]
    assert result.notice is not None and "joined" in result.notice and result.numeric_text is None


def test_digit_groups_with_decimals() -> None:
    assert coerce_column(_text(["1 234.5", "12.25", "10 000"]), "amount").series.tolist() == [1234.5, 12.25, 10000.0]
    euro = coerce_column(_text(["1 234,5", "12,25"]), "amount", decimal_comma=True)
    assert euro.series.tolist() == [1234.5, 12.25]


@pytest.mark.parametrize(
    "values",
    [
        ["12 5", "3 4", "7 1", "8 2", "9 9", "1 1", "2 2", "3 3", "4 4", "5 5"],  # two numbers a cell: never merged
        ["22 363", "12 5", "1 204", "845"] * 3,  # one cell is no grouping
        ["22 363", "15000", "1 204", "845"] * 3,  # a five-digit number unsplit beside split ones
        ["22 3630", "1 204", "845"] * 3,  # a group of four digits
        ["022 363", "1 204"] * 3,  # a group after a leading zero
    ],
)
def test_cells_that_are_not_digit_groups_are_never_merged(values: list[str]) -> None:
    result = coerce_column(_text(values), "count")
    assert pd.api.types.is_string_dtype(result.series)
    assert result.series.tolist() == values and result.notice is None


def test_intake_joins_a_tab_split_count(tmp_path: Path) -> None:
    path = tmp_path / "deaths.csv"
    path.write_text('year,deaths\n2019,"22\t363"\n2020,"23\t101"\n2021,987\n', encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert frame["deaths"].tolist() == [22363, 23101, 987] and table.column("deaths").dtype == "int64"
    assert table.text_numeric_columns == [] and table.notices and "tabs" in table.notices[0]
