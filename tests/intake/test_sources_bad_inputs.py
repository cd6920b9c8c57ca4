"""Issue 23: new sources that cannot be read are exit 2 with one line naming the file (and table) and the fix."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from insightloom.errors import BadInputError
from insightloom.intake import ingest, resolve_inputs
from insightloom.intake.columnar import MAX_NESTING
from insightloom.intake.inputs import check_extension
from source_tables import rows, write_csv, write_sqlite


def _refused(paths: list[Path], tmp_path: Path, **kwargs: object) -> BadInputError:
    with pytest.raises(BadInputError) as info:
        ingest(paths, tmp_path / "job", **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert err.exit_code == 2 and err.fix and "\n" not in str(err)
    return err


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _execute(db: Path, *statements: str) -> Path:
    con = sqlite3.connect(db)
    try:
        for sql in statements:
            con.execute(sql)
        con.commit()
    finally:
        con.close()
    return db


@pytest.mark.parametrize("name", ["deep.jsonl", "deep.json"])
def test_json_nested_past_the_documented_depth_names_the_file_field_depth_and_fix(name: str, tmp_path: Path) -> None:
    records = [{"id": 1, "customer": {"city": "Seoul"}}, {"id": 2, "customer": {"address": {"city": "Busan"}}}]
    text = "\n".join(json.dumps(r) for r in records) if name.endswith("l") else json.dumps(records)
    err = _refused([_write(tmp_path / name, text)], tmp_path)
    assert name in err.message and "record 2" in err.message and "'customer.address'" in err.message
    assert f"depth {MAX_NESTING + 1}" in err.message and f"at most {MAX_NESTING} levels" in err.message
    assert "flatten" in err.fix


def test_a_list_in_a_json_record_is_refused_naming_the_field(tmp_path: Path) -> None:
    err = _refused([_write(tmp_path / "tags.jsonl", '{"id": 1, "tags": ["a", "b"]}\n')], tmp_path)
    assert "record 1" in err.message and "'tags'" in err.message and "a list" in err.message


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"id": 1, "region": "North"}', "the top level is an object, not an array of records"),
        ("[1, 2, 3]", "record 1 is a number, not an object"),
        ('[{"id": 1}, "oops"]', "record 2 is a string, not an object"),
        ('[{"id": 1},', "invalid JSON at line 1"),
        ("[]", "has no records"),
    ],
)
def test_json_that_is_not_an_array_of_objects_is_refused(text: str, needle: str, tmp_path: Path) -> None:
    err = _refused([_write(tmp_path / "bad.json", text)], tmp_path)
    assert "bad.json" in err.message and needle in err.message
    assert "array of records" in err.fix or "export" in err.fix.lower()


def test_json_lines_saved_as_json_says_to_rename_it(tmp_path: Path) -> None:
    err = _refused([_write(tmp_path / "lines.json", '{"a": 1}\n{"a": 2}\n')], tmp_path)
    assert ".jsonl" in err.fix


def test_a_json_lines_line_that_is_no_object_names_the_line(tmp_path: Path) -> None:
    err = _refused([_write(tmp_path / "x.jsonl", '{"a": 1}\n\n[1, 2]\n')], tmp_path)
    assert "line 3 is an array, not an object" in err.message


def test_a_database_without_tables_is_refused(tmp_path: Path) -> None:
    path = _execute(tmp_path / "empty.sqlite", "CREATE TABLE t (a)", "DROP TABLE t")  # a database, no table
    assert path.stat().st_size > 0
    err = _refused([path], tmp_path)
    assert "empty.sqlite" in err.message and "has no tables" in err.message


def test_an_empty_sqlite_file_is_refused_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    path.touch()
    assert "empty (0 bytes)" in _refused([path], tmp_path).message


def test_an_unknown_table_names_it_and_the_tables_there_are(tmp_path: Path) -> None:
    db = write_sqlite(tmp_path / "shop.sqlite", rows())
    err = _refused([db], tmp_path, tables=["orders", "custmers"])
    assert "shop.sqlite" in err.message and "'custmers'" in err.message
    assert "its tables: orders, regions" in err.message and "--table" in err.fix


def test_table_without_a_database_input_is_refused(tmp_path: Path) -> None:
    err = _refused([write_csv(tmp_path / "x.csv", rows())], tmp_path, tables=["orders"])
    assert "--table orders" in err.message and "SQLite" in err.message


def test_a_named_table_with_no_rows_is_refused_and_an_unnamed_one_skipped(tmp_path: Path) -> None:
    db = _execute(write_sqlite(tmp_path / "shop.sqlite", rows()), "CREATE TABLE later (a INTEGER)")
    assert "table 'later' has no rows" in _refused([db], tmp_path, tables=["later"]).message
    assert [t.view for t in ingest([db], tmp_path / "all").tables] == ["orders", "regions"]


def test_views_and_the_schema_are_not_read_as_tables(tmp_path: Path) -> None:
    """A view's query could cost anything (a recursive one never ends): only ordinary tables are read."""
    forever = "CREATE VIEW forever AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
    db = _execute(write_sqlite(tmp_path / "shop.sqlite", rows()), forever)
    assert [t.view for t in ingest([db], tmp_path / "job").tables] == ["orders", "regions"]
    assert "'forever'" in _refused([db], tmp_path, tables=["forever"]).message


