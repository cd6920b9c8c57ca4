"""A tiny job folder for the tracker and standard-analysis tests: one cached table and a hand-written profile.

The profile carries the semantics keys (``aggregation``, ``semantic``, ``unit``, ...) explicitly, so these tests
pin the trackers' behaviour for a given profile, whatever intake infers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from insightloom.analysis_utils import exit_checks, load_calculations, read_results
from insightloom.validation.checks import open_connection
from insightloom.validation.jobfiles import load_views


def make_job(
    folder: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, columns: dict[str, dict[str, Any]],
    **table: Any,
) -> Path:  # fmt: skip
    """Write ``frame`` as view ``sales`` (alias ``data``) with a profile entry per column; point the job dir there."""
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(folder))
    monkeypatch.setattr(exit_checks, "_pending", {})
    (folder / "cache").mkdir(parents=True)
    frame.to_parquet(folder / "cache" / "sales.parquet", index=False)
    cols = [{"name": name, "dtype": str(frame[name].dtype), "distinct": int(frame[name].nunique()),
             "missing": int(frame[name].isna().sum()), **meta} for name, meta in columns.items()]  # fmt: skip
    entry = {"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet", "rows": len(frame),
             "columns": cols, **table}  # fmt: skip
    profile = {"tables": [entry], "aliases": {"data": "sales"}, "language": "en"}
    (folder / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    return folder


def calcs(folder: Path) -> dict[str, dict[str, Any]]:
    """The tracked calculations by id."""
    return {c["id"]: c for c in load_calculations(folder)}


def checked(folder: Path) -> int:
    """How many tracked calculations carry a check."""
    return sum(1 for c in load_calculations(folder) if c.get("check"))


def claims(folder: Path) -> dict[str, dict[str, Any]]:
    """The claim records tracked in the job, by id."""
    return {key: c for key, c in calcs(folder).items() if c.get("kind") == "claim"}


def findings(folder: Path) -> list[str]:
    """Every finding of all_results.txt, in order."""
    return [f for section in read_results(folder / "all_results.txt") for f in section.findings]


def sql_rows(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    """The rows DuckDB returns for ``sql`` over the job's cached views (a claim's test.sql, say)."""
    con = open_connection(load_views(folder))
    try:
        return [tuple(row) for row in con.execute(sql).fetchall()]
    finally:
        con.close()
