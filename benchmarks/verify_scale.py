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


def _checks(i: int, category: str, level: int) -> tuple[str, str | None]:
    """The i-th check (four kinds: total, average, count and share, each with its own filter) and its unit."""
    where = f"category = '{category}'"
    kind = i % 4
    if kind == 0:
        return f"SELECT SUM(amount) FROM data WHERE {where} AND quantity >= {level}", "KRW"
    if kind == 1:
        return f"SELECT AVG(amount) FROM sales WHERE {where} AND quantity <= {level}", None
    if kind == 2:
        return f"SELECT COUNT(*) FROM data WHERE {where} AND quantity = {level}", "count"
    share = f"100.0 * SUM(amount) FILTER (WHERE {where} AND quantity >= {level}) / SUM(amount)"
    return f"SELECT {share} FROM sales", "%"


def _expected(i: int, category: str, level: int, cells: pd.DataFrame, grand_total: int) -> float | int:
    """The same value from pandas, via a small (category, quantity) aggregate so building 1,000 stays fast."""
    part = cells.loc[category]
    kind = i % 4
    if kind == 0:
        return int(part.loc[part.index >= level, "total"].sum())
    if kind == 1:
        low = part.loc[part.index <= level]
        return float(low["total"].sum() / low["rows"].sum())
    if kind == 2:
        return int(part["rows"].get(level, 0))
    return float(100.0 * part.loc[part.index >= level, "total"].sum() / grand_total)


def build_job(job: Path, rows: int, calcs: int) -> None:
    """Write a rows-long sales table and ``calcs`` distinct calculations whose checks all verify.

    Every check is different (kind x category x quantity level), as in a real report: identical checks would run
    once and flatter the figure.
    """
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
    profile = {
        "tables": [{"view": "sales", "file": "sales.csv", "parquet": "cache/sales.parquet"}],
        "aliases": {"data": "sales"},
    }
    (job / "cache" / "profile.json").write_text(json.dumps(profile), encoding="utf-8")
    cells = frame.groupby(["category", "quantity"])["amount"].agg(total="sum", rows="size")
    grand_total = int(frame["amount"].sum())
    entries = []
    for i in range(calcs):
        # i = 200 * level_index + 4 * category_index + kind, so (kind, category, level) never repeats below 3,800.
        category, level = categories[(i // 4) % len(categories)], (i // 200) % 19 + 1
        check, unit = _checks(i, category, level)
        entries.append(
            {
                "id": f"calc_{i}",
                "value": _expected(i, category, level, cells, grand_total),
                "description": f"metric {i} for {category}",
                "formula": check,
                "source_file": "sales.csv",
                "source_columns": ["category", "amount", "quantity"],
                "importance": "medium",
                "check": check,
                "unit": unit,
            }
        )
    metadata = {"generated_at": "2025-01-01T00:00:00Z", "calculations": entries}
    (job / "calculation_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")


def calcs_of(job: Path) -> list[dict]:
    """The calculations the benchmark wrote (to report how many distinct checks ran)."""
    return json.loads((job / "calculation_metadata.json").read_text(encoding="utf-8"))["calculations"]


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
        print(f"distinct checks: {len({c['check'] for c in calcs_of(job)})}, check queries: {summary.queries}")
    print(f"verified={len(summary.verified)} seconds={seconds:.2f}")
    return 0 if len(summary.verified) == args.calcs else 1


if __name__ == "__main__":
    sys.exit(main())
