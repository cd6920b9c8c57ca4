"""Issue 23: the same table from Parquet, JSON Lines, JSON, a two-sheet XLSX and SQLite profiles as its CSV does.

Same column names, dtypes, row count and per-column semantics, and the same typed data in the Parquet cache: a new
source adds no typing rules of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from insightloom.intake import DataProfile, TableProfile, ingest
from source_tables import COLUMNS, rows, write_csv, write_json, write_jsonl, write_parquet, write_sqlite, write_xlsx

#: Per-column semantics the planner and the trackers read.
SEMANTICS = ("role", "aggregation", "semantic", "unit", "unit_scale", "positive_value", "calc_id_stem")
#: Each source, how it is written, and the view that holds the table.
SOURCES: dict[str, tuple[Callable[[Path, list[dict[str, object]]], Path], str]] = {
    "x.parquet": (write_parquet, "x"),
    "x.jsonl": (write_jsonl, "x"),
    "x.json": (write_json, "x"),
    "x.xlsx": (write_xlsx, "x_orders"),
    "x.sqlite": (write_sqlite, "orders"),
}


@pytest.fixture(scope="module")
def csv_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[TableProfile, pd.DataFrame]:
    root = tmp_path_factory.mktemp("csv")
    profile = ingest([write_csv(root / "x.csv", rows())], root / "job")
    table = profile.tables[0]
    return table, pd.read_parquet(root / "job" / table.parquet)


def _ingest(name: str, tmp_path: Path) -> tuple[DataProfile, TableProfile, pd.DataFrame]:
    write, view = SOURCES[name]
    profile = ingest([write(tmp_path / name, rows())], tmp_path / "job")
    table = profile.table(view)
    return profile, table, pd.read_parquet(tmp_path / "job" / table.parquet)


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_source_profiles_as_its_csv(name: str, tmp_path: Path, csv_table: tuple[TableProfile, pd.DataFrame]) -> None:
    expected, expected_frame = csv_table
    _, table, frame = _ingest(name, tmp_path)
    assert [c.name for c in table.columns] == list(COLUMNS)
    assert [c.name for c in table.columns] == [c.name for c in expected.columns]
    assert {c.name: c.dtype for c in table.columns} == {c.name: c.dtype for c in expected.columns}
    assert table.rows == expected.rows == len(rows())
    for got, want in zip(table.columns, expected.columns, strict=True):
        assert {k: getattr(got, k) for k in SEMANTICS} == {k: getattr(want, k) for k in SEMANTICS}, got.name
        assert (got.missing, got.distinct) == (want.missing, want.distinct), got.name
    assert table.headline_measures == expected.headline_measures
    assert table.time_axis == expected.time_axis
    assert table.rate_pairs == expected.rate_pairs
    pd.testing.assert_frame_equal(frame, expected_frame)  # the cache every script and check reads


def test_the_mixed_table_types_as_intended(csv_table: tuple[TableProfile, pd.DataFrame]) -> None:
    """The baseline itself: a regression here would make the comparisons above compare the wrong things."""
    dtypes = {c.name: c.dtype for c in csv_table[0].columns}
    assert dtypes == {
        "order_id": "int64",
        "qty": "int64",
        "unit_price": "float64",
        "order_date": "datetime",
        "shipped_at": "datetime",
        "region": "string",
        "comment": "string",
        "customer.city": "string",
    }
    assert csv_table[0].column("region").role == "category"
    assert csv_table[0].column("qty").missing > 0


def test_sqlite_tables_are_views_named_after_them_sorted_by_name(tmp_path: Path) -> None:
    profile, _, _ = _ingest("x.sqlite", tmp_path)
    assert [t.view for t in profile.tables] == ["orders", "regions"]
    assert [t.table for t in profile.tables] == ["orders", "regions"]
    assert {t.file for t in profile.tables} == {"x.sqlite"}
    assert profile.aliases == {"data": "orders"}


def test_table_option_reads_only_the_named_tables_in_the_order_given(tmp_path: Path) -> None:
    db = write_sqlite(tmp_path / "shop.db", rows())
    profile = ingest([db], tmp_path / "job", tables=["REGIONS", "orders"])  # names match as SQLite's do
    assert [t.view for t in profile.tables] == ["regions", "orders"]
    assert profile.aliases == {"data": "regions"}


def test_parquet_struct_and_json_objects_become_dotted_columns(tmp_path: Path) -> None:
    for name in ("x.parquet", "x.jsonl"):
        (tmp_path / name).mkdir()
        _, table, frame = _ingest(name, tmp_path / name)
        assert "customer.city" in frame.columns and "customer" not in frame.columns
        assert table.to_dict().get("table") is None  # only a database table records one


def test_json_records_need_not_share_fields_and_a_field_may_mix_types(tmp_path: Path) -> None:
    """A field missing from a record is missing in its row; numbers and text in one field read as the CSV's text."""
    lines = ['{"team": "a", "margin": 3}', '{"team": "b", "margin": "TIE", "note": "rain"}', '{"team": "c"}']
    path = tmp_path / "games.ndjson"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    csv = tmp_path / "games.csv"
    csv.write_text("team,margin,note\na,3,\nb,TIE,rain\nc,,\n", encoding="utf-8")
    got = ingest([path], tmp_path / "j1").tables[0]
    want = ingest([csv], tmp_path / "j2").tables[0]
    assert [c.to_dict() for c in got.columns] == [c.to_dict() for c in want.columns]
    frame = pd.read_parquet(tmp_path / "j1" / got.parquet)
    assert frame["note"].isna().tolist() == [True, False, True]


def test_parquet_floats_stay_floats_when_every_value_is_whole(tmp_path: Path) -> None:
    """Parquet says float: 2.0 is written ``2.0``, as pandas writes it to CSV, so the column is not made int."""
    path = tmp_path / "w.parquet"
    pd.DataFrame({"weight": [1.0, 2.0, 3.0], "n": [1, 2, 3]}).to_parquet(path)
    table = ingest([path], tmp_path / "job").tables[0]
    assert {c.name: c.dtype for c in table.columns} == {"weight": "float64", "n": "int64"}


def test_a_pandas_index_stored_in_parquet_is_no_column(tmp_path: Path) -> None:
    """pandas writes an unnamed index that is not a range as ``__index_level_0__``: the frame's index, not data."""
    path = tmp_path / "filtered.parquet"
    pd.DataFrame({"n": [5, 6, 7]}, index=[10, 20, 30]).to_parquet(path)
    assert [c.name for c in ingest([path], tmp_path / "job").tables[0].columns] == ["n"]
