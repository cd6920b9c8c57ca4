"""Which reader reads an input file: the one place that maps a file type to its reader."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from insightloom.intake.columnar import ReadLimits
from insightloom.intake.inputs import JSON_SUFFIXES, PARQUET_SUFFIXES, SQLITE_SUFFIXES, XLSX_SUFFIXES
from insightloom.intake.readers import RawTable, read_csv, read_xlsx
from insightloom.intake.readers_json import read_json_table
from insightloom.intake.readers_parquet import read_parquet
from insightloom.intake.readers_sqlite import read_sqlite


def read_source(path: Path, limits: ReadLimits, tables: Sequence[str] = ()) -> list[RawTable]:
    """Every table of one input: one for a CSV, Parquet or JSON file; one per sheet or database table.

    Args:
        path: The job's copy of the input, already vetted by ``inputs.check_file``.
        limits: The caps every reader applies.
        tables: For a SQLite file, the tables to read (``--table``); every table when empty.

    Raises:
        BadInputError: From the reader, naming the file (and sheet or table) and the fix.
    """
    suffix = path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        return read_xlsx(path, cancelled=limits.cancelled, max_columns=limits.max_columns)
    if suffix in PARQUET_SUFFIXES:
        return [read_parquet(path, limits)]
    if suffix in JSON_SUFFIXES:
        return [read_json_table(path, limits)]
    if suffix in SQLITE_SUFFIXES:
        return read_sqlite(path, limits, tables)
    return [read_csv(path)]
