"""The API takes every data type intake reads (issue 23), while a .json upload stays the column definitions."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from insightloom.intake.inputs import COLUMNS_FILE_NAME
from insightloom.service.uploads import plan_uploads


def test_parquet_json_lines_and_sqlite_uploads_are_data_and_json_is_the_column_definitions() -> None:
    planned = plan_uploads(["sales.parquet", "events.jsonl", "shop.sqlite", "notes.tsv", "cols.json"])
    assert [(u.name, u.is_columns) for u in planned] == [
        ("sales.parquet", False), ("events.jsonl", False), ("shop.sqlite", False), ("notes.tsv", False),
        (COLUMNS_FILE_NAME, True),
    ]  # fmt: skip


def test_an_unsupported_type_names_the_types_taken() -> None:
    with pytest.raises(HTTPException) as info:
        plan_uploads(["sales.csv", "slides.pptx"])
    assert info.value.status_code == 400 and ".parquet" in str(info.value.detail) and ".jsonl" in str(info.value.detail)
