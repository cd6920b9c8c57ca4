"""Benchmark: the whole intake stage (``ingest()``: decode, typing, Parquet, profile and semantics) beside DuckDB's
``read_csv_auto`` → Parquet on the same file, at 100 thousand, 1 million and 4 million rows.

Each table is generated once, seeded, into a temporary folder: dates, categories, integers, decimals with a
thousands separator in quotes, a text column with some blanks. Per size the two are timed alternately (intake, then
DuckDB, ``--repeats`` times; the medians count), each in a child process of its own, so neither warms the other's
memory and the child's ``ru_maxrss`` is the intake's own peak. DuckDB runs with its default threads.

Last line: ``rows=<n>,... intake_s=<s>,... duckdb_s=<s>,... ratio_max=<max intake/duckdb> peak_rss_mb=<mb>,...
file_mb=<mb>,...``.

Usage: python benchmarks/intake_scale.py [--rows 100000,1000000,4000000] [--repeats 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

_INTAKE = """
import json, resource, sys, time
from pathlib import Path
from insightloom.intake import ingest
started = time.perf_counter()
ingest([Path(sys.argv[1])], Path(sys.argv[2]), max_file_mb=100_000)
seconds = time.perf_counter() - started
print(json.dumps({"s": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
_DUCKDB = """
import json, resource, sys, time
import duckdb
started = time.perf_counter()
duckdb.sql(f"COPY (SELECT * FROM read_csv_auto('{sys.argv[1]}')) TO '{sys.argv[2]}' (FORMAT parquet)")
seconds = time.perf_counter() - started
print(json.dumps({"s": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def make_table(rows: int, path: Path, seed: int = 7) -> None:
    """A sales-like table of ``rows`` rows, written in chunks so that generating 4M rows stays small."""
    rng = np.random.default_rng(seed)
    chunk = 500_000
    start = pd.Timestamp("2020-01-01")
    with path.open("w", encoding="utf-8", newline="") as out:
        for first in range(0, rows, chunk):
            n = min(chunk, rows - first)
            amount = np.round(rng.uniform(10, 25_000, n), 2)
            frame = pd.DataFrame({
                "order_date": (start + pd.to_timedelta(rng.integers(0, 1_500, n), unit="D")).strftime("%Y-%m-%d"),
                "region": rng.choice(["North", "South", "East", "West", "Central"], n),
                "product": rng.choice([f"P{i:03d}" for i in range(120)], n),
                "units": rng.integers(1, 40, n),
                "unit_price": np.round(rng.uniform(0.5, 500, n), 2),
                "amount": [f"{v:,.2f}" for v in amount],  # "1,234.50": quoted, with a thousands separator
                "note": np.where(rng.random(n) < 0.2, "", rng.choice(["promo", "repeat", "new", "gift"], n)),
            })  # fmt: skip
            frame.to_csv(out, index=False, header=first == 0)


def _child(code: str, *args: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(csv: Path, work: Path, repeats: int) -> tuple[float, float, float]:
    """Median intake seconds, median DuckDB seconds and the intake's largest peak RSS (MB)."""
    intake, duck, rss = [], [], []
    for i in range(repeats):
        job = work / f"job_{csv.stem}_{i}"
        got = _child(_INTAKE, str(csv), str(job))
        intake.append(got["s"])
        rss.append(got["rss_mb"])
        shutil.rmtree(job, ignore_errors=True)
        duck.append(_child(_DUCKDB, str(csv), str(work / f"{csv.stem}_{i}.parquet"))["s"])
    return statistics.median(intake), statistics.median(duck), max(rss)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000,4000000", help="table sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=1, help="alternating runs per size (medians count)")
    parser.add_argument("--keep", type=Path, help="generate the tables here and keep them (reused when present)")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.rows.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results = []
        for rows in sizes:
            csv = folder / f"sales_{rows}.csv"
            if not csv.exists():
                make_table(rows, csv)
            mb = csv.stat().st_size / 1e6
            intake_s, duck_s, rss = measure(csv, Path(tmp), args.repeats)
            results.append((rows, intake_s, duck_s, rss, mb))
            print(f"rows={rows} file_mb={mb:.1f} intake_s={intake_s:.2f} duckdb_s={duck_s:.2f} "
                  f"ratio={intake_s / duck_s:.2f} peak_rss_mb={rss:.0f}", flush=True)  # fmt: skip
    print(
        "rows=" + ",".join(str(r[0]) for r in results)
        + " intake_s=" + ",".join(f"{r[1]:.2f}" for r in results)
        + " duckdb_s=" + ",".join(f"{r[2]:.2f}" for r in results)
        + f" ratio_max={max(r[1] / r[2] for r in results):.2f}"
        + " peak_rss_mb=" + ",".join(f"{r[3]:.0f}" for r in results)
        + " file_mb=" + ",".join(f"{r[4]:.0f}" for r in results)
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
