"""Names of games, storms and products are not personal data; people's names and contact data still are."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from intake_helpers import ingest_one

from insightloom.intake.roles import classify, people_context, pii_reason


def _csv(tmp_path: Path, header: str, rows: list[str]) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_storm_names_stay_categories(tmp_path: Path) -> None:
    rows = [
        f"{n},{1975 + i % 3},{i % 12 + 1},{30 + i},{990 - i},{i % 5}"
        for i, n in enumerate(["Amy", "Bob", "Doris"] * 10)
    ]
    table, _ = ingest_one(_csv(tmp_path, "name,year,month,wind,pressure,category", rows), tmp_path / "job")
    assert table.column("name").role == "category"
    assert table.column("name").to_dict()["samples"] != ["***"]


def test_game_titles_stay_text(tmp_path: Path) -> None:
    rows = [f"Game {i},PS{i % 4},{2000 + i % 20},Action,{i * 0.37:.2f}" for i in range(60)]
    table, _ = ingest_one(_csv(tmp_path, "Name,Platform,Year,Genre,Global_Sales", rows), tmp_path / "job")
    assert table.column("Name").role == "text"


def test_passenger_names_masked_in_people_context(tmp_path: Path) -> None:
    rows = [f"Person {i},{'male' if i % 2 else 'female'},{20 + i},{7.25 + i}" for i in range(30)]
    table, _ = ingest_one(_csv(tmp_path, "Name,Sex,Age,Fare", rows), tmp_path / "job")
    assert table.column("Name").role == "pii"


@pytest.mark.parametrize("header", ["Customer Name", "first_name", "Last Name", "성명", "고객이름"])
def test_header_naming_a_person_is_pii_anywhere(header: str) -> None:
    assert pii_reason(header, pd.Series(["x"]), people=False) == "name"


def test_contact_data_stays_masked_without_people_context() -> None:
    emails = pd.Series([f"u{i}@example.com" for i in range(10)])
    phones = pd.Series([f"010-1234-{1000 + i}" for i in range(10)])
    assert pii_reason("contact", emails, people=False) == "email values"
    assert pii_reason("reach", phones, people=False) == "phone values"
    assert pii_reason("Phone", pd.Series(["x"]), people=False) == "name"
    assert classify("Employee ID", pd.Series([1, 2, 3]), None, people=False) == "pii"


def test_people_context_from_column_names() -> None:
    assert people_context(["Name", "Sex", "Age", "Fare"])
    assert people_context(["name", "salary_in_usd"])
    assert people_context(["이름", "나이"])
    assert not people_context(["name", "year", "wind", "pressure", "category"])
    assert not people_context(["Name", "Platform", "Genre", "age_rating"])


def test_measures_named_after_births_or_cells_are_not_pii() -> None:
    for name in ("birth rate", "birth_weight", "cell count", "mobile subscriptions"):
        assert pii_reason(name, pd.Series([1.0, 2.0]), people=False) is None, name
    assert pii_reason("Date of Birth", pd.Series(["2000-01-01"]), people=False) == "name"


def test_flags_and_scores_named_after_contact_data_are_not_pii() -> None:
    assert pii_reason("has_email_address", pd.Series([0, 1, 1, 0]), people=True) is None
    assert pii_reason("phone", pd.Series([1.0, 0.43, 0.42]), people=True) is None
    assert pii_reason("phone", pd.Series([1012345678, 1023456789]), people=True) == "name"
