"""The profile's ``sentinel_values``: codes such as 99999 or -1 found per numeric column, by the claims rule."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pandas as pd

from insightloom.intake.profile import ColumnProfile, profile_column

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "insightloom" / "contracts" / "profile.schema.json"


def _column(values: list, role: str = "measure") -> dict:
    return profile_column("x", pd.Series(values), role, unit=None, description=None).to_dict()


def test_a_repeated_far_out_code_is_recorded_with_its_count() -> None:
    income = [31000, 42000, 28000, 55000, 47000, 39000, 99999999, 99999999, 99999999, 36000]
    assert _column(income)["sentinel_values"] == [{"value": 99999999, "count": 3}]
    ages = [23, 35, 41, 52, -1, 38, -1, 29, 61]
    assert _column(ages)["sentinel_values"] == [{"value": -1, "count": 2}]


def test_ordinary_columns_have_no_sentinel_key() -> None:
    assert "sentinel_values" not in _column([10.5, 12.0, 99.0, 13.5, 11.0])  # one 99 among similar values
    assert "sentinel_values" not in _column(["a", "b", "a"], role="category")
    assert "sentinel_values" not in _column([999, 999, 1, 2, 3, 4], role="pii")  # personal data shows no values


def test_the_profile_schema_accepts_the_key_and_round_trips() -> None:
    column = _column([23, 35, 41, 52, 999, 38, 999, 29, 61])
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(column, {"$defs": schema["$defs"], "$ref": "#/$defs/column"})
    assert ColumnProfile.from_dict(column).to_dict() == column
    bad = {**column, "sentinel_values": [{"value": 999}]}
    try:
        jsonschema.validate(bad, {"$defs": schema["$defs"], "$ref": "#/$defs/column"})
    except jsonschema.ValidationError as exc:
        assert "count" in exc.message
    else:
        raise AssertionError("a sentinel without its count must be refused")
