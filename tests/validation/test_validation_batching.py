"""Checks run batched on one connection: count DuckDB executes, not seconds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest
from validation_fixtures import calc, write_job

from insightloom.validation import validate_job


class CountingConnection:
    """Wraps a DuckDB connection and counts ``execute`` calls."""

    def __init__(self) -> None:
        self.inner = duckdb.connect()
        self.executes = 0

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self.executes += 1
        return self.inner.execute(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def big_job(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], pd.DataFrame]:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "amount": rng.integers(100, 10_000, 100_000),
            "cat": rng.choice([f"c{i}" for i in range(40)], 100_000),
        }
    )
    sums = frame.groupby("cat")["amount"].sum()
    calcs = []
    for i in range(1000):
        cat = f"c{i % 40}"
        if i % 2:
            calcs.append(calc(f"sum_{i}", int(sums[cat]), f"SELECT SUM(amount) FROM data WHERE cat = '{cat}'"))
        else:
            count = int((frame["amount"] > i).sum())
            calcs.append(calc(f"count_{i}", count, f"SELECT COUNT(*) FROM sales WHERE amount > {i}", unit="count"))
    return tmp_path / "job", calcs, frame


def test_thousand_checks_run_in_a_handful_of_queries(big_job) -> None:
    job, calcs, frame = big_job
    write_job(job, frame, calcs)
    counter = CountingConnection()
    summary = validate_job(job, connection_factory=lambda: counter)
    assert len(summary.verified) == 1000 and not summary.needs_review
    distinct = len({c["check"] for c in calcs})  # 520: identical checks run once
    assert summary.queries == -(-distinct // 200)  # in chunks of 200
    assert counter.executes <= summary.queries + 1  # plus one for all setup


def test_one_bad_check_names_itself_and_costs_few_queries(big_job) -> None:
    job, calcs, frame = big_job
    calcs[537]["check"] = "SELECT SUM(amount) FROM no_such_view"
    write_job(job, frame, calcs)
    counter = CountingConnection()
    summary = validate_job(job, connection_factory=lambda: counter)
    assert summary.needs_review == [calcs[537]["id"]]
    assert "no_such_view" in summary.reasons[calcs[537]["id"]]
    assert len(summary.verified) == 999
    assert counter.executes <= 25  # bisection, not 200 one-by-one queries


class RecordingConnection(CountingConnection):
    """Also keeps the SQL of every execute, to see how the tables were set up."""

    def __init__(self) -> None:
        super().__init__()
        self.sql: list[str] = []

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self.sql.append(str(args[0]) if args else "")
        return super().execute(*args, **kwargs)


def _first_rows_job(tmp_path: Path, checks: int) -> tuple[Path, pd.DataFrame]:
    frame = pd.DataFrame({"amount": [907, 13, 55, 2, 400], "cat": ["z", "a", "m", "a", "z"]})
    calcs = [calc("first_amount", 907, "SELECT amount FROM data LIMIT 1")]  # depends on the file's row order
    calcs += [calc(f"n_{i}", int((frame["amount"] > i).sum()), f"SELECT COUNT(*) FROM sales WHERE amount > {i}")
              for i in range(checks - 1)]  # fmt: skip
    return write_job(tmp_path / "job", frame, calcs), frame


def test_a_table_most_checks_use_is_loaded_into_memory_in_file_order(tmp_path: Path) -> None:
    job, _ = _first_rows_job(tmp_path, 8)
    recorder = RecordingConnection()
    summary = validate_job(job, connection_factory=lambda: recorder)
    assert len(summary.verified) == 8 and not summary.needs_review
    setup = recorder.sql[0]
    assert 'CREATE OR REPLACE TABLE "sales"' in setup
    assert 'CREATE OR REPLACE VIEW "data" AS SELECT * FROM "sales"' in setup  # the alias reads the loaded table
    assert "CHECKPOINT" not in setup and setup.rstrip().endswith("SET lock_configuration = true")


def test_hundreds_of_checks_also_compress_the_loaded_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from insightloom.validation import checks

    monkeypatch.setattr(checks, "CHECKPOINT_MIN_CHECKS", 8)
    job, _ = _first_rows_job(tmp_path, 8)
    recorder = RecordingConnection()
    assert len(validate_job(job, connection_factory=lambda: recorder).verified) == 8
    assert "CHECKPOINT" in recorder.sql[0]


def test_a_table_few_checks_use_stays_in_memory_parquet_and_no_file_is_named(tmp_path: Path) -> None:
    job, _ = _first_rows_job(tmp_path, 2)
    recorder = RecordingConnection()
    assert len(validate_job(job, connection_factory=lambda: recorder).verified) == 2
    setup = recorder.sql[0]
    assert "CREATE OR REPLACE TABLE" not in setup and 'AS SELECT * FROM "__parquet_0"' in setup
    assert "read_parquet" not in setup and str(job) not in setup  # DuckDB is given bytes, never a path


def test_loaded_tables_still_cannot_reach_other_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n5\n", encoding="utf-8")
    job, frame = _first_rows_job(tmp_path, 8)
    calcs = json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]
    calcs.append(calc("sneaky", 5, f"SELECT SUM(a) FROM read_csv('{secret}')"))
    write_job(job, frame, calcs)
    summary = validate_job(job)
    assert summary.needs_review == ["sneaky"] and len(summary.verified) == 8
