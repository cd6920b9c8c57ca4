"""Long decimals and E-notation are numbers; only integer-looking text may stay text as an identifier."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
from intake_helpers import ingest_one

from insightloom.intake.coerce import coerce_column, numeric_text_reason


def _text(values: list[str]) -> pd.Series:
    return pd.Series(values, dtype="str")


def test_long_decimals_are_floats() -> None:
    result = coerce_column(_text(["9.026365225783264123", "1.5", "-0.000000000000000012345"]), "x")
    assert result.series.dtype == "float64"
    assert result.series.iloc[0] == 9.026365225783264


def test_e_notation_is_float() -> None:
    result = coerce_column(_text(["-2.887479204014895E+08", "1e-5", "3.2E3", "7"]), "x")
    assert result.series.dtype == "float64"
    assert result.series.tolist() == [-288747920.4014895, 1e-05, 3200.0, 7.0]


def test_long_integer_strings_and_leading_zeros_stay_identifiers() -> None:
    card = coerce_column(_text(["1234567890123456", "6543210987654321"]), "card")
    zips = coerce_column(_text(["08053", "10001"]), "zip")
    assert pd.api.types.is_string_dtype(card.series) and pd.api.types.is_string_dtype(zips.series)
    assert card.numeric_text is None and zips.numeric_text is None  # kept as text on purpose, not a problem


def test_mostly_numeric_text_column_is_reported() -> None:
    values = [str(i * 1.5) for i in range(18)] + ["12 (est.)", "<0.5"]
    result = coerce_column(_text(values), "gdp")
    assert pd.api.types.is_string_dtype(result.series)
    assert result.numeric_text is not None and "2 of 20" in result.numeric_text and "'12 (est.)'" in result.numeric_text


def test_plain_text_is_not_numeric_looking() -> None:
    assert numeric_text_reason(_text(["north", "south", "12"])) is None
    assert coerce_column(_text(["red", "blue", "red"]), "colour").numeric_text is None


def test_intake_types_long_numbers_and_lists_text_numeric(tmp_path: Path) -> None:
    rows = "".join(f"{i}.0263652257832641{i},-2.8{i}7479204014895E+08,0{i}12,{i}.5\n" for i in range(1, 9))
    path = tmp_path / "sensors.csv"
    path.write_text("reading,offset,zip,mixed\n" + rows + "9.1,1e-5,0999,about 3\n", encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert frame["reading"].dtype == "float64" and frame["offset"].dtype == "float64"
    assert table.column("reading").role == "measure" and table.column("offset").role == "measure"
    assert frame["zip"].tolist()[0] == "0112"
    assert table.text_numeric_columns == ["mixed"]  # the zip column is an identifier, not a parsing problem
    parquet = tmp_path / "job" / table.parquet
    kinds = dict(duckdb.sql(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{parquet}')").fetchall())
    assert kinds["reading"] == "DOUBLE" and kinds["offset"] == "DOUBLE"


def test_digit_codes_are_not_numeric_looking() -> None:
    nace = _text(["A", "01", "01.1", "01.11", "02", "02.1", "B", "05.10", "05.20", "06.1"])
    subjects = _text(["100", "100", "101", "102", "100a", "103", "104", "105", "106", "107"])
    assert numeric_text_reason(nace) is None and numeric_text_reason(subjects) is None


def test_a_few_labels_with_one_spelled_out_are_a_category_not_lost_numbers() -> None:
    bags = _text(["1 and 2", "3", "4", "5", "6", "7", "8", "9", "10"] * 4)
    assert numeric_text_reason(bags) is None
    gdp = _text([str(v) for v in range(1, 40)] + ["n.a. (est.)"])  # many values: numbers with junk in them
    assert numeric_text_reason(gdp) is not None
