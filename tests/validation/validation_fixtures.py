"""Helpers for validation tests: build a small job folder with pandas, like intake would leave it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from insightloom.validation.jobfiles import write_profile


def sales_frame() -> pd.DataFrame:
    """120 orders over three regions; amounts are whole KRW."""
    regions = ["North", "South", "East"]
    return pd.DataFrame(
        {
            "region": [regions[i % 3] for i in range(120)],
            "amount": [1000 + 37 * i for i in range(120)],
            "date": pd.date_range("2025-01-01", periods=120, freq="D"),
        }
    )


def write_job(job_dir: Path, frame: pd.DataFrame, calcs: list[dict[str, Any]], view: str = "sales") -> Path:
    """Write cache/<view>.parquet, cache/profile.json (with its manifest) and calculation_metadata.json."""
    (job_dir / "cache").mkdir(parents=True, exist_ok=True)
    frame.to_parquet(job_dir / "cache" / f"{view}.parquet", index=False)
    table = {"view": view, "file": f"{view}.csv", "sheet": None, "parquet": f"cache/{view}.parquet"}
    write_profile(job_dir, [table], {"data": view})  # with the manifest (sha256, bytes) intake would record
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": calcs}
    (job_dir / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    return job_dir


def calc(calc_id: str, value: Any, check: str | None = None, importance: str = "high", **extra: Any) -> dict:
    """One calculation_metadata entry with the required fields filled."""
    entry = {
        "id": calc_id,
        "value": value,
        "description": f"Description of {calc_id}",
        "formula": f"formula of {calc_id}",
        "source_file": "sales.csv",
        "source_columns": ["amount"],
        "importance": importance,
    }
    if check is not None:
        entry["check"] = check
    entry.update(extra)
    return entry


def fixture_calcs(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Checked calcs that verify, one tampered value, bad checks of several kinds, and unchecked ones."""
    total = int(frame["amount"].sum())
    north = frame.loc[frame["region"] == "North", "amount"].sum() / total * 100
    return [
        calc("total_revenue", total, "SELECT SUM(amount) FROM data", unit="KRW"),
        calc("order_count", len(frame), "SELECT COUNT(*) FROM sales;", unit="count"),
        calc(
            "north_share",
            round(float(north), 3),
            "SELECT 100.0 * SUM(amount) FILTER (WHERE region = 'North') / SUM(amount) FROM data",
            unit="%",
        ),
        calc("avg_order", float(frame["amount"].mean()), "SELECT AVG(amount) FROM data -- mean"),
        calc("top_region", "East", "SELECT region FROM data GROUP BY region ORDER BY SUM(amount) DESC LIMIT 1"),
        calc("first_day", "2025-01-01", "SELECT MIN(date) FROM data"),
        calc("tampered_total", total + 5, "SELECT SUM(amount) FROM data", unit="KRW"),
        calc("bad_check", 1, "SELECT SUM(no_such_column) FROM data"),
        calc("many_rows", 1, "SELECT amount FROM data"),
        calc("two_columns", 1, "SELECT 1 AS a, 2 AS b FROM data LIMIT 1"),
        calc("no_rows", 1, "SELECT amount FROM data WHERE amount < 0"),
        calc("unchecked_medium", 42, importance="medium"),
        calc("unchecked_low", 7, importance="low"),
    ]