def test_a_database_name_with_uri_characters_opens_that_file(tmp_path: Path) -> None:
    """The read-only URI is percent-encoded: '?' and '#' in a file name are no URI parameters."""
    db = write_sqlite(tmp_path / "q?mode=rwc#x.sqlite", rows())
    assert [t.view for t in ingest([db], tmp_path / "job").tables] == ["orders", "regions"]


def test_a_file_without_the_format_signature_is_refused(tmp_path: Path) -> None:
    thumbs = _write(tmp_path / "Thumbs.db", "not a database")
    assert "not a SQLite database" in _refused([thumbs], tmp_path).message
    parquet = _write(tmp_path / "x.parquet", "region,sales\nnorth,1\n")
    assert "not a Parquet file" in _refused([parquet], tmp_path).message


def test_parquet_that_expands_past_the_size_cap_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    """One long value repeated: a small dictionary-encoded file that is many megabytes as text."""
    path = tmp_path / "bomb.parquet"
    pq.write_table(pa.table({"note": ["x" * 100_000] * 200}), path, compression="zstd")
    assert path.stat().st_size < 1024 * 1024
    err = _refused([path], tmp_path, max_file_mb=5)
    assert "bomb.parquet" in err.message and "max_file_mb limit of 5 MB" in err.message and "as CSV text" in err.message


def test_parquet_lists_and_deep_structs_are_refused_naming_the_column(tmp_path: Path) -> None:
    lists = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"id": [1], "tags": [["a", "b"]]}), lists)
    assert "'tags'" in _refused([lists], tmp_path).message
    deep = tmp_path / "deep.parquet"
    pq.write_table(pa.table({"id": [1], "c": [{"address": {"city": "Seoul"}}]}), deep)
    err = _refused([deep], tmp_path)
    assert "'c.address'" in err.message and f"depth {MAX_NESTING + 1}" in err.message


def test_json_wider_than_the_column_cap_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "wide.jsonl", "\n".join(json.dumps({f"k{i}": i}) for i in range(12)))
    assert "over the cap of 10 columns" in _refused([path], tmp_path, max_columns=10).message


def test_binary_parquet_cells_that_are_not_text_name_the_column(tmp_path: Path) -> None:
    path = tmp_path / "blob.parquet"
    pq.write_table(pa.table({"id": [1, 2], "raw": pa.array([b"\xff\xfe", b"ok"], pa.binary())}), path)
    assert "column 'raw' holds binary data" in _refused([path], tmp_path).message


def test_binary_sqlite_cells_that_are_not_text_name_the_table_and_column(tmp_path: Path) -> None:
    db = _execute(tmp_path / "blob.sqlite", "CREATE TABLE files (id, raw)", "INSERT INTO files VALUES (1, x'fffe')")
    assert "table 'files' column 'raw' holds binary data" in _refused([db], tmp_path).message


def test_the_unsupported_type_error_lists_every_source(tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as info:
        check_extension(tmp_path / "x.txt")
    for suffix in (".csv", ".xlsx", ".parquet", ".json", ".jsonl", ".sqlite", ".db"):
        assert suffix in info.value.fix
    assert "export other formats to CSV first" not in info.value.fix.replace("CSV or Parquet", "")


# ------------------------------------------------------------------------------------------ column definitions

DEFINITIONS = [{"column_name": "qty", "column_desc": "Units sold (unit: count)"}]


def test_column_definitions_are_recognised_by_content_and_never_read_as_data(tmp_path: Path) -> None:
    data = write_csv(tmp_path / "x.csv", rows())
    defs = _write(tmp_path / "my_columns.json", json.dumps(DEFINITIONS))
    files, columns = resolve_inputs([data, defs], None)
    assert files == [data] and columns == defs
    err = _refused([defs], tmp_path)  # passed as data anyway (the API): refused, not profiled as a table
    assert "holds column definitions" in err.message and "--columns" in err.fix


def test_a_folder_of_new_sources_is_several_inputs_with_its_definitions(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    pd.DataFrame({"region": ["a", "b"], "qty": [1, 2]}).to_parquet(folder / "b.parquet")
    _write(folder / "a.jsonl", '{"region": "a", "qty": 1}\n{"region": "b", "qty": 2}\n')
    _write(folder / "defs.json", json.dumps(DEFINITIONS))
    _write(folder / "Thumbs.db", "not a database")  # Windows' thumbnail cache: not data
    files, columns = resolve_inputs([folder], None)
    assert [f.name for f in files] == ["a.jsonl", "b.parquet"]
    assert columns == folder / "defs.json"
    profile = ingest(files, tmp_path / "job", columns_file=columns)
    assert [t.view for t in profile.tables] == ["a", "b"]
    assert profile.table("a").column("qty").description == "Units sold (unit: count)"


def test_a_json_array_of_records_with_other_keys_is_data(tmp_path: Path) -> None:
    records = [{"column_name": "qty", "column_desc": "Units", "owner": "ops"}]
    path = _write(tmp_path / "catalog.json", json.dumps(records))
    files, columns = resolve_inputs([path], None)
    assert files == [path] and columns is None


def test_a_sqlite_table_with_generated_columns_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "gen.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (a INTEGER, b TEXT GENERATED ALWAYS AS (printf('%.*c', 100000, 'x')) VIRTUAL)")
        conn.executemany("INSERT INTO t (a) VALUES (?)", [(i,) for i in range(50)])
        conn.commit()
    with pytest.raises(BadInputError) as info:
        ingest([path], tmp_path / "job")
    assert "generated columns" in info.value.message and "CREATE TABLE copy AS SELECT" in info.value.fix
