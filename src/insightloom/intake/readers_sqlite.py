"""Read the tables of a SQLite file (``.sqlite``, ``.db``) into raw tables of text cells, one per table.

The file is treated as hostile. It is opened read-only and immutable (no journal, WAL or lock file is looked for
beside it), with ``trusted_schema`` off, no database may be attached, and an authorizer that allows only reading.
Only ordinary tables are read, never views or virtual tables, whose definitions could run queries of any cost or
reach other files. Rows are fetched in batches under the same size cap as every source (``columnar``).
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from insightloom.errors import BadInputError
from insightloom.intake.columnar import BATCH_ROWS, ReadLimits, TextColumns
from insightloom.intake.readers import RawTable

logger = logging.getLogger(__name__)

#: What the authorizer lets a statement do: read tables and columns, and call functions (count).
_ALLOWED = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION})
_TABLES_SQL = (
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
    "AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
)
#: A generated column is computed as it is read, so a tiny file could yield gigabytes (printf, zeroblob): such a table
#: is refused, naming the fix. Its CREATE statement says so: ``GENERATED ALWAYS AS (...)`` or the short ``AS (...)``.
_GENERATED = re.compile(r"\bgenerated\s+always\b|\bas\s*\(", re.IGNORECASE)
#: The longest value SQLite may build while reading (a cell over readers.MAX_CELL_CHARS is refused anyway).
MAX_VALUE_BYTES = 4 * 1024 * 1024
_UNREADABLE_FIX = (
    "check that it is a SQLite database and not damaged (sqlite3 x.db 'PRAGMA integrity_check'), or export its "
    "tables as CSV."
)


def read_sqlite(path: Path, limits: ReadLimits, tables: Sequence[str] = ()) -> list[RawTable]:
    """Read every table of the database (sorted by name), or only ``tables`` in the order given.

    Tables with no rows are skipped with a warning, unless they were named.

    Raises:
        BadInputError: Not a readable database, no tables, a named table it does not have, a named table with no
            rows, no table with rows, or a table over the columns or size caps.
    """
    try:
        with closing(_connect(path)) as conn:
            present = [str(row[0]) for row in conn.execute(_TABLES_SQL)]
            if not present:
                raise BadInputError(
                    f"{path}: the database has no tables.",
                    fix="pass the database that holds the data (an empty or new file has no tables).",
                )
            chosen = _chosen(path, present, tables)
            raws = [raw for name in chosen if (raw := _read_table(conn, path, name, limits, named=bool(tables)))]
    except sqlite3.Error as exc:
        detail = f"{type(exc).__name__}: {exc}"
        raise BadInputError(f"{path}: cannot read the database ({detail}).", _UNREADABLE_FIX) from exc
    if not raws:
        raise BadInputError(f"{path}: no table has rows.", fix="check that the data is in the database.")
    return raws


def _connect(path: Path) -> sqlite3.Connection:
    # as_uri() percent-encodes the path, so a '?' or '#' in a file name is no URI parameter.
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    conn.execute("PRAGMA trusted_schema = OFF")  # functions in the schema (generated columns) only if harmless
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.set_authorizer(lambda action, *_: sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY)
    return conn


def _chosen(path: Path, present: list[str], tables: Sequence[str]) -> list[str]:
    """The tables to read: all, or the named ones, matched as SQLite matches names (ignoring ASCII case)."""
    if not tables:
        return present
    by_name = {name.lower(): name for name in present}
    missing = [name for name in tables if name.lower() not in by_name]
    if missing:
        raise BadInputError(
            f"{path}: has no table {', '.join(repr(m) for m in missing)}; its tables: {', '.join(present)}.",
            fix="name tables it has with --table (each --table applies to every SQLite input), or leave --table "
            "out to read every table.",
        )
    return list(dict.fromkeys(by_name[name.lower()] for name in tables))


def _read_table(conn: sqlite3.Connection, path: Path, name: str, limits: ReadLimits, *, named: bool) -> RawTable | None:
    created = conn.execute("SELECT coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    if _GENERATED.search(str(next(iter(created), ("",))[0])):
        raise BadInputError(
            f"{path}: table {name!r} has generated columns, which SQLite computes as they are read.",
            fix=f"store the values instead (CREATE TABLE copy AS SELECT * FROM {name}), export the table as CSV, "
            "or leave it out with --table.",
        )
    quoted = '"' + name.replace('"', '""') + '"'
    cursor = conn.execute(f"SELECT * FROM {quoted}")  # a quoted identifier from the file's own schema
    header = [str(d[0]) for d in cursor.description]
    columns = TextColumns(path, limits, table=name)
    while rows := cursor.fetchmany(BATCH_ROWS):
        cells = list(zip(*rows, strict=True))
        columns.add({h: list(values) for h, values in zip(header, cells, strict=True)}, len(rows))
    if not columns.rows:
        if named:
            raise BadInputError(f"{path}: table {name!r} has no rows.", fix="name a table that holds the data.")
        logger.warning("%s table %r has no rows; skipped", path.name, name)
        return None
    return columns.raw_table()
