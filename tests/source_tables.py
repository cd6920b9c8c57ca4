"""One table with mixed types, written as CSV and as each other source intake reads (issue 23's "same table")."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import openpyxl
import pyarrow as pa
import pyarrow.parquet as pq

#: Column order as every format keeps it; ``customer.city`` is a nested field in JSON and a struct in Parquet.
COLUMNS = ("order_id", "qty", "unit_price", "order_date", "shipped_at", "region", "comment", "customer.city")
_REGIONS = ("North", "South", "East", "West")
_CITIES = ("Seoul", "Busan", "Incheon")


def rows(n: int = 48) -> list[dict[str, object]]:
    """Ints (an id, a count with gaps), decimals, dates, timestamps, a category, free text and missing values."""
    out = []
    for i in range(n):
        day = dt.date(2024, 1, 1) + dt.timedelta(days=i * 3)
        out.append(
            {
                "order_id": 1001 + i,
                "qty": None if i % 9 == 4 else (i * 7) % 23 + 1,
                "unit_price": None if i % 11 == 6 else round(2.5 + (i * 37 % 100) / 4, 2),
                "order_date": day,
                "shipped_at": dt.datetime(day.year, day.month, day.day, 8 + i % 10, (i * 13) % 60),
                "region": None if i == 10 else _REGIONS[i % 4],
                "comment": None if i % 5 == 0 else f"note {i}: delivery {'late' if i % 3 else 'on time'}",
                "customer.city": None if i % 7 == 3 else _CITIES[i % 3],
            }
        )
    return out


def _text(value: object) -> object:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return value.isoformat() if isinstance(value, dt.date) else value


def write_csv(path: Path, table: list[dict[str, object]]) -> Path:
    lines = [",".join(COLUMNS)]
    lines += [",".join("" if r[c] is None else str(_text(r[c])) for c in COLUMNS) for r in table]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_parquet(path: Path, table: list[dict[str, object]]) -> Path:
    """Typed columns: int64, float64, date32, timestamp, a dictionary-encoded category and a struct."""
    flat = {c: [r[c] for r in table] for c in COLUMNS if c != "customer.city"}
    arrays = {name: pa.array(values) for name, values in flat.items()}
    arrays["region"] = pa.array(flat["region"]).dictionary_encode()
    arrays["customer"] = pa.array([{"city": r["customer.city"]} for r in table])
    pq.write_table(pa.table(arrays), path)
    return path


def _nested(record: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {k: _text(v) for k, v in record.items() if k != "customer.city"}
    out["customer"] = {"city": record["customer.city"]}
    return out


def write_jsonl(path: Path, table: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(_nested(r)) + "\n" for r in table), encoding="utf-8")
    return path


def write_json(path: Path, table: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps([_nested(r) for r in table], indent=1), encoding="utf-8")
    return path


def write_xlsx(path: Path, table: list[dict[str, object]]) -> Path:
    """Two sheets: the table first (``orders``), then a small lookup sheet."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "orders"
    ws.append(list(COLUMNS))
    for r in table:
        ws.append([r[c] for c in COLUMNS])
    lookup = wb.create_sheet("regions")
    lookup.append(["region", "manager"])
    for region in _REGIONS:
        lookup.append([region, f"{region} lead"])
    wb.save(path)
    return path


def write_sqlite(path: Path, table: list[dict[str, object]]) -> Path:
    """Two tables, ``orders`` (the table) and ``regions``, with the types SQLite declares for them."""
    con = sqlite3.connect(path)
    try:
        con.execute(
            "CREATE TABLE orders (order_id INTEGER, qty INTEGER, unit_price REAL, order_date TEXT, shipped_at TEXT, "
            'region TEXT, comment TEXT, "customer.city" TEXT)'
        )
        values = [tuple(_text(r[c]) for c in COLUMNS) for r in table]
        con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)
        con.execute("CREATE TABLE regions (region TEXT, manager TEXT)")
        con.executemany("INSERT INTO regions VALUES (?, ?)", [(r, f"{r} lead") for r in _REGIONS])
        con.commit()
    finally:
        con.close()
    return path
