"""Benchmark: validate 1,000 checked calculations on a 1M-row table.

Builds a throw-away job folder (Parquet cache, profile, calculation metadata), runs ``validate_job`` once and prints
the result. The last line is exactly ``verified=<n> seconds=<t>`` so scripts can parse it.

Usage: python benchmarks/verify_scale.py [--rows 1000000] [--calcs 1000]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

_SRC = Path(__file__).resolve().parents[1] / "src"
if importlib.util.find_spec("insightloom") is None:  # run from a checkout without installing
    sys.path.insert(0, str(_SRC))

from insightloom.validation import validate_job  # noqa: E402

logger = logging.getLogger(__name__)


def build_job(job: Path, rows: int, calcs: int) -> None:
    """Write a rows-long sales table and ``calcs`` calculations whose checks all verify."""
    rng = np.random.default_rng(42)
    categories = [f"cat_{i:02d}" for i in range(50)]
    frame = pd.DataFrame(
        {
            "category": rng.choice(categories, rows),
            "amount": rng.integers(100, 100_000, rows),
            "quantity": rng.integers(1, 20, rows),
        }
    )
    (job / "cache").mkdir(parents=True)
    frame.to_parquet(job / "cache" / "sales.parquet", index=False)
    profile = {"tables": [{"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet"}],
               "aliases": {"data": "sales"}}
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    sums = frame.groupby("category")["amount"].sum()
    means = frame.groupby("category")["quantity"].mean()
    counts = frame.groupby("category").size()
    entries = []
    for i in range(calcs):
        cat = categories[i % len(categories)]
        kind = i % 3
        if kind == 0:
            value, check, unit = int(sums[cat]), f"SELECT SUM(amount) FROM data WHERE category = '{cat}'", "KRW"
        elif kind == 1:
            value, check, unit = float(means[cat]), f"SELECT AVG(quantity) FROM data WHERE category = '{cat}'", None
        else:
            value, check, unit = int(counts[cat]), f"SELECT COUNT(*) FROM sales WHERE category = '{cat}'", "count"
        entries.append(
            {
                "id": f"calc_{i}",
                "value": value,
                "description": f"metric {i} for {cat}",
                "formula": check,
                "source_file": "sales.csv",
                "source_columns": ["category", "amount"],
                "importance": "medium",
                "check": check,
                "unit": unit,
            }
        )
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": entries}
    (job / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")


def main() -> int:
    """Build the job, validate it, print the summary and the parseable last line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--calcs", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="insightloom-bench-") as tmp:
        job = Path(tmp) / "job"
        build_job(job, args.rows, args.calcs)
        started = time.perf_counter()
        summary = validate_job(job)
        seconds = time.perf_counter() - started
        print(summary.to_text())
        print(f"check queries: {summary.queries}")
    print(f"verified={len(summary.verified)} seconds={seconds:.2f}")
    return 0 if len(summary.verified) == args.calcs else 1


if __name__ == "__main__":
    sys.exit(main())
