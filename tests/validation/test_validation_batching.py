"""Checks run batched on one connection: count DuckDB executes, not seconds."""

from __future__ import annotations

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
    assert summary.queries == 5  # 1,000 checks in chunks of 200
    assert counter.executes <= 6  # plus one for all view setup


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
