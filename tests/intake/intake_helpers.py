"""Shared helper for the intake tests: ingest one file into a fresh job and read back its typed Parquet."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pandas as pd

from insightloom.intake import DataProfile, TableProfile, ingest


def ingest_one(path: Path, job: Path) -> tuple[TableProfile, pd.DataFrame]:
    """Ingest ``path`` into ``job`` and return its (only) table profile and the cached frame."""
    profile: DataProfile = ingest([path], job)
    table = profile.tables[0]
    return table, pd.read_parquet(job / table.parquet)


def write_xlsx(path: Path, rows: list[list[object]]) -> Path:
    """A one-sheet workbook holding ``rows``."""
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in rows:
        ws.append(row)
    wb.save(path)
    return path
