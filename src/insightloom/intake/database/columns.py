"""Database columns as Arrow columns: one type per column, decided from the server's type before any row is read.

The type comes from the column's PostgreSQL type (the cursor's description), never from the first rows: a column
whose first chunk is all NULL keeps its type in later chunks, and every chunk of a snapshot has one schema. What
has no Arrow type of its own here (text, UUID, JSON, intervals, arrays, enums) is written as text, which intake then
types as it types a CSV's cells, so a database table and the same table exported to CSV profile alike.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from insightloom.errors import BadInputError

#: PostgreSQL type name → the column kind written.
_KINDS: dict[str, str] = {
    "int2": "int",
    "int4": "int",
    "int8": "int",
    "oid": "int",
    "float4": "float",
    "float8": "float",
    "numeric": "numeric",
    "bool": "bool",
    "date": "date",
    "timestamp": "timestamp",
    "timestamptz": "timestamptz",
}
ARROW_TYPES: dict[str, Any] = {
    "int": pa.int64(),
    "float": pa.float64(),
    "numeric": pa.float64(),  # analysis is in floats; Decimal's exactness past 15 digits is not reported anyway
    "bool": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "text": pa.string(),
}


@dataclass(frozen=True)
class Column:
    """One result column: its name, its server type's name and the kind written."""

    name: str
    type_name: str
    kind: str


def describe(cursor: Any) -> list[Column]:
    """The columns of an executed psycopg cursor, typed from its description (type OIDs)."""
    columns = []
    for item in cursor.description or []:
        info = cursor.adapters.types.get(item.type_code)
        type_name = info.name if info is not None else str(item.type_code)
        columns.append(Column(str(item.name), type_name, _KINDS.get(type_name, "text")))
    return columns


def schema(columns: Sequence[Column], names: Sequence[str]) -> Any:
    """The Arrow schema of the snapshot, with the (unique) names intake uses."""
    return pa.schema([pa.field(name, ARROW_TYPES[col.kind]) for col, name in zip(columns, names, strict=True)])


def to_table(rows: Sequence[Sequence[Any]], columns: Sequence[Column], arrow_schema: Any, where: str) -> Any:
    """One chunk of rows as an Arrow table of ``arrow_schema``.

    Raises:
        BadInputError: A value that does not fit its column's type (a date past year 9999, say), naming the
            column and the fix.
    """
    arrays = []
    for index, col in enumerate(columns):
        values = [row[index] for row in rows]
        try:
            arrays.append(pa.array(_prepared(values, col.kind), type=ARROW_TYPES[col.kind]))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError, TypeError) as exc:
            raise BadInputError(
                f"{where}: column {col.name!r} ({col.type_name}) holds a value intake cannot store "
                f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]}).",
                f'cast or filter it in a --query, e.g. --query "SELECT {col.name}::text AS {col.name}, ... FROM ..."',
            ) from exc
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


def _prepared(values: list[Any], kind: str) -> list[Any]:
    if kind == "numeric":
        return [None if v is None else float(v) for v in values]
    if kind == "text":
        return [None if v is None else _text(v) for v in values]
    return values


def _text(value: Any) -> str:
    """A value with no Arrow type here, as the text a CSV export would hold."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)
