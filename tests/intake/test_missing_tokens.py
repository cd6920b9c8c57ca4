"""Placeholders such as MISSING, N/A, - or ? are missing in numeric and date columns; a text category keeps them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from intake_helpers import ingest_one, write_xlsx

from insightloom.intake.coerce import coerce_column

TOKENS = ["MISSING", "N/A", "NA", "-", "NULL", "null", "nan", "NaN", "#N/A", "None", "?", "..", "x", "#DIV/0!"]


@pytest.mark.parametrize("token", TOKENS)
def test_token_is_missing_in_a_numeric_column(token: str) -> None:
    result = coerce_column(pd.Series(["1", "2.5", token, "4"], dtype="str"), "x")
    assert result.series.dtype == "float64"
    assert result.series.isna().tolist() == [False, False, True, False]
    assert result.numeric_text is None


def test_all_tokens_in_one_csv_column(tmp_path: Path) -> None:
    body = "".join(f"{i},{v}\n" for i, v in enumerate([*TOKENS, "10", "20", "30"]))
    path = tmp_path / "t.csv"
    path.write_text("row,score\n" + body, encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert frame["score"].dtype == "Int64"
    assert frame["score"].dropna().tolist() == [10, 20, 30]
    assert table.column("score").missing == len(TOKENS)
    assert table.text_numeric_columns == []


def test_token_missing_in_a_date_column() -> None:
    result = coerce_column(pd.Series(["2025-01-01", "MISSING", "2025-01-03", "-"], dtype="str"), "order_date")
    assert pd.api.types.is_datetime64_any_dtype(result.series)
    assert int(result.series.isna().sum()) == 2


def test_category_keeps_placeholder_distinct_from_empty(tmp_path: Path) -> None:
    # "None" (no extras ordered) is an answer; an empty cell is no answer. NA is missing everywhere (R writes it).
    path = tmp_path / "orders.csv"
    path.write_text("extras,qty\nNone,1\ncheese,2\n,3\nNone,4\nNA,5\n-,6\n", encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert frame["extras"].tolist()[:2] == ["None", "cheese"] and frame["extras"].iloc[3] == "None"
    assert pd.isna(frame["extras"].iloc[2])
    assert pd.isna(frame["extras"].iloc[4]) and frame["extras"].iloc[5] == "-"
    assert table.column("extras").role == "category" and table.column("extras").missing == 2
    assert table.text_numeric_columns == []


def test_xlsx_numbers_with_a_missing_placeholder(tmp_path: Path) -> None:
    rows: list[list[object]] = [["region", "sales"], ["a", 10.5], ["b", "MISSING"], ["c", 7], ["d", "#N/A"]]
    table, frame = ingest_one(write_xlsx(tmp_path / "s.xlsx", rows), tmp_path / "job")
    assert frame["sales"].dtype == "float64"
    assert frame["sales"].isna().tolist() == [False, True, False, True]
    assert table.column("sales").role == "measure"
