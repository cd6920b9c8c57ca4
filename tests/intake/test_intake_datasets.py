"""Intake on every test dataset: roles, units, Parquet that DuckDB reads like pandas, no PII in the profile."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from insightloom.intake import DataProfile, ingest, resolve_inputs

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+\.[A-Za-z]{2,}")
PHONE = re.compile(r"\+?\d{1,3}-\d{3}-\d{3}-\d{4}")


def _run(folder: Path, job: Path) -> DataProfile:
    files, columns = resolve_inputs([folder], None)
    return ingest(files, job, columns_file=columns)


@pytest.fixture(scope="module")
def jobs(datasets: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[DataProfile, Path]]:
    out = {}
    for name in ("moon-market-en", "moon-market-kr", "yummy-food", "training-assessment"):
        job = tmp_path_factory.mktemp(name)
        out[name] = (_run(datasets / name, job), job)
    return out


def _roles(profile: DataProfile) -> dict[str, str]:
    return {c.name: c.role for c in profile.tables[0].columns}


@pytest.mark.parametrize("name", ["moon-market-en", "moon-market-kr"])
def test_moon_market_roles_units(jobs: dict, name: str) -> None:
    profile, job = jobs[name]
    table = profile.table("data")
    assert table.view == "moon_market_fresh_food_sales" and table.rows == 836
    amount = table.column("Amount")
    assert (amount.role, amount.unit, amount.dtype) == ("measure", "KRW", "int64")
    assert table.column("ship-postal-code").role == "identifier"
    date = table.column("Date")
    assert date.role == "date" and date.dtype == "datetime"
    assert date.min == "2025-05-01"  # "5/1/25" is M/D/YY
    assert table.column("Qty").role == "measure"
    assert table.column("Category").role == "category"
    assert table.column("Amount").description.startswith("Total order amount" if name.endswith("en") else "주문의")
    assert (job / "data" / "moon-market-fresh-food-sales.csv").is_file()
    assert (job / "data" / "column_definitions.json").is_file()


def test_language(jobs: dict) -> None:
    langs = {name: profile.language for name, (profile, _) in jobs.items()}
    assert langs == {"moon-market-en": "en", "moon-market-kr": "ko", "yummy-food": "ko", "training-assessment": "en"}


def test_yummy_food_roles(jobs: dict) -> None:
    profile, _ = jobs["yummy-food"]
    roles = _roles(profile)
    assert roles["CTR"] == roles["ROAS"] == roles["전환율"] == "rate"
    assert roles["날짜"] == "date"
    assert roles["광고비용"] == roles["매출액"] == roles["노출수"] == "measure"
    assert roles["매체"] == "category"
    table = profile.tables[0]
    assert table.column("CTR").unit == "%"
    assert table.column("ROAS").unit is None  # a ratio, printed bare


@pytest.mark.parametrize(
    ("name", "view", "column"),
    [
        ("moon-market-en", "moon_market_fresh_food_sales", "Amount"),
        ("yummy-food", "yummy_food_market", "광고비용"),
        ("training-assessment", "training_assessment_sheet1", "Overall Results / Total Score"),
    ],
)
def test_duckdb_reads_parquet_like_pandas(jobs: dict, name: str, view: str, column: str) -> None:
    profile, job = jobs[name]
    parquet = job / profile.table(view).parquet
    frame = pd.read_parquet(parquet)
    sql = f"SELECT count(*), sum(\"{column}\") FROM read_parquet('{parquet}')"
    rows, total = duckdb.connect().execute(sql).fetchone()
    assert rows == len(frame) == profile.table(view).rows
    assert total == int(frame[column].sum())
    assert pd.api.types.is_integer_dtype(frame[column])


def test_dates_are_timestamps_in_parquet(jobs: dict) -> None:
    profile, job = jobs["yummy-food"]
    parquet = job / profile.tables[0].parquet
    kinds = dict(duckdb.sql(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{parquet}')").fetchall())
    assert kinds["날짜"] == "TIMESTAMP"
    assert kinds["CTR"] == "DOUBLE"
    assert kinds["매체"] == "VARCHAR"


def test_xlsx_flattens_grouped_header(jobs: dict) -> None:
    profile, _ = jobs["training-assessment"]
    sheet_view = "training_assessment_sheet1"
    assert profile.aliases == {"training_assessment": sheet_view, "data": sheet_view}
    table = profile.table("training_assessment")
    names = [c.name for c in table.columns]
    assert table.rows == 50 and len(names) == 111
    assert len({n.lower() for n in names}) == len(names)
    assert "Trainee Information / Full Name" in names
    assert "Core Skill Grades & Scores / Problem Solving / Score" in names
    assert "Assessment Validity / Integrity Check" in names  # the empty field header keeps its group path
    assert not any(n.startswith("column_") for n in names)
    assert table.column("Trainee Information / Hire Date").role == "date"


def test_xlsx_pii_masked_everywhere(jobs: dict) -> None:
    profile, job = jobs["training-assessment"]
    table = profile.tables[0]
    for field in ("Full Name", "Email", "Phone", "Employee ID", "Trainee ID"):
        col = table.column(f"Trainee Information / {field}")
        assert col.role == "pii", field
        as_dict = col.to_dict()
        assert as_dict["samples"] == ["***"]
        assert not {"min", "max", "mean", "top_values"} & as_dict.keys()
    stored = (job / "cache" / "profile.json").read_text(encoding="utf-8")
    prompt = profile.to_prompt()
    for text in (stored, prompt):
        assert not EMAIL.search(text)
        assert not PHONE.search(text)
        assert "William Davis" not in text and "EMP39256" not in text
    # PII stays in the Parquet (the analysis simply never uses it)
    frame = pd.read_parquet(job / table.parquet)
    assert frame["Trainee Information / Email"].iloc[0] == "trainee1@company.com"


def test_profile_json_round_trips(jobs: dict) -> None:
    for profile, job in jobs.values():
        stored = json.loads((job / "cache" / "profile.json").read_text(encoding="utf-8"))
        assert stored == profile.to_dict()
        assert DataProfile.from_dict(stored).to_dict() == stored
        assert DataProfile.load(job / "cache" / "profile.json").first_view == profile.first_view


def test_prompt_is_compact(jobs: dict) -> None:
    profile, _ = jobs["moon-market-en"]
    prompt = profile.to_prompt()
    assert prompt.startswith("<data_profile>") and prompt.rstrip().endswith("</data_profile>")
    body = json.loads(prompt.split("\n", 1)[1].rsplit("\n", 1)[0])
    amount = next(c for c in body["tables"][0]["columns"] if c["name"] == "Amount")
    assert amount["unit"] == "KRW"
    assert len(str(amount["mean"]).replace(".", "").strip("0")) <= 4  # 4 significant digits
    assert all(len(c.get("samples", [])) <= 5 for c in body["tables"][0]["columns"])
    assert len(prompt) < 6000
    wide, _ = jobs["training-assessment"]
    assert len(wide.to_prompt()) < 25000
