"""A small synthetic sales table for tests that need a quick, realistic job (date, categories, measures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_small_sales_csv(path: Path, *, rows: int = 90, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "date": pd.date_range("2025-01-01", periods=rows, freq="D").strftime("%Y-%m-%d"),
            "region": rng.choice(["North", "South", "East"], rows),
            "channel": rng.choice(["Web", "Store"], rows),
            "units": rng.integers(1, 20, rows),
            "revenue": rng.integers(100, 2000, rows),
        }
    )
    frame.to_csv(path, index=False)
    return path
