"""A title row above the header is skipped, for CSV and XLSX, and the profile counts it."""

from __future__ import annotations

from pathlib import Path

import pytest
from intake_helpers import ingest_one, write_xlsx

from insightloom.intake.readers import sniff_delimiter, split_title_rows

_BODY = "region,units,revenue\nNorth,10,100.5\nSouth,20,200.25\nEast,30,300\n"


@pytest.mark.parametrize(
    "title",
    [
        '"Table 1: Sales by region, 2019"\n',  # one quoted cell
        "Table 1: Sales by region, 2019\n",  # split by the delimiter into a row shorter than the header
        "Table 1: Sales by region 2019,,\n",  # padded to the header's width
        "Sales by region\n\nSource: internal ledger,,\n",  # two title rows and a blank line
    ],
)
def test_csv_title_rows_skipped(tmp_path: Path, title: str) -> None:
    path = tmp_path / "sales.csv"
    path.write_text(title + _BODY, encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert list(frame.columns) == ["region", "units", "revenue"]
    assert frame["units"].tolist() == [10, 20, 30]
    assert table.title_rows_skipped == title.count("\n") - title.count("\n\n")
    assert table.column("revenue").role == "measure"


def test_tab_file_with_title_sniffs_tab() -> None:
    assert sniff_delimiter("Table 1: Sales\na\tb\tc\n1\t2\t3\n4\t5\t6\n") == "\t"


def test_plain_csv_has_no_title(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(_BODY, encoding="utf-8")
    table, frame = ingest_one(path, tmp_path / "job")
    assert table.title_rows_skipped == 0 and len(frame) == 3


def test_wide_year_header_after_title() -> None:
    rows: list[list[object]] = [
        ["Percent of degrees awarded to women", None, None],
        ["field", "1970", "1971"],
        ["Biology", "29.1", "29.9"],
        ["Physics", "4.3", "5.1"],
    ]
    assert split_title_rows(rows) == (1, ["Percent of degrees awarded to women"])


def test_header_with_one_name_above_data_is_not_a_title() -> None:
    rows: list[list[object]] = [["name", None, None], ["Alice", "30", "NY"], ["Bob", "41", "NY"]]
    assert split_title_rows(rows) == (0, [])


def test_xlsx_title_row_skipped(tmp_path: Path) -> None:
    rows: list[list[object]] = [
        ["Quarterly sales report", None, None],
        ["Region", "Units", "Revenue"],
        ["North", 10, 100.5],
        ["South", 20, 200.25],
    ]
    table, frame = ingest_one(write_xlsx(tmp_path / "r.xlsx", rows), tmp_path / "job")
    assert list(frame.columns) == ["Region", "Units", "Revenue"]
    assert frame["Units"].tolist() == [10, 20]
    assert table.title_rows_skipped == 1


def test_xlsx_grouped_header_is_not_a_title(tmp_path: Path) -> None:
    rows: list[list[object]] = [
        ["Info", None, "Scores", None],
        ["Team", "Size", "Math", "Art"],
        ["a", 3, 90, 70],
        ["b", 4, 80, 60],
    ]
    table, frame = ingest_one(write_xlsx(tmp_path / "g.xlsx", rows), tmp_path / "job")
    assert list(frame.columns) == ["Info / Team", "Info / Size", "Scores / Math", "Scores / Art"]
    assert table.title_rows_skipped == 0
