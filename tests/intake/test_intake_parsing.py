"""Parsing and typing edge cases: encodings, delimiters, numbers as text, dates, headers, roles."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import duckdb
import openpyxl
import pandas as pd

from insightloom.intake import DataProfile, ingest

Writer = Callable[[str, bytes], Path]


def _one(path: Path, tmp_path: Path, **kwargs: object) -> tuple[DataProfile, pd.DataFrame]:
    profile = ingest([path], tmp_path / "job", **kwargs)  # type: ignore[arg-type]
    return profile, pd.read_parquet(tmp_path / "job" / profile.tables[0].parquet)


def test_cp949_csv(write_bytes: Writer, tmp_path: Path) -> None:
    text = '지역,매출액\n서울,"1,200"\n부산,800\n대구,500\n'
    profile, frame = _one(write_bytes("매출.csv", text.encode("cp949")), tmp_path)
    assert list(frame.columns) == ["지역", "매출액"]
    assert frame["지역"].tolist() == ["서울", "부산", "대구"]
    assert frame["매출액"].tolist() == [1200, 800, 500]
    assert profile.tables[0].view == "__"
    assert profile.language == "ko"


def test_latin1_fallback(write_bytes: Writer, tmp_path: Path) -> None:
    _, frame = _one(write_bytes("cafe.csv", "name,price\ncafé crème,3\nthé,2\n".encode("latin-1")), tmp_path)
    assert frame["name"].tolist() == ["café crème", "thé"]


def test_semicolon_delimited_with_decimal_comma(write_bytes: Writer, tmp_path: Path) -> None:
    text = "city;amount;share\nBerlin;1.234,5;12,5\nParis;99,0;7,25\nRome;10;3\n"
    _, frame = _one(write_bytes("eu.csv", text.encode()), tmp_path)
    assert list(frame.columns) == ["city", "amount", "share"]
    assert frame["amount"].tolist() == [1234.5, 99.0, 10.0]


def test_semicolon_delimited_plain(write_bytes: Writer, tmp_path: Path) -> None:
    _, frame = _one(write_bytes("s.csv", b"a;b\nx;1\ny;2\n"), tmp_path)
    assert frame["b"].tolist() == [1, 2]


def test_thousands_separators_and_percent_text(write_bytes: Writer, tmp_path: Path) -> None:
    text = 'store,revenue,margin\nA,"1,234,567",12.5%\nB,"2,000",8%\nC,15,10%\n'
    profile, frame = _one(write_bytes("t.csv", text.encode()), tmp_path)
    assert frame["revenue"].dtype == "int64"
    assert frame["revenue"].sum() == 1_236_582
    margin = profile.tables[0].column("margin")
    assert (margin.role, margin.unit, margin.dtype) == ("rate", "%", "float64")


def test_missing_values_nullable_int_reads_in_duckdb(write_bytes: Writer, tmp_path: Path) -> None:
    text = "region,units,price\nN,10,1.5\nS,,2.5\nE,7,\nW,3,NA\n"
    profile, frame = _one(write_bytes("m.csv", text.encode()), tmp_path)
    assert str(frame["units"].dtype) == "Int64"
    assert profile.tables[0].column("units").missing == 1
    assert profile.tables[0].column("price").missing == 2
    parquet = tmp_path / "job" / profile.tables[0].parquet
    con = duckdb.connect()
    kind = con.execute(f"SELECT typeof(units) FROM read_parquet('{parquet}') LIMIT 1").fetchone()[0]
    total, nulls = con.execute(f"SELECT sum(units), count(*) - count(units) FROM read_parquet('{parquet}')").fetchone()
    assert kind == "BIGINT" and total == 20 and nulls == 1


def test_no_date_column_and_only_categorical(write_bytes: Writer, tmp_path: Path) -> None:
    rows = "".join(f"{c},{s}\n" for c, s in [("red", "S"), ("blue", "M"), ("red", "L"), ("green", "M")] * 5)
    profile, frame = _one(write_bytes("cats.csv", ("color,size\n" + rows).encode()), tmp_path)
    roles = {c.name: c.role for c in profile.tables[0].columns}
    assert roles == {"color": "category", "size": "category"}
    top = profile.tables[0].column("color").top_values
    assert top[0] == {"value": "red", "count": 10}
    assert len(frame) == 20


def test_date_formats(write_bytes: Writer, tmp_path: Path) -> None:
    text = "iso,us,day_key,note\n2025-01-31,1/31/25,20250131,x\n2025-02-01,2/1/25,20250201,y\n"
    profile, frame = _one(write_bytes("d.csv", text.encode()), tmp_path)
    expected = [pd.Timestamp("2025-01-31"), pd.Timestamp("2025-02-01")]
    for name in ("iso", "us", "day_key"):
        assert frame[name].tolist() == expected, name
        assert profile.tables[0].column(name).role == "date"
    assert profile.tables[0].column("iso").max == "2025-02-01"


def test_postal_code_with_leading_zeros_stays_text(write_bytes: Writer, tmp_path: Path) -> None:
    rows = "".join(f"{i:05d},{i}\n" for i in range(100, 160))
    profile, frame = _one(write_bytes("z.csv", ("zip,qty\n" + rows).encode()), tmp_path)
    assert frame["zip"].iloc[0] == "00100"
    assert profile.tables[0].column("zip").role == "identifier"


def test_sequential_integer_key_is_identifier(write_bytes: Writer, tmp_path: Path) -> None:
    rows = "".join(f"{1000 + i},{(i * 37) % 11}\n" for i in range(40))
    profile, _ = _one(write_bytes("k.csv", ("order,amount\n" + rows).encode()), tmp_path)
    assert profile.tables[0].column("order").role == "identifier"
    assert profile.tables[0].column("amount").role == "measure"


def test_email_values_detected_without_hint_and_scrubbed(write_bytes: Writer, tmp_path: Path) -> None:
    rows = "".join(f"u{i}@example.com,note for u{i}@example.com,{i}\n" for i in range(30))
    profile, _ = _one(write_bytes("e.csv", ("contact_info,remark,n\n" + rows).encode()), tmp_path)
    table = profile.tables[0]
    assert table.column("contact_info").role == "pii"
    assert "@" not in (tmp_path / "job" / "cache" / "profile.json").read_text()


def test_units_from_column_definitions(write_bytes: Writer, tmp_path: Path) -> None:
    data = write_bytes("u.csv", b"won,usd,other,weight\n1,2,3,4\n5,6,7,8\n")
    defs = write_bytes(
        "column_definitions.json",
        '[{"column_name":"won","column_desc":"금액 (단위: 원)"},{"column_name":"usd","column_desc":"Price in $"},'
        '{"column_name":"other","column_desc":"plain"},{"column_name":"weight","column_desc":"(unit: kg)"}]'.encode(),
    )
    profile, _ = _one(data, tmp_path, columns_file=defs)
    units = {c.name: c.unit for c in profile.tables[0].columns}
    assert units == {"won": "KRW", "usd": "USD", "other": None, "weight": "kg"}
    assert profile.tables[0].column("won").description == "금액 (단위: 원)"


def test_csv_duplicate_and_empty_headers(write_bytes: Writer, tmp_path: Path) -> None:
    _, frame = _one(write_bytes("h.csv", b"a,A,,b,\n1,2,3,4,\n5,6,7,8,\n"), tmp_path)
    assert list(frame.columns) == ["a", "A (2)", "column_3", "b"]


def _xlsx(path: Path, rows: list[list[object]]) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    for row in rows:
        ws.append(row)
    wb.save(path)
    return path


def test_single_header_xlsx_with_excel_dates(tmp_path: Path) -> None:
    rows = [["Order Date", "Region", "Sales"]] + [
        [dt.datetime(2025, 1, d), "North" if d % 2 else "South", d * 100] for d in range(1, 11)
    ]
    profile, frame = _one(_xlsx(tmp_path / "plain.xlsx", rows), tmp_path)
    assert list(frame.columns) == ["Order Date", "Region", "Sales"]
    assert len(frame) == 10
    assert profile.tables[0].column("Order Date").role == "date"
    assert frame["Sales"].dtype == "int64"


def test_grouped_header_xlsx(tmp_path: Path) -> None:
    rows = [
        ["Info", None, "Scores", None, None],
        [None, None, "Math", None, "Art"],
        ["Team", "Size", "Score", "Grade", "Score"],
        ["a", 3, 90, "A", 70],
        ["b", 4, 80, "B", 60],
    ]
    profile, frame = _one(_xlsx(tmp_path / "g.xlsx", rows), tmp_path)
    assert list(frame.columns) == [
        "Info / Team",
        "Info / Size",
        "Scores / Math / Score",
        "Scores / Math / Grade",
        "Scores / Art / Score",
    ]
    assert frame["Scores / Art / Score"].tolist() == [70, 60]
    assert profile.tables[0].rows == 2


def test_xlsx_serial_dates_in_date_column(tmp_path: Path) -> None:
    rows = [["date", "qty"], [45658, 1], [45659, 2]]
    _, frame = _one(_xlsx(tmp_path / "s.xlsx", rows), tmp_path)
    assert frame["date"].tolist() == [pd.Timestamp("2025-01-01"), pd.Timestamp("2025-01-02")]


def test_table_lookup_and_first_view(write_bytes: Writer, tmp_path: Path) -> None:
    profile, _ = _one(write_bytes("Sales 2025.csv", b"a\n1\n"), tmp_path)
    assert profile.first_view == "sales_2025"
    assert profile.table("data") is profile.table("sales_2025")
    assert profile.resolve("data") == "sales_2025"
