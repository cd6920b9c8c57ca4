"""View naming: the rule DuckDB checks and load_df rely on."""

from __future__ import annotations

from pathlib import Path

import openpyxl

from insightloom.intake import ingest, view_name


def test_lowercases_and_replaces_non_alnum() -> None:
    assert view_name("Moon-Market Sales.2025", set()) == "moon_market_sales_2025"


def test_leading_digit_gets_prefix() -> None:
    assert view_name("2025_sales", set()) == "t_2025_sales"


def test_korean_stem_becomes_underscores() -> None:
    assert view_name("매출", set()) == "__"
    assert view_name("매출_2025", set()) == "___2025"


def test_collisions_get_numbered_suffixes() -> None:
    taken = {"sales", "sales_2"}
    assert view_name("Sales", taken) == "sales_3"
    assert view_name("other", taken) == "other"


def test_view_name_does_not_mutate_taken() -> None:
    taken = {"a"}
    view_name("a", taken)
    assert taken == {"a"}


def _xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets.items():
        ws = wb.create_sheet(title)
        for row in rows:
            ws.append(row)
    wb.save(path)
    return path


def test_xlsx_sheets_views_and_stem_alias(tmp_path: Path) -> None:
    rows = [["region", "sales"], ["a", 1], ["b", 2]]
    book = _xlsx(tmp_path / "Q1 Report.xlsx", {"North": rows, "South Side": rows})
    profile = ingest([book], tmp_path / "job")
    assert [t.view for t in profile.tables] == ["q1_report_north", "q1_report_south_side"]
    assert profile.aliases == {"q1_report": "q1_report_north", "data": "q1_report_north"}
    assert profile.table("q1_report").sheet == "North"
    assert (tmp_path / "job" / "cache" / "q1_report_north.parquet").is_file()
    assert not (tmp_path / "job" / "cache" / "q1_report.parquet").exists()  # alias shares the sheet's parquet


def test_same_stem_inputs_collide_and_data_alias_is_first(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = tmp_path / "a" / "sales.csv"
    second = tmp_path / "b" / "sales.csv"
    third = tmp_path / "data.csv"
    for p in (first, second, third):
        p.write_text("k,v\nx,1\ny,2\n")
    profile = ingest([first, second, third], tmp_path / "job")
    assert [t.view for t in profile.tables] == ["sales", "sales_2", "data_2"]
    assert profile.aliases["data"] == "sales"
    assert profile.first_view == "sales"
    # both copies are kept under distinct names in data/
    assert sorted(p.name for p in (tmp_path / "job" / "data").iterdir()) == ["data.csv", "sales.csv", "sales_2.csv"]
    assert [t.file for t in profile.tables] == ["sales.csv", "sales_2.csv", "data.csv"]
