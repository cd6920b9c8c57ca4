"""Two related tables for the join tests: orders (one row per order) and customers (one row per customer).

``C9`` has no customer, so the foreign key ``orders.customer_id -> customers.customer_id`` matches 9 of 10 rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from insightloom.analysis_utils import exit_checks
from insightloom.intake import ingest

CUSTOMERS = pd.DataFrame({"customer_id": ["C1", "C2", "C3", "C4"], "segment": ["Consumer", "Corporate", "Consumer",
                          "Home Office"], "region": ["East", "West", "East", "North"]})  # fmt: skip
ORDERS = pd.DataFrame({"order_id": range(1, 11), "customer_id": ["C1", "C2", "C3", "C1", "C4", "C2", "C9", "C3",
                       "C1", "C4"], "amount": [10.0, 20.5, 5.25, 7.0, 30.0, 1.5, 99.0, 4.0, 8.0, 2.0]})  # fmt: skip


def write_csvs(folder: Path, **frames: pd.DataFrame) -> list[Path]:
    """Write each frame as ``<name>.csv`` in ``folder``, in the order given."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in frames.items():
        frame.to_csv(folder / f"{name}.csv", index=False)
        paths.append(folder / f"{name}.csv")
    return paths


def related_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **frames: pd.DataFrame) -> Path:
    """Ingest the frames into ``tmp_path/job`` and point the job dir there (no checks pending)."""
    job = tmp_path / "job"
    ingest(write_csvs(tmp_path / "in", **frames), job)
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(job))
    monkeypatch.setattr(exit_checks, "_pending", {})
    return job
