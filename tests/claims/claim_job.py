"""A small job folder for the claim tests: one cached table ``sales`` (alias ``data``) and a hand-written profile."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from insightloom.analysis_utils import exit_checks
from insightloom.jobs import JobFolder

BREAKDOWN_SQL = (
    "SELECT 'Region', CAST(Region AS VARCHAR), Revenue FROM sales "
    "UNION ALL SELECT 'Channel', CAST(Channel AS VARCHAR), Revenue FROM sales"
)
TREND_SQL = "SELECT SUM(Revenue) AS v FROM sales GROUP BY date_trunc('month', Date) ORDER BY date_trunc('month', Date)"


def sales_frame(rows: int = 240) -> pd.DataFrame:
    """Revenue driven by Channel (Web sells more), Region irrelevant; Ads vs Leads carried by three extreme rows."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "Date": pd.date_range("2024-01-01", periods=rows, freq="2D"),
            "Region": rng.choice(["North", "South", "East", "West"], rows),
            "Channel": rng.choice(["Web", "Store"], rows),
            "Units": rng.integers(1, 20, rows).astype(float),
            "Revenue": rng.gamma(2.0, 100.0, rows),
        }
    )
    frame.loc[frame["Channel"] == "Web", "Revenue"] += 200.0
    # Ads and Leads are unrelated except for three extreme rows, which alone make r large.
    frame["Ads"] = rng.normal(50.0, 5.0, rows)
    frame["Leads"] = rng.normal(30.0, 3.0, rows)
    frame.loc[:2, ["Ads", "Leads"]] = [[400.0, 300.0], [420.0, 310.0], [410.0, 305.0]]
    return frame


def make_job(folder: Path, monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame | None = None) -> Path:
    """Write the table and profile into ``folder`` and make it the job folder of the helpers."""
    frame = sales_frame() if frame is None else frame
    monkeypatch.setenv("INSIGHTLOOM_JOB_DIR", str(folder))
    monkeypatch.setattr(exit_checks, "_pending", {})
    folder = JobFolder.create(folder.parent, folder).root  # a real job folder: `insightloom verify` opens it
    (folder / "cache").mkdir(parents=True, exist_ok=True)
    frame.to_parquet(folder / "cache" / "sales.parquet", index=False)
    units = {"Revenue": "USD", "Units": "count", "Ads": "count", "Leads": "count"}
    columns = [
        {"name": name, "dtype": str(frame[name].dtype), "role": "measure" if name in units else "dimension",
         "aggregation": "sum" if name in units else "none", "unit": units.get(name)}
        for name in frame.columns
    ]  # fmt: skip
    entry = {"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet", "rows": len(frame),
             "columns": columns}  # fmt: skip
    profile = {"tables": [entry], "aliases": {"data": "sales"}, "language": "en"}
    (folder / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    return folder
